-- The SQLite schema after every migration, as a fresh `setup()` leaves it.
-- Written by `npm run schema:dump`; checked by test/schema/schema.test.ts. Do not edit.
-- Migrations: 001_initial, 002_leases, 004_start_marks

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
, start_known INTEGER NOT NULL DEFAULT 1
  CHECK (start_known IN (0, 1)), uncharged_recoveries INTEGER NOT NULL DEFAULT 0
  CHECK (uncharged_recoveries >= 0)) STRICT;

CREATE TABLE soniq_leases (
  name       TEXT    NOT NULL PRIMARY KEY,
  holder     TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
) STRICT;

CREATE TABLE soniq_migrations (
  version    INTEGER NOT NULL PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT;

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

CREATE INDEX soniq_dead_letter_jobs_dead_at ON soniq_dead_letter_jobs (dead_at);

CREATE INDEX soniq_jobs_claim ON soniq_jobs (priority, scheduled_at, created_at, id)
  WHERE status = 'queued';

CREATE UNIQUE INDEX soniq_jobs_dedup_key ON soniq_jobs (dedup_key) WHERE dedup_key IS NOT NULL;

CREATE INDEX soniq_jobs_expiry ON soniq_jobs (result_expires_at)
  WHERE status IN ('done', 'cancelled');

CREATE INDEX soniq_jobs_processing ON soniq_jobs (worker_id) WHERE status = 'processing';

CREATE INDEX soniq_workers_started_at ON soniq_workers (started_at);
