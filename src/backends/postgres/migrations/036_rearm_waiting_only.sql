-- A replay re-arms only what still waits on the replayed job (issue 29; docs/workflows.md, "Replay
-- re-arms"). Migration 031's soniq_flow_rearm set every ended edge of the replayed job back to
-- open, also the edges of dependants that had already been released, run or finished — a batch's
-- callbacks once the batch had finished, a dependant released by an `ignore` policy. Nothing ran
-- twice (only a waiting dependant can be released), but the replayed job's next end counted those
-- dependants down again, below 0, and a released dependant not yet run read the dependency as not
-- ended in `ctx.dependencies()`. Now the edges re-armed are those of dependants still waiting (the
-- `ignore` ones among them counted as pending again, as before) or dead-lettered for
-- `dependency_failed` (brought back by the statements that follow, as before); every other edge
-- keeps the end its dependant saw. The rest of the function is 031's.
CREATE OR REPLACE FUNCTION soniq_flow_rearm() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id) THEN
    RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = OLD.id) THEN
    RETURN NULL;
  END IF;
  UPDATE soniq_flow_nodes AS f SET pending = f.pending + 1
  FROM soniq_job_deps AS e, soniq_jobs AS j
  WHERE e.dep_id = OLD.id AND e.dep_state IS NOT NULL AND e.on_failure = 'ignore'
    AND f.job_id = e.job_id AND j.id = e.job_id AND j.status = 'queued'
    AND j.scheduled_at = waiting;
  UPDATE soniq_job_deps AS e SET dep_state = NULL, dep_result = NULL
  WHERE e.dep_id = OLD.id AND e.dep_state IS NOT NULL
    AND (EXISTS (SELECT 1 FROM soniq_jobs AS j
                 WHERE j.id = e.job_id AND j.status = 'queued' AND j.scheduled_at = waiting)
         OR EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d
                    WHERE d.id = e.job_id AND d.reason = 'dependency_failed'));
  WITH back AS (
    SELECT d.id FROM soniq_job_deps AS e JOIN soniq_dead_letter_jobs AS d ON d.id = e.job_id
    WHERE e.dep_id = OLD.id AND d.reason = 'dependency_failed'
      AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                      WHERE o.job_id = d.id AND o.dep_state IN ('cancelled', 'dead')
                        AND o.on_failure <> 'ignore')
  ), counted AS (
    UPDATE soniq_flow_nodes AS f SET pending = (
      SELECT count(*) FROM soniq_job_deps AS o
      WHERE o.job_id = f.job_id AND o.dep_state IS NULL)
    FROM back AS b WHERE f.job_id = b.id
    RETURNING f.job_id
  ), restored AS (
    INSERT INTO soniq_jobs (id, name, queue, args, status, priority, attempts, max_attempts,
                            interruptions, scheduled_at, created_at, updated_at, last_error,
                            dedup_key, version, meta)
    SELECT d.id, d.name, d.queue, d.args, 'queued', d.priority, 0, d.max_attempts, 0, waiting,
           d.created_at, now(), d.last_error, NULL, d.version, d.meta
    FROM soniq_dead_letter_jobs AS d JOIN counted AS c ON c.job_id = d.id
    RETURNING id
  )
  DELETE FROM soniq_dead_letter_jobs AS d USING restored AS r WHERE d.id = r.id;
  RETURN NULL;
END;
$$;
