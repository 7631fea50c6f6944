-- Workflows: the count-down of a dependant, once per statement instead of once per edge (issue 29,
-- the fan-in; docs/performance.md, "The `fanin` workload").
--
-- Until now a finishing statement ended its jobs' edges one UPDATE at a time (a loop in
-- soniq_flow_ended) and a row trigger on soniq_job_deps (soniq_flow_settle) settled the dependant
-- once per edge: a batch's callback waiting on 10,000 members had its node row updated once per
-- member, ten times in a batched completion of ten. Now the edges a statement ends are ended by
-- one UPDATE, and a statement trigger on soniq_job_deps settles each dependant once, with the
-- edges of that statement that ended for it (whatever statement ended them: a finish, a
-- dead-letter move, a seal, a delete, an enqueue recording ends that came before it):
-- - those that ended well, or failed under the policy `ignore`, count `pending` down together;
--   when it reaches 0 the dependant is released (due, NOTIFY) — or, a batch's onFailure callback
--   whose edges all ended done, cancelled;
-- - the first of the others by dependency id (a failure under `fail` or `cancel`) dead-letters or
--   cancels the dependant, with that dependency in its reason, as the first such edge did before.
-- A dependant with such an edge still counts it in `pending`, so it is never released in the same
-- statement: the two cases do not depend on their order. The dependants are settled in the order
-- of their ids (each one's node and job rows locked in turn), as the per-edge loop locked them,
-- after the batch rows (soniq_flow_ended, unchanged): concurrent statements lock in one order.
-- The edge rows themselves are written only by the statement that ends their dependency (fenced
-- on its job row), a replay of it or a seal of its batch, never by two statements at once.

DROP TRIGGER soniq_flow_settle ON soniq_job_deps;
DROP FUNCTION soniq_flow_settle();

-- Migration 022's function with the edge loop replaced by one UPDATE (only when an edge is open:
-- a statement of jobs nobody waits for runs no UPDATE, so no statement trigger either). The
-- edges are reached by probes of soniq_job_deps_dep_idx for the ended ids (an array, as the
-- finishing statements' dedup-key probes: finish-sql.ts).
CREATE OR REPLACE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  e record;
  dead constant boolean := TG_TABLE_NAME = 'soniq_dead_letter_jobs';
  ids uuid[];
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
  END IF;
  SELECT array_agg(DISTINCT d.dep_id) INTO ids FROM soniq_job_deps AS d
  WHERE d.dep_id = ANY(ARRAY(SELECT n.id FROM ended AS n)) AND d.dep_state IS NULL;
  IF ids IS NULL THEN
    RETURN NULL;
  END IF;
  IF dead THEN
    UPDATE soniq_job_deps SET dep_state = 'dead'
    WHERE dep_id = ANY(ids) AND dep_state IS NULL;
  ELSE
    UPDATE soniq_job_deps AS d SET dep_state = n.status, dep_result = n.result
    FROM ended AS n
    WHERE d.dep_id = ANY(ids) AND d.dep_state IS NULL AND n.id = d.dep_id;
  END IF;
  RETURN NULL;
END;
$$;

-- Statement trigger on soniq_job_deps: the edges the statement ended (`dep_state` from NULL to
-- an end) settle their dependants, one at a time in id order (see the top comment).
CREATE FUNCTION soniq_flow_settle_ended() RETURNS trigger
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
  FOR e IN
    SELECT w.job_id,
      count(*) FILTER (WHERE w.dep_state = 'done' OR w.on_failure = 'ignore')::int AS good,
      (array_agg(w.dep_id ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_dep,
      (array_agg(w.dep_state ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_state,
      (array_agg(w.on_failure ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_policy
    FROM new_edges AS w JOIN old_edges AS o ON o.job_id = w.job_id AND o.dep_id = w.dep_id
    WHERE o.dep_state IS NULL AND w.dep_state IS NOT NULL
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
        claim_token, last_error, dedup_key, reason, dead_at, version)
      SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions, now(),
        created_at, now(), started_at, finished_at, worker_id, claim_token,
        'dependency ' || e.bad_dep || ' ended ' || e.bad_state, dedup_key, 'dependency_failed',
        now(), version
      FROM moved;
    ELSIF e.bad_policy = 'cancel' THEN
      PERFORM soniq_flow_cancel_waiting(e.job_id,
        'dependency ' || e.bad_dep || ' ended ' || e.bad_state);
    END IF;
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_flow_settle_ended AFTER UPDATE ON soniq_job_deps
  REFERENCING OLD TABLE AS old_edges NEW TABLE AS new_edges
  FOR EACH STATEMENT EXECUTE FUNCTION soniq_flow_settle_ended();
