-- Schedules (docs/schedules.md): definitions declared in code, state in the database.
-- Times are INTEGER milliseconds since the epoch (database clock); JSON is TEXT.

-- Soniq's own metadata per job (JSON text), e.g. the occurrence a scheduled job stands for.
ALTER TABLE soniq_jobs ADD COLUMN meta TEXT;

-- One row per schedule id. next_run_at is the durable cursor: an occurrence is taken by a
-- compare-and-set on it (and on revision) in the same transaction as the job's insert.
CREATE TABLE soniq_schedules (
  id             TEXT    NOT NULL PRIMARY KEY,
  job_name       TEXT    NOT NULL,
  queue          TEXT    NOT NULL,
  priority       INTEGER NOT NULL,
  max_attempts   INTEGER NOT NULL CHECK (max_attempts >= 1),
  args           TEXT    NOT NULL,
  cron           TEXT,
  every_seconds  REAL    CHECK (every_seconds >= 1),
  timezone       TEXT    NOT NULL,
  start_at       INTEGER,
  end_at         INTEGER,
  missed_policy  TEXT    NOT NULL CHECK (missed_policy IN ('skip', 'latest', 'all')),
  missed_grace   REAL    NOT NULL,
  missed_within  REAL    NOT NULL,
  missed_max     INTEGER NOT NULL,
  overlap        TEXT    NOT NULL CHECK (overlap IN ('allow', 'skip')),
  history_limit  INTEGER NOT NULL CHECK (history_limit >= 1),
  next_run_at    INTEGER,
  last_run_at    INTEGER,
  last_job_id    TEXT,
  paused         INTEGER NOT NULL DEFAULT 0,
  revision       INTEGER NOT NULL DEFAULT 1,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  CHECK ((cron IS NULL) <> (every_seconds IS NULL))
) STRICT;

CREATE INDEX soniq_schedules_next_run_at ON soniq_schedules (next_run_at)
  WHERE next_run_at IS NOT NULL;

-- One row per occurrence taken (bounded per schedule by history_limit).
CREATE TABLE soniq_schedule_runs (
  id           INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  schedule_id  TEXT    NOT NULL,
  occurrence   INTEGER NOT NULL,
  outcome      TEXT    NOT NULL
               CHECK (outcome IN ('enqueued', 'late', 'missed', 'skipped_overlap', 'paused')),
  job_id       TEXT,
  manual       INTEGER NOT NULL DEFAULT 0,
  recorded_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX soniq_schedule_runs_schedule ON soniq_schedule_runs (schedule_id, id);
