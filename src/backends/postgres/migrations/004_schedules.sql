-- Schedules (docs/schedules.md): definitions declared in code, state in the database.
-- Runs inside the migration transaction with `search_path` set to the configured schema.

-- Soniq's own metadata per job (JSON text), e.g. the occurrence a scheduled job stands for.
ALTER TABLE soniq_jobs ADD COLUMN meta json;

-- One row per schedule id. next_run_at is the durable cursor: an occurrence is taken by a
-- compare-and-set on it (and on revision) in the same transaction as the job's insert.
CREATE TABLE soniq_schedules (
  id             text        PRIMARY KEY,
  job_name       text        NOT NULL,
  queue          text        NOT NULL,
  priority       integer     NOT NULL,
  max_attempts   integer     NOT NULL CHECK (max_attempts >= 1),
  args           json        NOT NULL,
  cron           text,
  every_seconds  float8      CHECK (every_seconds >= 1),
  timezone       text        NOT NULL,
  start_at       timestamptz,
  end_at         timestamptz,
  missed_policy  text        NOT NULL CHECK (missed_policy IN ('skip', 'latest', 'all')),
  missed_grace   float8      NOT NULL,
  missed_within  float8      NOT NULL,
  missed_max     integer     NOT NULL,
  overlap        text        NOT NULL CHECK (overlap IN ('allow', 'skip')),
  history_limit  integer     NOT NULL CHECK (history_limit >= 1),
  next_run_at    timestamptz,
  last_run_at    timestamptz,
  last_job_id    uuid,
  paused         boolean     NOT NULL DEFAULT false,
  revision       integer     NOT NULL DEFAULT 1,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK ((cron IS NULL) <> (every_seconds IS NULL))
);

-- The scheduler's question: which cursor is due, and when is the next one.
CREATE INDEX soniq_schedules_next_run_at_idx ON soniq_schedules (next_run_at)
  WHERE next_run_at IS NOT NULL;

-- One row per occurrence taken (bounded per schedule by history_limit).
CREATE TABLE soniq_schedule_runs (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  schedule_id  text        NOT NULL,
  occurrence   timestamptz NOT NULL,
  outcome      text        NOT NULL
               CHECK (outcome IN ('enqueued', 'late', 'missed', 'skipped_overlap', 'paused')),
  job_id       uuid,
  manual       boolean     NOT NULL DEFAULT false,
  recorded_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX soniq_schedule_runs_schedule_idx ON soniq_schedule_runs (schedule_id, id);
