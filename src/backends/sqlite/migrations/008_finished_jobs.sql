-- Finished jobs leave the hot table (docs/backends.md, "Two tables: live jobs and finished jobs").
--
-- soniq_jobs keeps only live rows (queued, processing). A job that ends done or cancelled is
-- deleted from it and, unless its retention is 0, inserted into soniq_finished_jobs in the same
-- transaction. Dedup keys live in soniq_dedup_keys, so that a key outlives its job's move for as
-- long as the job's retention says.
--
-- The upgrade refuses to run while a worker of the previous version is live (the insert below
-- fails on the named CHECK): that worker would finish its jobs with writes this schema refuses.
CREATE TEMP TABLE soniq_upgrade_guard (
  live TEXT,
  CONSTRAINT "soniq setup: stop the workers of the previous version (SIGTERM drains them), then run soniq setup again"
    CHECK (live IS NULL)
);
INSERT INTO soniq_upgrade_guard (live)
SELECT group_concat(id, ', ') FROM soniq_workers
WHERE status <> 'stopped'
  AND last_heartbeat_at >= CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
                           - COALESCE(heartbeat_timeout_ms, 30000);
DROP TABLE soniq_upgrade_guard;

CREATE TABLE soniq_finished_jobs (
  id                   TEXT    NOT NULL PRIMARY KEY,
  name                 TEXT    NOT NULL,
  queue                TEXT    NOT NULL,
  args                 TEXT    NOT NULL,
  status               TEXT    NOT NULL CHECK (status IN ('done', 'cancelled')),
  priority             INTEGER NOT NULL,
  attempts             INTEGER NOT NULL,
  max_attempts         INTEGER NOT NULL,
  interruptions        INTEGER NOT NULL,
  scheduled_at         INTEGER NOT NULL,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  started_at           INTEGER,
  finished_at          INTEGER NOT NULL,
  worker_id            TEXT,
  claim_token          TEXT,
  last_error           TEXT,
  result               TEXT,
  result_expires_at    INTEGER NOT NULL,
  dedup_key            TEXT,
  meta                 TEXT,
  start_known          INTEGER NOT NULL CHECK (start_known IN (0, 1)),
  uncharged_recoveries INTEGER NOT NULL,
  trace_context        TEXT
) STRICT;
CREATE INDEX soniq_finished_jobs_expiry ON soniq_finished_jobs (result_expires_at);

CREATE TABLE soniq_dedup_keys (
  dedup_key  TEXT    NOT NULL PRIMARY KEY,
  job_id     TEXT    NOT NULL,
  -- NULL while the job is live; its finish sets it to the end of the job's retention.
  held_until INTEGER
) STRICT;

INSERT INTO soniq_dedup_keys (dedup_key, job_id, held_until)
SELECT dedup_key, id,
       CASE WHEN status IN ('done', 'cancelled')
            THEN COALESCE(result_expires_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER))
       END
FROM soniq_jobs WHERE dedup_key IS NOT NULL;

INSERT INTO soniq_finished_jobs
SELECT id, name, queue, args, status, priority, attempts, max_attempts, interruptions,
       scheduled_at, created_at, updated_at, started_at, COALESCE(finished_at, updated_at),
       worker_id, claim_token, last_error, result,
       COALESCE(result_expires_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)), dedup_key,
       meta, start_known, uncharged_recoveries, trace_context
FROM soniq_jobs WHERE status IN ('done', 'cancelled');

-- Counts of finished jobs, so that no operator read counts the history (docs/backends.md,
-- "Counting without scanning"): each transaction that moves jobs into soniq_finished_jobs adds
-- them here per queue, status and minute (`kind` = 'done' or 'cancelled'; `bucket` = the minute's
-- first millisecond), and each that removes them (prune, delete, run again) adds them as
-- 'done_gone' / 'cancelled_gone'; kept = in − gone. `writer` is always 0 here (one writer at a
-- time). The pruner folds minutes older than a day into one row per queue and kind (bucket 0).
CREATE TABLE soniq_job_counts (
  queue  TEXT    NOT NULL,
  kind   TEXT    NOT NULL,
  bucket INTEGER NOT NULL,
  writer INTEGER NOT NULL,
  n      INTEGER NOT NULL,
  -- Seconds from due to start, summed over the done jobs counted.
  wait_s REAL    NOT NULL DEFAULT 0,
  PRIMARY KEY (queue, kind, bucket, writer)
) STRICT;
INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n)
SELECT queue, status, 0, 0, count(*) FROM soniq_finished_jobs GROUP BY queue, status;

-- SQLite cannot change a CHECK in place: the live rows move to a new soniq_jobs.
CREATE TABLE soniq_live_jobs (
  id                   TEXT    NOT NULL PRIMARY KEY,
  name                 TEXT    NOT NULL,
  queue                TEXT    NOT NULL,
  args                 TEXT    NOT NULL,
  status               TEXT    NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'processing')),
  priority             INTEGER NOT NULL DEFAULT 0,
  attempts             INTEGER NOT NULL DEFAULT 0,
  max_attempts         INTEGER NOT NULL,
  interruptions        INTEGER NOT NULL DEFAULT 0,
  scheduled_at         INTEGER NOT NULL,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  started_at           INTEGER,
  finished_at          INTEGER,
  worker_id            TEXT,
  claim_token          TEXT,
  last_error           TEXT,
  result               TEXT,
  result_expires_at    INTEGER,
  dedup_key            TEXT,
  meta                 TEXT,
  start_known          INTEGER NOT NULL DEFAULT 1 CHECK (start_known IN (0, 1)),
  uncharged_recoveries INTEGER NOT NULL DEFAULT 0 CHECK (uncharged_recoveries >= 0),
  trace_context        TEXT
) STRICT;
INSERT INTO soniq_live_jobs
SELECT id, name, queue, args, status, priority, attempts, max_attempts, interruptions,
       scheduled_at, created_at, updated_at, started_at, finished_at, worker_id, claim_token,
       last_error, result, result_expires_at, dedup_key, meta, start_known, uncharged_recoveries,
       trace_context
FROM soniq_jobs WHERE status IN ('queued', 'processing');
DROP TABLE soniq_jobs;
ALTER TABLE soniq_live_jobs RENAME TO soniq_jobs;

-- Claims: due queued jobs in claim order (priority, due time, creation time, id).
CREATE INDEX soniq_jobs_claim ON soniq_jobs (priority, scheduled_at, created_at, id)
  WHERE status = 'queued';
-- Crash recovery and a worker's own rows.
CREATE INDEX soniq_jobs_processing ON soniq_jobs (worker_id) WHERE status = 'processing';

-- Listings order by the time-ordered id (UUIDv7). Ids made before version 7 are not in time
-- order: these two indexes, empty for every job made since, let a listing show those older rows
-- after the rest, by created_at.
CREATE INDEX soniq_jobs_legacy_order ON soniq_jobs (created_at DESC, id DESC)
  WHERE substr(id, 15, 1) <> '7';
CREATE INDEX soniq_finished_jobs_legacy_order ON soniq_finished_jobs (created_at DESC, id DESC)
  WHERE substr(id, 15, 1) <> '7';

-- A worker records the schema version it was built for; one older than this schema is refused
-- at registration with a message saying so (earlier versions never set it).
ALTER TABLE soniq_workers ADD COLUMN schema_version INTEGER;
CREATE TRIGGER soniq_workers_schema_version BEFORE INSERT ON soniq_workers
WHEN NEW.schema_version IS NULL OR NEW.schema_version < 8
BEGIN
  SELECT RAISE(ABORT, 'this database was upgraded by soniq setup to schema version 8; this worker is of an earlier version of soniq and cannot run on it: upgrade the worker');
END;
-- On every update of such a row too, so that a worker of the previous version that was stopped
-- (or paused) through the upgrade and comes back is refused at its next heartbeat as well.
CREATE TRIGGER soniq_workers_schema_version_update BEFORE UPDATE ON soniq_workers
WHEN NEW.schema_version IS NULL OR NEW.schema_version < 8
BEGIN
  SELECT RAISE(ABORT, 'this database was upgraded by soniq setup to schema version 8; this worker is of an earlier version of soniq and cannot run on it: upgrade the worker');
END;
