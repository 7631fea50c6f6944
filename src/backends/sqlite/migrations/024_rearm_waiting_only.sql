-- A replay re-arms only what still waits on the replayed job (issue 29; the same change as
-- PostgreSQL's migration 036, read its comment): migration 021's trigger set every ended edge of
-- the replayed job back to open, also those of dependants already released, run or finished (a
-- batch's callbacks once the batch had finished), whose count then went below 0 at the replayed
-- job's next end. Now only the edges of dependants still waiting or dead-lettered for
-- `dependency_failed` are re-armed. The rest of the trigger is 021's.
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
  WHERE dep_id = OLD.id AND dep_state IS NOT NULL
    AND (EXISTS (SELECT 1 FROM soniq_jobs AS j
                 WHERE j.id = soniq_job_deps.job_id AND j.status = 'queued'
                   AND j.scheduled_at = 253402300799999)
         OR EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d
                    WHERE d.id = soniq_job_deps.job_id AND d.reason = 'dependency_failed'));
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
