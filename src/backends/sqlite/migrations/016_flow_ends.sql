-- Flows and batches that finished: the same model as PostgreSQL's migration 022 (read its
-- comment). The triggers append a row to soniq_flow_ends per finish (a flow's root ended; a
-- sealed batch's last member ended, or a batch whose members all ended was sealed); the
-- maintenance leader takes them in order for its events and adds them to soniq_flow_counts.

ALTER TABLE soniq_flow_nodes ADD COLUMN members_left INTEGER NOT NULL DEFAULT 0;
ALTER TABLE soniq_flow_nodes ADD COLUMN members_failed INTEGER NOT NULL DEFAULT 0;

UPDATE soniq_flow_nodes SET
  members_left = (SELECT count(*) FROM soniq_flow_nodes AS m JOIN soniq_jobs AS j ON j.id = m.job_id
                  WHERE m.flow_id = soniq_flow_nodes.job_id AND m.role = 'member'),
  members_failed = (SELECT count(*) FROM soniq_flow_nodes AS m
                    WHERE m.flow_id = soniq_flow_nodes.job_id AND m.role = 'member'
                      AND (EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d WHERE d.id = m.job_id)
                           OR EXISTS (SELECT 1 FROM soniq_finished_jobs AS f
                                      WHERE f.id = m.job_id AND f.status = 'cancelled')))
WHERE role = 'batch';

CREATE TABLE soniq_flow_ends (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  kind     TEXT    NOT NULL CHECK (kind IN ('flow', 'batch')),
  id       TEXT    NOT NULL,
  outcome  TEXT    NOT NULL,
  ended_at INTEGER NOT NULL
) STRICT;

CREATE TABLE soniq_flow_counts (
  kind    TEXT    NOT NULL,
  outcome TEXT    NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (kind, outcome)
) STRICT;

-- A flow's root ended: done or cancelled, or dead-lettered (failed).
CREATE TRIGGER soniq_flow_root_finished AFTER INSERT ON soniq_finished_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes
             WHERE job_id = NEW.id AND flow_id = NEW.id AND role = 'job')
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  VALUES ('flow', NEW.id, CASE WHEN NEW.status = 'done' THEN 'done' ELSE 'cancelled' END,
          CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER));
END;

CREATE TRIGGER soniq_flow_root_dead AFTER INSERT ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes
             WHERE job_id = NEW.id AND flow_id = NEW.id AND role = 'job')
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  VALUES ('flow', NEW.id, 'failed', CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER));
END;

-- A batch's member ended: counted down on its batch's row.
CREATE TRIGGER soniq_batch_member_finished AFTER INSERT ON soniq_finished_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.id AND role = 'member')
BEGIN
  UPDATE soniq_flow_nodes SET members_left = members_left - 1,
    members_failed = members_failed + (NEW.status <> 'done')
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = NEW.id);
END;

CREATE TRIGGER soniq_batch_member_dead AFTER INSERT ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.id AND role = 'member')
BEGIN
  UPDATE soniq_flow_nodes SET members_left = members_left - 1,
    members_failed = members_failed + 1
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = NEW.id);
END;

-- A batch is sealed and its last member ended (either change last).
CREATE TRIGGER soniq_batch_finished AFTER UPDATE OF pending, members_left ON soniq_flow_nodes
WHEN NEW.role = 'batch' AND NEW.pending = 0 AND NEW.members_left = 0
  AND (OLD.pending <> 0 OR OLD.members_left <> 0)
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  VALUES ('batch', NEW.job_id, CASE WHEN NEW.members_failed > 0 THEN 'failed' ELSE 'succeeded' END,
          CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER));
END;

-- A replayed member is pending again in its batch, and no longer failed.
CREATE TRIGGER soniq_batch_rearm AFTER DELETE ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id)
  AND EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = OLD.id AND role = 'member')
BEGIN
  UPDATE soniq_flow_nodes SET members_left = members_left + 1,
    members_failed = max(members_failed - 1, 0)
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = OLD.id);
END;
