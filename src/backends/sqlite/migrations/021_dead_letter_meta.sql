-- Dead letters keep the job's Soniq metadata (issue 28; docs/flow-control.md, "Stored"): `meta`
-- holds a keyed job's concurrency key and limit and its rate limit (and a schedule's occurrence
-- context), and a dead letter did not keep it, so a replay put the job back with `meta` NULL (and,
-- since migration 020, `concurrency_key` NULL): a replayed keyed job ran outside its key's limits.
-- Every move into soniq_dead_letter_jobs now copies `meta` (the statements of sql.ts, and the
-- dependency_failed move below), and every way back restores it with the key column: a replay
-- (sql.ts `replay`, without the checkpoint markers `resume`, `checkpoints` and `checkpointAt`: the
-- dead letter does not keep the checkpoint and steps they describe) and the re-arm of a dependant
-- dead-lettered for a dependency (below; it never ran, so it has no checkpoint markers).
--
-- Dead letters written before (or by a process of the previous version, which does not name the
-- column) keep NULL and replay as before, without metadata.
ALTER TABLE soniq_dead_letter_jobs ADD COLUMN meta TEXT;

-- Migration 015's trigger; the move of a dependant whose dependency failed under `fail` copies its
-- `meta`.
DROP TRIGGER soniq_flow_fail;
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
    claim_token, last_error, dedup_key, reason, dead_at, version, meta)
  SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at, finished_at, worker_id,
    claim_token, 'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state, dedup_key,
    'dependency_failed', CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), version, meta
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
  DELETE FROM soniq_jobs
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
END;

-- Migration 015's trigger; a dependant dead-lettered for the replayed job comes back with its
-- `meta` and its key column.
DROP TRIGGER soniq_flow_rearm;
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
    interruptions, scheduled_at, created_at, updated_at, last_error, dedup_key, version, meta,
    concurrency_key)
  SELECT d.id, d.name, d.queue, d.args, 'queued', d.priority, 0, d.max_attempts, 0,
    253402300799999, d.created_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER),
    d.last_error, NULL, d.version, d.meta, json_extract(d.meta, '$.concurrency.key')
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
