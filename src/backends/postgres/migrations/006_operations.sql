-- Operations (issue 14): queues with pause and max_running, cancel requests and progress kept
-- beside each job, an append-only timeline of a job's unusual transitions, and what a worker
-- declares about itself (its heartbeat timeout, its shutdown state).
-- Runs inside the migration transaction with `search_path` set to the configured schema.

-- One row per queue that an operator configured. A queue without a row is not paused and has no
-- max_running. The claim skips paused queues and holds max_running across every process.
CREATE TABLE soniq_queues (
  name        text        PRIMARY KEY,
  paused      boolean     NOT NULL DEFAULT false,
  -- NULL: no limit. Otherwise the most processing rows the queue may have at once.
  max_running integer     CHECK (max_running >= 1),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Per-job controls, kept out of soniq_jobs so that progress written with every heartbeat does not
-- rewrite job rows (nor their indexes). A row exists only for a job that was asked to cancel or
-- that reported progress; it goes when its job is pruned or deleted.
CREATE TABLE soniq_job_controls (
  job_id              uuid             PRIMARY KEY,
  -- Set by a cancel request on a processing job; the owner records `cancelled` when it stops.
  cancel_requested_at timestamptz,
  -- The claim the request binds: it applies while the job's claim_token is this one.
  cancel_claim_token  uuid,
  -- The last reported fraction (0..1) and message, and when the heartbeat wrote them.
  progress            double precision CHECK (progress >= 0 AND progress <= 1),
  progress_message    text,
  progress_at         timestamptz
);

-- The timeline: unusual transitions only (NACK, recovery, snooze, retry, cancel request, cancel,
-- dead-letter, replay, run now, delete). Append-only; pruned by age (jobEventRetention).
CREATE TABLE soniq_job_events (
  id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id    uuid        NOT NULL,
  at        timestamptz NOT NULL DEFAULT now(),
  kind      text        NOT NULL,
  -- The attempt the transition belongs to (1-based), when known.
  attempt   integer,
  worker_id text,
  -- Free text: the error of a retry, the reason of a dead-letter move, "interruption 2/3", …
  detail    text
);

CREATE INDEX soniq_job_events_job_idx ON soniq_job_events (job_id, id);
CREATE INDEX soniq_job_events_at_idx ON soniq_job_events (at);

-- What a worker declares: the heartbeat timeout it keeps (seconds; liveness is judged by it, so
-- `status` and `recover` agree with the worker whatever the caller's settings), and its shutdown
-- state as the machine has it, with the drain's start and deadline.
ALTER TABLE soniq_workers
  ADD COLUMN heartbeat_timeout double precision,
  ADD COLUMN shutdown_state    text NOT NULL DEFAULT 'RUNNING'
    CHECK (shutdown_state IN ('RUNNING', 'DRAINING', 'FORCE_TIMEOUT_PATH', 'WAIT_FOR_THREAD',
                              'STOPPED')),
  ADD COLUMN drain_started_at  timestamptz,
  ADD COLUMN deadline_at       timestamptz;

-- Listing jobs newest first, and dead letters by time.
CREATE INDEX soniq_jobs_created_idx ON soniq_jobs (created_at DESC, id DESC);
