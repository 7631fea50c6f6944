-- Remote jobs (seed 002): one submission row per remote job, keyed by the job id. The phase is
-- written before each side effect (submitting before the request; accepted with the task id and
-- the hand-off in one transaction). Times are INTEGER milliseconds (database clock).
CREATE TABLE soniq_remote_submissions (
  job_id        TEXT    NOT NULL PRIMARY KEY,
  job_name      TEXT    NOT NULL,
  queue         TEXT    NOT NULL,
  phase         TEXT    NOT NULL
                CHECK (phase IN ('submitting', 'accepted', 'frozen', 'released', 'finished')),
  -- The idempotency key is job_id || ':' || generation.
  generation    INTEGER NOT NULL DEFAULT 1 CHECK (generation >= 1),
  task_id       TEXT    CHECK (task_id IS NULL OR length(task_id) BETWEEN 1 AND 256),
  submitted_at  INTEGER,
  accepted_at   INTEGER,
  frozen_at     INTEGER,
  frozen_reason TEXT,
  -- Next poll (accepted) or reconcile (frozen).
  due_at        INTEGER,
  polls         INTEGER NOT NULL DEFAULT 0,
  -- A callback's or operator's answer, JSON text: {"kind":"done","result":…} | {"kind":"failed",…}.
  answer        TEXT,
  updated_at    INTEGER NOT NULL
) STRICT;

-- Polls and reconciles: due rows in custody.
CREATE INDEX soniq_remote_submissions_due ON soniq_remote_submissions (due_at)
  WHERE phase IN ('accepted', 'frozen');

-- Callbacks by task id.
CREATE INDEX soniq_remote_submissions_task ON soniq_remote_submissions (task_id)
  WHERE task_id IS NOT NULL;

-- Admission: submissions of one job name by start time.
CREATE INDEX soniq_remote_submissions_admission ON soniq_remote_submissions (job_name, submitted_at);

-- Callbacks that arrived by task id before `accepted` was written; applied when it is.
CREATE TABLE soniq_remote_early_answers (
  task_id     TEXT    NOT NULL PRIMARY KEY,
  job_name    TEXT,
  answer      TEXT    NOT NULL,
  received_at INTEGER NOT NULL
) STRICT;
