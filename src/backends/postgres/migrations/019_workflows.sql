-- Workflows (issue 29; docs/workflows.md): jobs that wait for other jobs.
--
-- A job enqueued with dependencies (its "dependant" edges) is inserted into soniq_jobs as a queued
-- row due at the waiting instant 9999-12-31 23:59:59.999999 UTC: no claim takes it, it holds no
-- slot, crash recovery never sees it (only processing rows are recovered) and no deploy-skew rule
-- counts it as due. soniq_flow_nodes keeps when it may run once released (`run_at`) and how many
-- of its dependencies have not ended well yet (`pending`); soniq_job_deps keeps one row per edge
-- with the dependency's end (`dep_state`: done, cancelled, dead) and result, so the state survives
-- the dependency leaving soniq_jobs (finished jobs move out: docs/backends.md).
--
-- The release happens in the statement that ends the last dependency, whatever the path (a
-- completion, a batched completion, a dead-letter move, a cancel, crash recovery, a remote job's
-- end): statement triggers on the two tables a finished job lands in (soniq_finished_store,
-- soniq_dead_letter_jobs) record the end on the edges, and a row trigger on the edges settles each
-- dependant: a good end (or a failure under the edge's policy `ignore`) counts down `pending` and
-- the last one sets the row due (and NOTIFYs); a failure under `fail` moves the dependant to the
-- dead-letter queue (reason dependency_failed), under `cancel` it is cancelled; both end it, so
-- its own dependants follow in the same statement. A replay of a dead-lettered dependency re-arms
-- the edges and the dependants dead-lettered for it (soniq_flow_rearm).
-- Every function runs with the search path of the schema it was made in.

CREATE TABLE soniq_flow_nodes (
  job_id      uuid        NOT NULL,
  -- The flow the job belongs to (soniq.flow(): the root's id); NULL for a job enqueued with
  -- `after` alone.
  flow_id     uuid,
  -- The job's own due time once released (its delay or runAt, from its enqueue); NULL for a job
  -- without dependencies (a member of a flow only).
  run_at      timestamptz,
  -- Dependencies that have not ended well (or been ignored) yet.
  pending     integer     NOT NULL DEFAULT 0,
  -- The retention a cancel by policy keeps the job for (its definition's `resultRetention`).
  retention_s double precision NOT NULL DEFAULT 0,
  -- What the row is: a job of a flow or with `after` (`job`), a batch's member (`member`) or
  -- callback (`on_complete`, `on_success`, `on_failure`), or the batch itself (`batch`: `job_id`
  -- is the batch's id, `pending` 1 while it is open, 0 once sealed).
  role        text        NOT NULL DEFAULT 'job'
              CHECK (role IN ('job', 'member', 'batch', 'on_complete', 'on_success', 'on_failure')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT soniq_flow_nodes_pkey PRIMARY KEY (job_id)
);
CREATE INDEX soniq_flow_nodes_flow_idx ON soniq_flow_nodes (flow_id) WHERE flow_id IS NOT NULL;

CREATE TABLE soniq_job_deps (
  job_id     uuid NOT NULL,
  dep_id     uuid NOT NULL,
  on_failure text NOT NULL DEFAULT 'fail' CHECK (on_failure IN ('fail', 'ignore', 'cancel')),
  dep_state  text CHECK (dep_state IN ('done', 'cancelled', 'dead')),
  dep_result json,
  CONSTRAINT soniq_job_deps_pkey PRIMARY KEY (job_id, dep_id)
);
CREATE INDEX soniq_job_deps_dep_idx ON soniq_job_deps (dep_id);

-- The wake-up of a released job: as the insert trigger's (009_notify_queued_only.sql).
CREATE FUNCTION soniq_flow_notify(due_queue text) RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || current_schema()) <= 63 THEN 'soniq_' || current_schema()
    ELSE 'soniq_' || md5(current_schema())
  END;
BEGIN
  PERFORM pg_notify(channel, CASE WHEN octet_length(due_queue) <= 1024 THEN due_queue ELSE '*' END);
END;
$$;

-- Statement trigger on soniq_finished_store and soniq_dead_letter_jobs: the ended jobs (`ended`,
-- the statement's new rows) end their edges. Jobs nobody waits for find no edge (one probe of
-- soniq_job_deps_dep_idx per row). The edges are ended one by one in the order of their
-- dependants' ids, so the dependants' node rows are locked in that order by every transaction:
-- two batched completions ending members of the same two batches never wait for each other in
-- a cycle.
CREATE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  e record;
BEGIN
  IF TG_TABLE_NAME = 'soniq_dead_letter_jobs' THEN
    FOR e IN
      SELECT d.job_id, d.dep_id FROM ended AS n JOIN soniq_job_deps AS d ON d.dep_id = n.id
      WHERE d.dep_state IS NULL ORDER BY d.job_id, d.dep_id
    LOOP
      UPDATE soniq_job_deps SET dep_state = 'dead'
      WHERE job_id = e.job_id AND dep_id = e.dep_id AND dep_state IS NULL;
    END LOOP;
  ELSE
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

CREATE TRIGGER soniq_flow_finished AFTER INSERT ON soniq_finished_store
  REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION soniq_flow_ended();
CREATE TRIGGER soniq_flow_dead AFTER INSERT ON soniq_dead_letter_jobs
  REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION soniq_flow_ended();

-- Cancels waiting job `target` (kept for its node's retention; `why` as its last error), as a
-- cancel of a queued job would: counted, its dedup key held, moved to the finished store (whose
-- trigger ends its own edges). Nothing when it is no longer waiting.
CREATE FUNCTION soniq_flow_cancel_waiting(target uuid, why text) RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
  keep double precision;
BEGIN
  SELECT retention_s INTO keep FROM soniq_flow_nodes WHERE job_id = target;
  WITH moved AS (
    DELETE FROM soniq_jobs
    WHERE id = target AND status = 'queued' AND scheduled_at = waiting
    RETURNING *
  ), held AS (
    UPDATE soniq_dedup_keys AS d
    SET held_until = now() + make_interval(secs => GREATEST(COALESCE(keep, 0), 0))
    FROM moved AS m WHERE d.dedup_key = m.dedup_key AND d.job_id = m.id
    RETURNING 1
  ), counted AS (
    INSERT INTO soniq_job_counts AS c (queue, kind, bucket, writer, n)
    SELECT m.queue, 'cancelled', date_trunc('minute', now()), pg_backend_pid(), 1
    FROM moved AS m
    ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = c.n + 1
    RETURNING 1
  )
  INSERT INTO soniq_finished_store (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    now(), created_at, now(), started_at, now(), worker_id, claim_token, why, NULL,
    now() + make_interval(secs => GREATEST(COALESCE(keep, 0), 0)), dedup_key, meta,
    start_known, uncharged_recoveries, trace_context, version
  FROM moved;
END;
$$;

-- Row trigger on soniq_job_deps: an edge just ended; settle its dependant (see the top comment).
-- The dependant is acted on only while it is still waiting (queued at the waiting instant), so a
-- second failing edge, or a late edge of a dependant already released, changes nothing.
CREATE FUNCTION soniq_flow_settle() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
  left_ integer;
  due timestamptz;
  q text;
BEGIN
  IF NEW.dep_state = 'done' OR NEW.on_failure = 'ignore' THEN
    UPDATE soniq_flow_nodes SET pending = pending - 1 WHERE job_id = NEW.job_id
      RETURNING pending, run_at INTO left_, due;
    IF left_ = 0 AND EXISTS (
      SELECT 1 FROM soniq_flow_nodes AS f WHERE f.job_id = NEW.job_id AND f.role = 'on_failure'
        AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                        WHERE o.job_id = f.job_id AND o.dep_state IN ('cancelled', 'dead')))
    THEN
      -- A batch's onFailure callback whose members all ended done: it is cancelled, never run.
      PERFORM soniq_flow_cancel_waiting(NEW.job_id, 'every member of the batch ended done');
    ELSIF left_ = 0 THEN
      UPDATE soniq_jobs SET scheduled_at = COALESCE(due, now()), updated_at = now()
        WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = waiting
        RETURNING queue INTO q;
      IF q IS NOT NULL AND COALESCE(due, now()) <= now() THEN
        PERFORM soniq_flow_notify(q);
      END IF;
    END IF;
  ELSIF NEW.on_failure = 'fail' THEN
    WITH moved AS (
      DELETE FROM soniq_jobs
      WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = waiting
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
      'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state, dedup_key, 'dependency_failed',
      now(), version
    FROM moved;
  ELSE
    PERFORM soniq_flow_cancel_waiting(NEW.job_id,
      'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_flow_settle AFTER UPDATE OF dep_state ON soniq_job_deps
  FOR EACH ROW WHEN (OLD.dep_state IS NULL AND NEW.dep_state IS NOT NULL)
  EXECUTE FUNCTION soniq_flow_settle();

-- Row trigger on soniq_dead_letter_jobs: an entry left the DLQ. When it went back to soniq_jobs
-- (a replay), its edges are armed again (`dep_state` NULL), each dependant still waiting counts it
-- as pending again when its edge had counted down, and each dependant that was dead-lettered with
-- reason dependency_failed and has no other failed edge comes back waiting (attempts 0, without
-- its dedup key), its `pending` recounted — whose own leaving the DLQ re-arms its dependants.
CREATE FUNCTION soniq_flow_rearm() RETURNS trigger
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
                            dedup_key, version)
    SELECT d.id, d.name, d.queue, d.args, 'queued', d.priority, 0, d.max_attempts, 0, waiting,
           d.created_at, now(), d.last_error, NULL, d.version
    FROM soniq_dead_letter_jobs AS d JOIN counted AS c ON c.job_id = d.id
    RETURNING id
  )
  DELETE FROM soniq_dead_letter_jobs AS d USING restored AS r WHERE d.id = r.id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_flow_rearm AFTER DELETE ON soniq_dead_letter_jobs
  FOR EACH ROW EXECUTE FUNCTION soniq_flow_rearm();
