-- Finished jobs leave the hot table (docs/backends.md, "Two tables: live jobs and finished jobs").
--
-- soniq_jobs keeps only live rows (queued, processing): the claim, the per-queue claim, crash
-- recovery and the fence read it, and it stays small whatever the retention. A job that ends
-- done or cancelled is deleted from it and, unless its retention is 0, inserted into
-- soniq_finished_jobs in the same statement. Dedup keys live in soniq_dedup_keys, so that a key
-- outlives its job's move for as long as the job's retention says.
--
-- An upgrade moves every finished row and every dedup key over. It refuses to run while a worker
-- of the previous version is live: that worker would finish its jobs with writes the new schema
-- refuses, and they would be run again after its crash recovery.
DO $$
DECLARE
  live text;
BEGIN
  SELECT string_agg(id, ', ') INTO live FROM soniq_workers
  WHERE status <> 'stopped'
    AND last_heartbeat_at >= now() - make_interval(secs => COALESCE(heartbeat_timeout, 30));
  IF live IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'SQ002',
      MESSAGE = 'soniq setup: workers of the previous version are still running (' || live
        || '); stop them (SIGTERM drains them), then run soniq setup again';
  END IF;
END
$$;

CREATE TABLE soniq_finished_jobs (
  id                   uuid        NOT NULL,
  name                 text        NOT NULL,
  queue                text        NOT NULL,
  args                 json        NOT NULL,
  status               text        NOT NULL CHECK (status IN ('done', 'cancelled')),
  priority             integer     NOT NULL,
  attempts             integer     NOT NULL,
  max_attempts         integer     NOT NULL,
  interruptions        integer     NOT NULL,
  scheduled_at         timestamptz NOT NULL,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  started_at           timestamptz,
  finished_at          timestamptz NOT NULL,
  worker_id            text,
  claim_token          uuid,
  last_error           text,
  result               json,
  result_expires_at    timestamptz NOT NULL,
  dedup_key            text,
  meta                 json,
  start_known          boolean     NOT NULL,
  uncharged_recoveries integer     NOT NULL,
  trace_context        text,
  CONSTRAINT soniq_finished_jobs_pkey PRIMARY KEY (id)
);
CREATE INDEX soniq_finished_jobs_expiry_idx ON soniq_finished_jobs (result_expires_at);

CREATE TABLE soniq_dedup_keys (
  dedup_key  text        NOT NULL,
  job_id     uuid        NOT NULL,
  -- NULL while the job is live; its finish sets it to the end of the job's retention.
  held_until timestamptz,
  CONSTRAINT soniq_dedup_keys_pkey PRIMARY KEY (dedup_key)
) WITH (fillfactor = 80);

INSERT INTO soniq_dedup_keys (dedup_key, job_id, held_until)
SELECT dedup_key, id,
       CASE WHEN status IN ('done', 'cancelled') THEN COALESCE(result_expires_at, now()) END
FROM soniq_jobs WHERE dedup_key IS NOT NULL;

INSERT INTO soniq_finished_jobs
SELECT id, name, queue, args, status, priority, attempts, max_attempts, interruptions,
       scheduled_at, created_at, updated_at, started_at, COALESCE(finished_at, updated_at),
       worker_id, claim_token, last_error, result, COALESCE(result_expires_at, now()), dedup_key,
       meta, start_known, uncharged_recoveries, trace_context
FROM soniq_jobs WHERE status IN ('done', 'cancelled');

DELETE FROM soniq_jobs WHERE status IN ('done', 'cancelled');

DROP INDEX soniq_jobs_created_idx;
DROP INDEX soniq_jobs_prune_idx;
-- soniq_jobs_dedup_key_idx stays: it holds that no two live jobs share a key, and processes of
-- the previous version still enqueue through it (their `ON CONFLICT` names it) during an upgrade.
ALTER TABLE soniq_jobs DROP CONSTRAINT soniq_jobs_status_check;
ALTER TABLE soniq_jobs ADD CONSTRAINT soniq_jobs_status_check
  CHECK (status IN ('queued', 'processing'));

-- Counts of finished jobs, so that no operator read counts the history (docs/backends.md,
-- "Counting without scanning"): each statement that moves jobs into soniq_finished_jobs adds them
-- here per queue, status and minute (`kind` = 'done' or 'cancelled'), and each that removes them
-- (prune, delete, run again) adds them as 'done_gone' / 'cancelled_gone'; kept = in − gone. A row
-- belongs to one server process (`writer` = pg_backend_pid()), so concurrent completions never
-- wait on one counter row. The maintenance leader folds older minutes into writer 0, and minutes
-- older than a day into one row per queue and kind (bucket '-infinity').
CREATE TABLE soniq_job_counts (
  queue  text             NOT NULL,
  kind   text             NOT NULL,
  bucket timestamptz      NOT NULL,
  writer integer          NOT NULL,
  n      bigint           NOT NULL,
  -- Seconds from due to start, summed over the done jobs counted (the wait a queue's jobs saw).
  wait_s double precision NOT NULL DEFAULT 0,
  CONSTRAINT soniq_job_counts_pkey PRIMARY KEY (queue, kind, bucket, writer)
);
INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n)
SELECT queue, status, '-infinity', 0, count(*) FROM soniq_finished_jobs GROUP BY queue, status;

-- Listings order by the time-ordered id (UUIDv7). Ids made before version 7 (a database older
-- than time-ordered ids) are not in time order: these two indexes, empty for every job made
-- since, let a listing show those older rows after the rest, by created_at.
CREATE INDEX soniq_jobs_legacy_order_idx ON soniq_jobs (created_at DESC, id DESC)
  WHERE substr(id::text, 15, 1) <> '7';
CREATE INDEX soniq_finished_jobs_legacy_order_idx ON soniq_finished_jobs (created_at DESC, id DESC)
  WHERE substr(id::text, 15, 1) <> '7';

-- A queue table: every row is written three times and deleted within seconds, so vacuum it by
-- dead-row count, not by a fraction of a table whose size swings from empty to a backlog.
ALTER TABLE soniq_jobs SET (
  autovacuum_vacuum_scale_factor = 0,
  autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_vacuum_insert_threshold = 20000,
  autovacuum_vacuum_cost_delay = 0
);

-- A worker records the schema version it was built for; one older than this schema is refused
-- at registration with a message saying so (earlier versions never set it).
ALTER TABLE soniq_workers ADD COLUMN schema_version integer;
CREATE FUNCTION soniq_refuse_old_workers() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'SQ001',
    MESSAGE = 'this database was upgraded by soniq setup to schema version 10; this worker '
      || 'is of an earlier version of soniq and cannot run on it: upgrade the worker';
END;
$$;
-- On every write of such a row, so that a worker of the previous version that was stopped (or
-- paused) through the upgrade and comes back is refused at its next heartbeat as well.
CREATE TRIGGER soniq_workers_schema_version BEFORE INSERT OR UPDATE ON soniq_workers
  FOR EACH ROW WHEN (NEW.schema_version IS NULL OR NEW.schema_version < 10)
  EXECUTE FUNCTION soniq_refuse_old_workers();
