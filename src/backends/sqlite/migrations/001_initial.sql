-- Soniq SQLite schema, version 1.
--
-- Times are INTEGER milliseconds since the Unix epoch, taken from the database clock.
-- Arguments and results are TEXT holding the caller's JSON text unchanged.
-- Applied by src/backends/sqlite/migrate.ts inside one BEGIN IMMEDIATE transaction, so this
-- file must not contain BEGIN/COMMIT of its own.

-- Live jobs (queued, processing, done, cancelled). Dead-lettered jobs live in
-- soniq_dead_letter_jobs: a job is in exactly one of the two tables.
CREATE TABLE soniq_jobs (
  id                TEXT    NOT NULL PRIMARY KEY,
  name              TEXT    NOT NULL,
  queue             TEXT    NOT NULL,
  args              TEXT    NOT NULL,
  status            TEXT    NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'processing', 'done', 'cancelled')),
  priority          INTEGER NOT NULL DEFAULT 0,
  attempts          INTEGER NOT NULL DEFAULT 0,
  max_attempts      INTEGER NOT NULL,
  interruptions     INTEGER NOT NULL DEFAULT 0,
  scheduled_at      INTEGER NOT NULL,
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL,
  started_at        INTEGER,
  finished_at       INTEGER,
  worker_id         TEXT,
  claim_token       TEXT,
  last_error        TEXT,
  result            TEXT,
  result_expires_at INTEGER,
  dedup_key         TEXT
) STRICT;

-- A dedup key is held by at most one row of soniq_jobs, whatever its status.
CREATE UNIQUE INDEX soniq_jobs_dedup_key ON soniq_jobs (dedup_key) WHERE dedup_key IS NOT NULL;

-- Claims: due queued jobs in claim order (priority, due time, creation time, id).
CREATE INDEX soniq_jobs_claim ON soniq_jobs (priority, scheduled_at, created_at, id)
  WHERE status = 'queued';

-- Crash recovery looks up processing rows by owner.
CREATE INDEX soniq_jobs_processing ON soniq_jobs (worker_id) WHERE status = 'processing';

-- Pruning finished rows whose retention has passed.
CREATE INDEX soniq_jobs_expiry ON soniq_jobs (result_expires_at)
  WHERE status IN ('done', 'cancelled');

-- The dead-letter queue: the job as it was when moved, plus why and when.
-- dedup_key is not unique here: a dead-lettered job does not hold its key.
CREATE TABLE soniq_dead_letter_jobs (
  id            TEXT    NOT NULL PRIMARY KEY,
  name          TEXT    NOT NULL,
  queue         TEXT    NOT NULL,
  args          TEXT    NOT NULL,
  priority      INTEGER NOT NULL,
  attempts      INTEGER NOT NULL,
  max_attempts  INTEGER NOT NULL,
  interruptions INTEGER NOT NULL DEFAULT 0,
  scheduled_at  INTEGER NOT NULL,
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  started_at    INTEGER,
  finished_at   INTEGER,
  worker_id     TEXT,
  claim_token   TEXT,
  last_error    TEXT,
  dedup_key     TEXT,
  reason        TEXT    NOT NULL,
  dead_at       INTEGER NOT NULL
) STRICT;

CREATE INDEX soniq_dead_letter_jobs_dead_at ON soniq_dead_letter_jobs (dead_at);

-- One row per worker process incarnation. queues is a JSON array of queue names, or NULL for
-- every queue.
CREATE TABLE soniq_workers (
  id                TEXT    NOT NULL PRIMARY KEY,
  hostname          TEXT    NOT NULL,
  pid               INTEGER NOT NULL,
  queues            TEXT,
  concurrency       INTEGER NOT NULL,
  status            TEXT    NOT NULL DEFAULT 'running'
                    CHECK (status IN ('running', 'draining', 'stopped')),
  started_at        INTEGER NOT NULL,
  last_heartbeat_at INTEGER NOT NULL,
  stopped_at        INTEGER
) STRICT;

CREATE INDEX soniq_workers_started_at ON soniq_workers (started_at);
