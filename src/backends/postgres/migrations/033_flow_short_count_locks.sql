-- Workflows: a finishing statement holds its batches' and dependants' rows for less time (issue
-- 29, the fan-in; docs/performance.md, "2026-12-07, round five").
--
-- In a fan-in every completion statement of the members counts down the same two rows (the
-- batch's `members_left`, the callback's `pending`) and holds their locks until its commit, so
-- the worker's two completion writes in flight take turns from the first of those locks on.
-- Migration 030's soniq_flow_ended took the batch's lock first and then did the statement's
-- largest piece of work with it held: the update of the ended edges (a row per member, ~17 µs
-- of database CPU each), whose statement trigger (soniq_flow_settle_ended) then counted the
-- dependants down. Now the function, for the rows the statement ended:
-- 1. reads each ended row's node once (one primary-key probe per row, where 030 probed it twice:
--    as a batch's member and as a flow's root) and whether any open edge waits on them (stops at
--    the first: 030 read every one to build a distinct list);
-- 2. ends their open edges, returning each ended edge, with soniq_flow_settle_ended told to
--    skip that update (the transaction-local setting `soniq.flow_settle_deferred`, on only for
--    that one statement);
-- 3. counts down the batches (id order) and records the flows' roots' ends, as 030;
-- 4. settles the dependants of the edges of step 2 (soniq_flow_settle: id order), as the
--    trigger does for every other update of the edges (a seal, an operator's delete, an
--    enqueue's edges on jobs that already ended).
-- Lock order: the ended jobs' rows (the statement's DELETE), their edges, the batches' rows in
-- id order, the dependants' rows in id order. The edges of a job are written only by the
-- transaction that ends it (which holds the job's row: no other can end it meanwhile) or by a
-- replay of it (it is then a dead letter, not live), so step 2 waits for nobody; the two hot
-- rows keep 030's order, batch before dependant, as a seal, an add and a replay take them: no
-- lock cycle is added. What is written, and the finishes' order in soniq_flow_ends, is 030's.

-- The settle of migration 031's trigger, for a set of edges that went from open to ended
-- (zipped arrays: dependant, dependency, end, policy): each dependant once, in id order, with all
-- of the set's ends for it: `pending` counted down by those that ended well (or failed under
-- `ignore`), released or — a batch's onFailure callback whose members all ended done —
-- cancelled at 0; the first failing edge under `fail` / `cancel` (by dependency id)
-- dead-letters or cancels it.
CREATE FUNCTION soniq_flow_settle(p_job uuid[], p_dep uuid[], p_state text[], p_policy text[])
RETURNS void
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
    FROM unnest(p_job, p_dep, p_state, p_policy) AS w(job_id, dep_id, dep_state, on_failure)
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
END;
$$;

-- The edges' statement trigger (migration 031's): the edges whose state went from NULL to an
-- end, each edge's old and new row grouped by its key (a union and an aggregate, not a join of
-- the two transition tables), settled by soniq_flow_settle. It skips the update that
-- soniq_flow_ended runs with `soniq.flow_settle_deferred` on, which settles its edges itself
-- after counting its batches down.
CREATE OR REPLACE FUNCTION soniq_flow_settle_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  s_job uuid[];
  s_dep uuid[];
  s_state text[];
  s_policy text[];
BEGIN
  IF current_setting('soniq.flow_settle_deferred', true) = 'on' THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(w.job_id), array_agg(w.dep_id), array_agg(w.dep_state), array_agg(w.on_failure)
    INTO s_job, s_dep, s_state, s_policy
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
  ) AS w;
  IF s_job IS NOT NULL THEN
    PERFORM soniq_flow_settle(s_job, s_dep, s_state, s_policy);
  END IF;
  RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET enable_seqscan = off
AS $$
DECLARE
  e record;
  dead constant boolean := TG_TABLE_NAME = 'soniq_dead_letter_jobs';
  ids uuid[];
  ends jsonb;
  n_id uuid[];
  n_status text[];
  n_role text[];
  n_flow uuid[];
  s_job uuid[];
  s_dep uuid[];
  s_state text[];
  s_policy text[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_flow_nodes) AND NOT EXISTS (SELECT 1 FROM soniq_job_deps) THEN
    RETURN NULL;
  END IF;
  -- Each ended row's node, one probe of the primary key per row (a scalar sub-query returning
  -- the node's row, kept apart by OFFSET 0 so that it runs once per row): only the rows that
  -- have one. (A dead-letter entry has no status column: its end is `dead`.)
  IF dead THEN
    SELECT array_agg(x.id), array_agg('dead'::text), array_agg((x.node).role),
      array_agg((x.node).flow_id)
      INTO n_id, n_status, n_role, n_flow
    FROM (
      SELECT n.id, (SELECT f FROM soniq_flow_nodes AS f WHERE f.job_id = n.id) AS node
      FROM ended AS n OFFSET 0
    ) AS x
    WHERE (x.node).job_id IS NOT NULL;
  ELSE
    SELECT array_agg(x.id), array_agg(x.status), array_agg((x.node).role),
      array_agg((x.node).flow_id)
      INTO n_id, n_status, n_role, n_flow
    FROM (
      SELECT n.id, n.status, (SELECT f FROM soniq_flow_nodes AS f WHERE f.job_id = n.id) AS node
      FROM ended AS n OFFSET 0
    ) AS x
    WHERE (x.node).job_id IS NOT NULL;
  END IF;
  -- The open edges on the ended rows, ended first: they are written only by the end of their
  -- dependency (this statement's), so this waits for nobody, and the dependants are settled
  -- below, after the batches, with the edges returned here.
  ids := ARRAY(SELECT n.id FROM ended AS n);
  IF EXISTS (SELECT 1 FROM soniq_job_deps AS d WHERE d.dep_id = ANY(ids) AND d.dep_state IS NULL)
  THEN
    PERFORM set_config('soniq.flow_settle_deferred', 'on', true);
    IF dead THEN
      WITH u AS (
        UPDATE soniq_job_deps SET dep_state = 'dead'
        WHERE dep_id = ANY(ids) AND dep_state IS NULL
        RETURNING job_id, dep_id, dep_state, on_failure
      )
      SELECT array_agg(u.job_id), array_agg(u.dep_id), array_agg(u.dep_state),
        array_agg(u.on_failure)
        INTO s_job, s_dep, s_state, s_policy FROM u;
    ELSE
      -- The ended rows' states and results as one object keyed by id (each edge's a lookup in
      -- it; no join with `ended`). The result travels as its JSON text, unchanged.
      SELECT jsonb_object_agg(n.id::text, jsonb_build_array(n.status, n.result::text))
        INTO ends FROM ended AS n;
      WITH u AS (
        UPDATE soniq_job_deps SET dep_state = ends -> dep_id::text ->> 0,
          dep_result = (ends -> dep_id::text ->> 1)::json
        WHERE dep_id = ANY(ids) AND dep_state IS NULL
        RETURNING job_id, dep_id, dep_state, on_failure
      )
      SELECT array_agg(u.job_id), array_agg(u.dep_id), array_agg(u.dep_state),
        array_agg(u.on_failure)
        INTO s_job, s_dep, s_state, s_policy FROM u;
    END IF;
    PERFORM set_config('soniq.flow_settle_deferred', 'off', true);
  END IF;
  IF n_id IS NOT NULL THEN
    -- The members that ended count down their batch's row, batches in id order.
    FOR e IN
      SELECT m.flow_id, count(*)::int AS n,
        count(*) FILTER (WHERE m.status <> 'done')::int AS failed
      FROM unnest(n_status, n_role, n_flow) AS m(status, role, flow_id)
      WHERE m.role = 'member' AND m.flow_id IS NOT NULL
      GROUP BY m.flow_id ORDER BY m.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.failed
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    -- A flow's root that ended is its flow's end.
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', r.id,
      CASE WHEN dead THEN 'failed' WHEN r.status = 'done' THEN 'done' ELSE 'cancelled' END
    FROM unnest(n_id, n_status, n_role, n_flow) AS r(id, status, role, flow_id)
    WHERE r.role = 'job' AND r.flow_id = r.id
    ORDER BY r.id;
  END IF;
  IF s_job IS NOT NULL THEN
    PERFORM soniq_flow_settle(s_job, s_dep, s_state, s_policy);
  END IF;
  RETURN NULL;
END;
$$;
