-- Workflows (issue 29; docs/workflows.md): jobs that wait for other jobs. The same model as
-- PostgreSQL's migration 019 (read its comment): a dependant is a queued row due at the waiting
-- instant (9999-12-31T23:59:59.999Z, 253402300799999 ms), soniq_flow_nodes and soniq_job_deps keep
-- its release time, its pending count and each edge's end. Triggers end the edges when a job
-- lands in soniq_finished_jobs or soniq_dead_letter_jobs (every finishing path writes one of them
-- before it deletes the live row, in the same transaction), settle each dependant, and re-arm on
-- a replay. A cascade (a dependant dead-lettered in turn ends its own edges) needs
-- `PRAGMA recursive_triggers = ON`, which every Soniq connection sets. Times are SQLite's clock.

CREATE TABLE soniq_flow_nodes (
  job_id      TEXT    NOT NULL PRIMARY KEY,
  flow_id     TEXT,
  run_at      INTEGER,
  pending     INTEGER NOT NULL DEFAULT 0,
  retention_ms INTEGER NOT NULL DEFAULT 0,
  role        TEXT    NOT NULL DEFAULT 'job'
              CHECK (role IN ('job', 'member', 'batch', 'on_complete', 'on_success', 'on_failure')),
  created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX soniq_flow_nodes_flow ON soniq_flow_nodes (flow_id) WHERE flow_id IS NOT NULL;

CREATE TABLE soniq_job_deps (
  job_id     TEXT NOT NULL,
  dep_id     TEXT NOT NULL,
  on_failure TEXT NOT NULL DEFAULT 'fail' CHECK (on_failure IN ('fail', 'ignore', 'cancel')),
  dep_state  TEXT CHECK (dep_state IN ('done', 'cancelled', 'dead')),
  dep_result TEXT,
  PRIMARY KEY (job_id, dep_id)
) STRICT;
CREATE INDEX soniq_job_deps_dep ON soniq_job_deps (dep_id);

CREATE TRIGGER soniq_flow_finished AFTER INSERT ON soniq_finished_jobs
WHEN EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = NEW.id AND dep_state IS NULL)
BEGIN
  UPDATE soniq_job_deps SET dep_state = NEW.status, dep_result = NEW.result
  WHERE dep_id = NEW.id AND dep_state IS NULL;
END;

CREATE TRIGGER soniq_flow_dead AFTER INSERT ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = NEW.id AND dep_state IS NULL)
BEGIN
  UPDATE soniq_job_deps SET dep_state = 'dead' WHERE dep_id = NEW.id AND dep_state IS NULL;
END;

-- A good end (or an ignored failure): count down; the last one makes the dependant due.
CREATE TRIGGER soniq_flow_release AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IS NOT NULL
  AND (NEW.dep_state = 'done' OR NEW.on_failure = 'ignore')
BEGIN
  UPDATE soniq_flow_nodes SET pending = pending - 1 WHERE job_id = NEW.job_id;
  UPDATE soniq_jobs
  SET scheduled_at = COALESCE((SELECT run_at FROM soniq_flow_nodes WHERE job_id = NEW.job_id),
                              CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)),
      updated_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND (SELECT pending FROM soniq_flow_nodes WHERE job_id = NEW.job_id) <= 0
    AND NOT (EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.job_id AND role = 'on_failure')
             AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                             AND dep_state IN ('cancelled', 'dead')));
  -- A batch's onFailure callback whose members all ended done: cancelled, never run.
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'cancelled', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000, 0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999 AND (SELECT pending FROM soniq_flow_nodes WHERE job_id = NEW.job_id) <= 0
    AND EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.job_id AND role = 'on_failure')
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                    AND dep_state IN ('cancelled', 'dead'))
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), worker_id, claim_token,
    'every member of the batch ended done', NULL, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) + COALESCE((SELECT max(retention_ms, 0) FROM soniq_flow_nodes WHERE job_id = NEW.job_id), 0),
    dedup_key, meta, start_known, uncharged_recoveries, trace_context, version
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999 AND (SELECT pending FROM soniq_flow_nodes WHERE job_id = NEW.job_id) <= 0
    AND EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.job_id AND role = 'on_failure')
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                    AND dep_state IN ('cancelled', 'dead'));
  DELETE FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND EXISTS (SELECT 1 FROM soniq_finished_jobs WHERE id = NEW.job_id);
END;

-- A failure under `fail`: the waiting dependant moves to the dead-letter queue.
CREATE TRIGGER soniq_flow_fail AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IN ('cancelled', 'dead') AND NEW.on_failure = 'fail'
BEGIN
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'dead', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000, 0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  DELETE FROM soniq_dedup_keys WHERE job_id = NEW.job_id AND dedup_key = (
    SELECT dedup_key FROM soniq_jobs
    WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999);
  INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts, max_attempts,
    interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
    claim_token, last_error, dedup_key, reason, dead_at, version)
  SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at, finished_at, worker_id,
    claim_token, 'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state, dedup_key,
    'dependency_failed', CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), version
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
  DELETE FROM soniq_jobs
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
END;

-- A failure under `cancel`: the waiting dependant is cancelled (kept for its retention).
CREATE TRIGGER soniq_flow_cancel AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IN ('cancelled', 'dead') AND NEW.on_failure = 'cancel'
BEGIN
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'cancelled', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000,
    0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  UPDATE soniq_dedup_keys
  SET held_until = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
    + COALESCE((SELECT max(retention_ms, 0) FROM soniq_flow_nodes WHERE job_id = NEW.job_id), 0)
  WHERE job_id = NEW.job_id AND dedup_key = (
    SELECT dedup_key FROM soniq_jobs
    WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999);
  INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), worker_id, claim_token,
    'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state, NULL,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
      + COALESCE((SELECT max(retention_ms, 0) FROM soniq_flow_nodes WHERE job_id = NEW.job_id), 0),
    dedup_key, meta, start_known, uncharged_recoveries, trace_context, version
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
  DELETE FROM soniq_jobs
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
END;

-- A replay (the entry left the DLQ and is live again): re-arm its edges and bring back the
-- dependants dead-lettered for it (migration 019's soniq_flow_rearm).
CREATE TRIGGER soniq_flow_rearm AFTER DELETE ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id)
  AND EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = OLD.id)
BEGIN
  UPDATE soniq_flow_nodes SET pending = pending + 1
  WHERE job_id IN (
    SELECT e.job_id FROM soniq_job_deps AS e JOIN soniq_jobs AS j ON j.id = e.job_id
    WHERE e.dep_id = OLD.id AND e.dep_state IS NOT NULL AND e.on_failure = 'ignore'
      AND j.status = 'queued' AND j.scheduled_at = 253402300799999);
  UPDATE soniq_job_deps SET dep_state = NULL, dep_result = NULL
  WHERE dep_id = OLD.id AND dep_state IS NOT NULL;
  UPDATE soniq_flow_nodes
  SET pending = (SELECT count(*) FROM soniq_job_deps AS o
                 WHERE o.job_id = soniq_flow_nodes.job_id AND o.dep_state IS NULL)
  WHERE job_id IN (
    SELECT d.id FROM soniq_job_deps AS e JOIN soniq_dead_letter_jobs AS d ON d.id = e.job_id
    WHERE e.dep_id = OLD.id AND d.reason = 'dependency_failed'
      AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                      WHERE o.job_id = d.id AND o.dep_state IN ('cancelled', 'dead')
                        AND o.on_failure <> 'ignore'));
  INSERT INTO soniq_jobs (id, name, queue, args, status, priority, attempts, max_attempts,
    interruptions, scheduled_at, created_at, updated_at, last_error, dedup_key, version)
  SELECT d.id, d.name, d.queue, d.args, 'queued', d.priority, 0, d.max_attempts, 0,
    253402300799999, d.created_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER),
    d.last_error, NULL, d.version
  FROM soniq_job_deps AS e JOIN soniq_dead_letter_jobs AS d ON d.id = e.job_id
  WHERE e.dep_id = OLD.id AND d.reason = 'dependency_failed'
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                    WHERE o.job_id = d.id AND o.dep_state IN ('cancelled', 'dead')
                      AND o.on_failure <> 'ignore');
  DELETE FROM soniq_dead_letter_jobs
  WHERE reason = 'dependency_failed' AND id IN (
    SELECT e.job_id FROM soniq_job_deps AS e JOIN soniq_jobs AS j ON j.id = e.job_id
    WHERE e.dep_id = OLD.id AND j.status = 'queued' AND j.scheduled_at = 253402300799999);
END;
