-- Workflows: the end of a statement's edges in time linear in its rows (issue 29, the fan-in;
-- docs/performance.md, "2026-12-07, round three").
--
-- Migration 024's two statements that join a statement's transition tables kept the plan
-- PL/pgSQL made for them on a connection's first finishing statement of members — for a handful
-- of rows: the UPDATE of the ended edges rescanned the statement's ended rows (`ended`) once per
-- edge, so a batched completion of 222 members read 49,062 rows of it (64 ms) with the batch's
-- row locked and every other completion of its members waiting; the larger the completion
-- batches grew behind it, the longer it took. Both are now written without a join of a
-- transition table, so no plan can be quadratic:
-- - soniq_flow_ended looks each edge's end up in one jsonb object built from `ended` (its result
--   kept as its JSON text) and updates the edges through soniq_job_deps_dep_idx, as the
--   dead-letter branch always did;
-- - soniq_flow_settle_ended pairs each edge's old and new row by grouping the two transition
--   tables' union on the edge's key.
-- What they write, lock and in which order is 024's.
--
-- Jobs nobody waits for (docs/performance.md, "Database CPU per job in the real drain"):
-- soniq_flow_ended's three reads of the finishing statement's rows (batch members, flow roots,
-- open edges: index probes for every row) ran even where no workflow was ever made, ≈ 4–5 µs of
-- database CPU per finished job in a no-op drain. A guard returns at once when soniq_flow_nodes
-- and soniq_job_deps both have no row: then none of the three can match. The guard reads with a
-- snapshot of its own, taken after the statement (as every query of the function), so it sees
-- what the reads it stands for would see: a job's node is inserted with the job, so it is
-- committed before the job can end; an edge on a job is inserted by an `after` enqueue holding
-- the job's row FOR KEY SHARE, so it is committed before the finishing DELETE gets that row
-- (migration 023), or waits for this transaction and then reads the end itself.

CREATE OR REPLACE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  e record;
  dead constant boolean := TG_TABLE_NAME = 'soniq_dead_letter_jobs';
  ids uuid[];
  ends jsonb;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_flow_nodes) AND NOT EXISTS (SELECT 1 FROM soniq_job_deps) THEN
    RETURN NULL;
  END IF;
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
    -- The ended rows' states and results as one object keyed by id (each edge's a lookup in
    -- it): no join of the edges with `ended`, whose plan PL/pgSQL would keep from the first
    -- few rows (a rescan of `ended` per edge). The result travels as its JSON text, unchanged.
    SELECT jsonb_object_agg(n.id::text, jsonb_build_array(n.status, n.result::text))
      INTO ends FROM ended AS n;
    UPDATE soniq_job_deps SET dep_state = ends -> dep_id::text ->> 0,
      dep_result = (ends -> dep_id::text ->> 1)::json
    WHERE dep_id = ANY(ids) AND dep_state IS NULL;
  END IF;
  RETURN NULL;
END;
$$;

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
