-- Workflows: the release work runs once per dependant, not once per edge (issue 29, the fan-in;
-- docs/performance.md, "The `fanin` workload").
--
-- Migration 015's soniq_flow_release ran, for every edge that ended well (or failed under
-- `ignore`), the count-down and then five more statements (the release, and the onFailure rule's
-- count, copy and delete), each probing the dependant's rows only to find that its `pending` was
-- not 0 yet: a batch's callback waiting on 10,000 members paid them 10,000 times. Now the edge's
-- trigger only counts down, and a trigger on the dependant's node runs those statements when its
-- `pending` comes down to 0 (the same condition the statements tested: every edge ended well or
-- ignored), in the same statement, with the same effects in the same order. A batch's own node
-- (`pending` 1 open, 0 sealed) is not a dependant and is left out, as before.
DROP TRIGGER soniq_flow_release;

CREATE TRIGGER soniq_flow_count_down AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IS NOT NULL
  AND (NEW.dep_state = 'done' OR NEW.on_failure = 'ignore')
BEGIN
  UPDATE soniq_flow_nodes SET pending = pending - 1 WHERE job_id = NEW.job_id;
END;

CREATE TRIGGER soniq_flow_release AFTER UPDATE OF pending ON soniq_flow_nodes
WHEN NEW.pending <= 0 AND NEW.pending < OLD.pending AND NEW.role <> 'batch'
BEGIN
  UPDATE soniq_jobs
  SET scheduled_at = COALESCE(NEW.run_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)),
      updated_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND NOT (NEW.role = 'on_failure'
             AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                             AND dep_state IN ('cancelled', 'dead')));
  -- A batch's onFailure callback whose members all ended done: cancelled, never run.
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'cancelled', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000, 0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND NEW.role = 'on_failure'
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                    AND dep_state IN ('cancelled', 'dead'))
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), worker_id, claim_token,
    'every member of the batch ended done', NULL, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) + max(NEW.retention_ms, 0),
    dedup_key, meta, start_known, uncharged_recoveries, trace_context, version
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND NEW.role = 'on_failure'
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                    AND dep_state IN ('cancelled', 'dead'));
  DELETE FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND EXISTS (SELECT 1 FROM soniq_finished_jobs WHERE id = NEW.job_id);
END;
