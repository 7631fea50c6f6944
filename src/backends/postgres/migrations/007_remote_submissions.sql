-- Remote jobs (seed 002): one submission row per remote job, keyed by the job id. The phase is
-- written before each side effect (submitting before the request; accepted with the task id and
-- the hand-off in one transaction).
CREATE TABLE soniq_remote_submissions (
  job_id        uuid        PRIMARY KEY,
  job_name      text        NOT NULL,
  queue         text        NOT NULL,
  phase         text        NOT NULL
                CHECK (phase IN ('submitting', 'accepted', 'frozen', 'released', 'finished')),
  -- The idempotency key is job_id || ':' || generation.
  generation    integer     NOT NULL DEFAULT 1 CHECK (generation >= 1),
  task_id       text        CHECK (task_id IS NULL OR length(task_id) BETWEEN 1 AND 256),
  submitted_at  timestamptz,
  accepted_at   timestamptz,
  frozen_at     timestamptz,
  frozen_reason text,
  -- Next poll (accepted) or reconcile (frozen).
  due_at        timestamptz,
  polls         integer     NOT NULL DEFAULT 0,
  -- A callback's or operator's answer, JSON text: {"kind":"done","result":…} | {"kind":"failed",…}.
  answer        text,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Polls and reconciles: due rows in custody.
CREATE INDEX soniq_remote_submissions_due_idx ON soniq_remote_submissions (due_at)
  WHERE phase IN ('accepted', 'frozen');

-- Callbacks by task id.
CREATE INDEX soniq_remote_submissions_task_idx ON soniq_remote_submissions (task_id)
  WHERE task_id IS NOT NULL;

-- Admission: submissions of one job name by start time.
CREATE INDEX soniq_remote_submissions_admission_idx
  ON soniq_remote_submissions (job_name, submitted_at);

-- Callbacks that arrived by task id before `accepted` was written; applied when it is.
CREATE TABLE soniq_remote_early_answers (
  task_id     text        PRIMARY KEY,
  job_name    text,
  answer      text        NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);
