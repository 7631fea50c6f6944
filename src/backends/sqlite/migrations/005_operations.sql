-- Operations (issue 14): queues with pause and max_running, cancel requests and progress kept
-- beside each job, an append-only timeline of a job's unusual transitions, and what a worker
-- declares about itself (its heartbeat timeout, its shutdown state). Times are INTEGER ms.

-- One row per queue that an operator configured. A queue without a row is not paused and has no
-- max_running. The claim skips paused queues and holds max_running across every process.
CREATE TABLE soniq_queues (
  name        TEXT    NOT NULL PRIMARY KEY,
  paused      INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
  max_running INTEGER CHECK (max_running >= 1),
  updated_at  INTEGER NOT NULL
) STRICT;

-- Per-job controls, kept out of soniq_jobs (progress is written with every heartbeat). A row
-- exists only for a job asked to cancel or that reported progress.
CREATE TABLE soniq_job_controls (
  job_id              TEXT    NOT NULL PRIMARY KEY,
  cancel_requested_at INTEGER,
  cancel_claim_token  TEXT,
  progress            REAL    CHECK (progress >= 0 AND progress <= 1),
  progress_message    TEXT,
  progress_at         INTEGER
) STRICT;

-- The timeline: unusual transitions only. Append-only; pruned by age.
CREATE TABLE soniq_job_events (
  id        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  job_id    TEXT    NOT NULL,
  at        INTEGER NOT NULL,
  kind      TEXT    NOT NULL,
  attempt   INTEGER,
  worker_id TEXT,
  detail    TEXT
) STRICT;

CREATE INDEX soniq_job_events_job ON soniq_job_events (job_id, id);
CREATE INDEX soniq_job_events_at ON soniq_job_events (at);

-- What a worker declares: its heartbeat timeout (ms) and its shutdown state.
ALTER TABLE soniq_workers ADD COLUMN heartbeat_timeout_ms INTEGER;
ALTER TABLE soniq_workers ADD COLUMN shutdown_state TEXT NOT NULL DEFAULT 'RUNNING'
  CHECK (shutdown_state IN ('RUNNING', 'DRAINING', 'FORCE_TIMEOUT_PATH', 'WAIT_FOR_THREAD',
                            'STOPPED'));
ALTER TABLE soniq_workers ADD COLUMN drain_started_at INTEGER;
ALTER TABLE soniq_workers ADD COLUMN deadline_at INTEGER;

-- Listing jobs newest first.
CREATE INDEX soniq_jobs_created ON soniq_jobs (created_at DESC, id DESC);
