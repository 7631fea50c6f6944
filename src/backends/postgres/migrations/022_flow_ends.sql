-- Flows and batches that finished (issue 29 item 4; docs/workflows.md, "Knowing when a flow or
-- batch finished"). A finish happens inside the database, in the statement that ends a flow's
-- root or a batch's last member (or seals a batch whose members all ended), so no process sees
-- it happen: the triggers append one row to soniq_flow_ends per finish, and the maintenance
-- leader takes the rows in order (soniq.events `flow_finished` / `batch_finished`), adding them
-- to soniq_flow_counts in the statement that deletes them (the Prometheus counters
-- soniq_flows_finished_total / soniq_batches_finished_total, exact across processes). The finishing
-- statements only append (an identity column: no row is shared between them); only the leader
-- writes the counters.
--
-- A batch's node counts its members not ended yet (`members_left`) and those that ended
-- dead-lettered or cancelled (`members_failed`): each member's end counts down under the batch
-- row's lock, so two members ending at once on two workers finish the batch exactly once — when
-- the row is sealed (`pending` 0) and `members_left` reaches 0, whichever comes last.

ALTER TABLE soniq_flow_nodes
  ADD COLUMN members_left   integer NOT NULL DEFAULT 0,
  ADD COLUMN members_failed integer NOT NULL DEFAULT 0;

-- The batches of an earlier version: their members counted as they stand.
UPDATE soniq_flow_nodes AS b SET
  members_left = (SELECT count(*) FROM soniq_flow_nodes AS m JOIN soniq_jobs AS j ON j.id = m.job_id
                  WHERE m.flow_id = b.job_id AND m.role = 'member'),
  members_failed = (SELECT count(*) FROM soniq_flow_nodes AS m
                    WHERE m.flow_id = b.job_id AND m.role = 'member'
                      AND (EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d WHERE d.id = m.job_id)
                           OR EXISTS (SELECT 1 FROM soniq_finished_jobs AS f
                                      WHERE f.id = m.job_id AND f.status = 'cancelled')))
WHERE b.role = 'batch';

CREATE TABLE soniq_flow_ends (
  seq      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- `flow` (id: its root's) or `batch`.
  kind     text        NOT NULL CHECK (kind IN ('flow', 'batch')),
  id       uuid        NOT NULL,
  -- A flow: its root's end, `done`, `failed` (dead-lettered) or `cancelled`; a batch:
  -- `succeeded` (every member done) or `failed` (one dead-lettered or cancelled).
  outcome  text        NOT NULL,
  ended_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE soniq_flow_counts (
  kind    text   NOT NULL,
  outcome text   NOT NULL,
  n       bigint NOT NULL,
  CONSTRAINT soniq_flow_counts_pkey PRIMARY KEY (kind, outcome)
);

-- Migration 019's statement trigger, with two more steps before the edges: the members that
-- ended count down their batch's row (batch rows locked in id order, before any callback's row,
-- as a seal and an add lock them: no lock cycle), and a flow's root that ended is its flow's end.
CREATE OR REPLACE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  e record;
  dead constant boolean := TG_TABLE_NAME = 'soniq_dead_letter_jobs';
BEGIN
  IF dead THEN
    FOR e IN
      SELECT f.flow_id, count(*)::int AS n FROM ended AS n JOIN soniq_flow_nodes AS f
        ON f.job_id = n.id AND f.role = 'member'
      GROUP BY f.flow_id ORDER BY f.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.n
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', n.id, 'failed' FROM ended AS n JOIN soniq_flow_nodes AS f
      ON f.job_id = n.id AND f.flow_id = n.id AND f.role = 'job'
    ORDER BY n.id;
    FOR e IN
      SELECT d.job_id, d.dep_id FROM ended AS n JOIN soniq_job_deps AS d ON d.dep_id = n.id
      WHERE d.dep_state IS NULL ORDER BY d.job_id, d.dep_id
    LOOP
      UPDATE soniq_job_deps SET dep_state = 'dead'
      WHERE job_id = e.job_id AND dep_id = e.dep_id AND dep_state IS NULL;
    END LOOP;
  ELSE
    FOR e IN
      SELECT f.flow_id, count(*)::int AS n,
        count(*) FILTER (WHERE n.status <> 'done')::int AS failed
      FROM ended AS n JOIN soniq_flow_nodes AS f ON f.job_id = n.id AND f.role = 'member'
      GROUP BY f.flow_id ORDER BY f.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.failed
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', n.id, CASE WHEN n.status = 'done' THEN 'done' ELSE 'cancelled' END
    FROM ended AS n JOIN soniq_flow_nodes AS f
      ON f.job_id = n.id AND f.flow_id = n.id AND f.role = 'job'
    ORDER BY n.id;
    FOR e IN
      SELECT d.job_id, d.dep_id, n.status, n.result::text AS result
      FROM ended AS n JOIN soniq_job_deps AS d ON d.dep_id = n.id
      WHERE d.dep_state IS NULL ORDER BY d.job_id, d.dep_id
    LOOP
      UPDATE soniq_job_deps SET dep_state = e.status, dep_result = e.result::json
      WHERE job_id = e.job_id AND dep_id = e.dep_id AND dep_state IS NULL;
    END LOOP;
  END IF;
  RETURN NULL;
END;
$$;

-- Row trigger on a batch's node: it is sealed and its last member ended (either change last).
CREATE FUNCTION soniq_batch_finished() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome)
  VALUES ('batch', NEW.job_id, CASE WHEN NEW.members_failed > 0 THEN 'failed' ELSE 'succeeded' END);
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_batch_finished AFTER UPDATE OF pending, members_left ON soniq_flow_nodes
  FOR EACH ROW WHEN (NEW.role = 'batch' AND NEW.pending = 0 AND NEW.members_left = 0
                     AND (OLD.pending <> 0 OR OLD.members_left <> 0))
  EXECUTE FUNCTION soniq_batch_finished();

-- Row trigger on soniq_dead_letter_jobs: a replayed member (back in soniq_jobs) is pending again
-- in its batch, and no longer failed; its next end finishes the batch again.
CREATE FUNCTION soniq_batch_rearm() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id) THEN
    UPDATE soniq_flow_nodes AS b SET members_left = b.members_left + 1,
      members_failed = GREATEST(b.members_failed - 1, 0)
    FROM soniq_flow_nodes AS m
    WHERE m.job_id = OLD.id AND m.role = 'member' AND b.job_id = m.flow_id AND b.role = 'batch';
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_batch_rearm AFTER DELETE ON soniq_dead_letter_jobs
  FOR EACH ROW EXECUTE FUNCTION soniq_batch_rearm();
