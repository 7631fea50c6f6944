-- Dead letters keep the job's Soniq metadata (issue 28; docs/flow-control.md, "Stored"): `meta`
-- holds a keyed job's concurrency key and limit and its rate limit (and a schedule's occurrence
-- context), and a dead letter did not keep it, so a replay put the job back with `meta` NULL: a
-- replayed keyed job ran outside its key's limits. Every move into soniq_dead_letter_jobs now
-- copies `meta` (the statements of sql.ts, and the dependency_failed move below), and every way
-- back restores it: a replay (sql.ts `replay`, without the checkpoint markers `resume`,
-- `checkpoints` and `checkpointAt`: the dead letter does not keep the checkpoint and steps they
-- describe) and the re-arm of a dependant dead-lettered for a dependency (below; it never ran, so
-- it has no checkpoint markers).
--
-- The column is nullable without a default: no table is rewritten, and dead letters written
-- before (or by a process of the previous version, which does not name the column) keep NULL and
-- replay as before, without metadata.
ALTER TABLE soniq_dead_letter_jobs ADD COLUMN meta json;

-- Migration 025's function; the move of a dependant whose dependency failed under `fail` copies
-- its `meta`.
CREATE OR REPLACE FUNCTION soniq_flow_settle_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
  e record;
  left_ integer;
  due timestamptz;
  q text;
BEGIN
  -- The edges whose state went from NULL to an end: each edge's old and new row grouped by its
  -- key (a union and an aggregate, not a join of the two transition tables, whose plan PL/pgSQL
  -- would keep from the first statement's few rows: a rescan of one per row of the other).
  FOR e IN
    SELECT w.job_id,
      count(*) FILTER (WHERE w.dep_state = 'done' OR w.on_failure = 'ignore')::int AS good,
      (array_agg(w.dep_id ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_dep,
      (array_agg(w.dep_state ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_state,
      (array_agg(w.on_failure ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_policy
    FROM (
      SELECT u.job_id, u.dep_id,
        min(u.dep_state) FILTER (WHERE NOT u.was) AS dep_state,
        min(u.on_failure) FILTER (WHERE NOT u.was) AS on_failure
      FROM (
        SELECT n.job_id, n.dep_id, n.dep_state, n.on_failure, false AS was FROM new_edges AS n
        UNION ALL
        SELECT o.job_id, o.dep_id, o.dep_state, o.on_failure, true FROM old_edges AS o
      ) AS u
      GROUP BY u.job_id, u.dep_id
      HAVING bool_or(u.was AND u.dep_state IS NULL) AND bool_or(NOT u.was AND u.dep_state IS NOT NULL)
    ) AS w
    GROUP BY w.job_id ORDER BY w.job_id
  LOOP
    IF e.good > 0 THEN
      UPDATE soniq_flow_nodes SET pending = pending - e.good WHERE job_id = e.job_id
        RETURNING pending, run_at INTO left_, due;
      IF left_ = 0 AND EXISTS (
        SELECT 1 FROM soniq_flow_nodes AS f WHERE f.job_id = e.job_id AND f.role = 'on_failure'
          AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                          WHERE o.job_id = f.job_id AND o.dep_state IN ('cancelled', 'dead')))
      THEN
        -- A batch's onFailure callback whose members all ended done: it is cancelled, never run.
        PERFORM soniq_flow_cancel_waiting(e.job_id, 'every member of the batch ended done');
      ELSIF left_ = 0 THEN
        q := NULL;
        UPDATE soniq_jobs SET scheduled_at = COALESCE(due, now()), updated_at = now()
          WHERE id = e.job_id AND status = 'queued' AND scheduled_at = waiting
          RETURNING queue INTO q;
        IF q IS NOT NULL AND COALESCE(due, now()) <= now() THEN
          PERFORM soniq_flow_notify(q);
        END IF;
      END IF;
    END IF;
    IF e.bad_policy = 'fail' THEN
      WITH moved AS (
        DELETE FROM soniq_jobs
        WHERE id = e.job_id AND status = 'queued' AND scheduled_at = waiting
        RETURNING *
      ), released AS (
        DELETE FROM soniq_dedup_keys AS d USING moved AS m
        WHERE d.dedup_key = m.dedup_key AND d.job_id = m.id
        RETURNING 1
      ), counted AS (
        INSERT INTO soniq_job_counts AS c (queue, kind, bucket, writer, n)
        SELECT m.queue, 'dead', date_trunc('minute', now()), pg_backend_pid(), 1 FROM moved AS m
        ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = c.n + 1
        RETURNING 1
      )
      INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts, max_attempts,
        interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
        claim_token, last_error, dedup_key, reason, dead_at, version, meta)
      SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions, now(),
        created_at, now(), started_at, finished_at, worker_id, claim_token,
        'dependency ' || e.bad_dep || ' ended ' || e.bad_state, dedup_key, 'dependency_failed',
        now(), version, meta
      FROM moved;
    ELSIF e.bad_policy = 'cancel' THEN
      PERFORM soniq_flow_cancel_waiting(e.job_id,
        'dependency ' || e.bad_dep || ' ended ' || e.bad_state);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;

-- Migration 019's function; a dependant dead-lettered for the replayed job comes back with its
-- `meta`.
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
  UPDATE soniq_job_deps SET dep_state = NULL, dep_result = NULL
  WHERE dep_id = OLD.id AND dep_state IS NOT NULL;
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
