-- The SQLite schema after every migration, as a fresh `setup()` leaves it.
-- Written by `npm run schema:dump`; checked by test/schema/schema.test.ts. Do not edit.
-- Migrations: 001_initial, 002_leases, 003_schedules, 004_start_marks, 005_operations, 006_remote_submissions, 007_trace_context, 008_finished_jobs, 009_job_versions, 010_worker_capabilities, 011_worker_exits, 012_concurrency_keys, 013_rate_limits, 014_checkpoints, 015_workflows, 016_flow_ends, 017_finished_trigger, 018_flow_release_once, 019_flow_grouped_ends, 020_concurrency_key_column, 021_dead_letter_meta, 022_batch_add_on_success, 023_flow_group_heads, 024_rearm_waiting_only

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
  dead_at       INTEGER NOT NULL,
  version INTEGER NOT NULL DEFAULT 1,
  meta TEXT
) STRICT;

CREATE TABLE soniq_dedup_keys (
  dedup_key  TEXT    NOT NULL PRIMARY KEY,
  job_id     TEXT    NOT NULL,
  -- NULL while the job is live; its finish sets it to the end of the job's retention.
  held_until INTEGER
) STRICT;

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
  trace_context        TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  checkpoint TEXT,
  steps TEXT
) STRICT;

CREATE TABLE soniq_flow_counts (
  kind    TEXT    NOT NULL,
  outcome TEXT    NOT NULL,
  n       INTEGER NOT NULL,
  PRIMARY KEY (kind, outcome)
) STRICT;

CREATE TABLE soniq_flow_ends (
  seq      INTEGER PRIMARY KEY AUTOINCREMENT,
  kind     TEXT    NOT NULL CHECK (kind IN ('flow', 'batch')),
  id       TEXT    NOT NULL,
  outcome  TEXT    NOT NULL,
  ended_at INTEGER NOT NULL
) STRICT;

CREATE TABLE soniq_flow_grouping (
  active INTEGER NOT NULL PRIMARY KEY CHECK (active = 1)
) STRICT;

CREATE TABLE soniq_flow_nodes (
  job_id      TEXT    NOT NULL PRIMARY KEY,
  flow_id     TEXT,
  run_at      INTEGER,
  pending     INTEGER NOT NULL DEFAULT 0,
  retention_ms INTEGER NOT NULL DEFAULT 0,
  role        TEXT    NOT NULL DEFAULT 'job'
              CHECK (role IN ('job', 'member', 'batch', 'on_complete', 'on_success', 'on_failure')),
  created_at  INTEGER NOT NULL,
  members_left INTEGER NOT NULL DEFAULT 0,
  members_failed INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE soniq_job_controls (
  job_id              TEXT    NOT NULL PRIMARY KEY,
  cancel_requested_at INTEGER,
  cancel_claim_token  TEXT,
  progress            REAL    CHECK (progress >= 0 AND progress <= 1),
  progress_message    TEXT,
  progress_at         INTEGER
) STRICT;

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

CREATE TABLE soniq_job_deps (
  job_id     TEXT NOT NULL,
  dep_id     TEXT NOT NULL,
  on_failure TEXT NOT NULL DEFAULT 'fail' CHECK (on_failure IN ('fail', 'ignore', 'cancel')),
  dep_state  TEXT CHECK (dep_state IN ('done', 'cancelled', 'dead')),
  dep_result TEXT,
  PRIMARY KEY (job_id, dep_id)
) STRICT;

CREATE TABLE soniq_job_events (
  id        INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  job_id    TEXT    NOT NULL,
  at        INTEGER NOT NULL,
  kind      TEXT    NOT NULL,
  attempt   INTEGER,
  worker_id TEXT,
  detail    TEXT
) STRICT;

CREATE TABLE "soniq_jobs" (
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
  trace_context        TEXT,
  version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1),
  checkpoint TEXT,
  steps TEXT,
  concurrency_key TEXT
) STRICT;

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

CREATE TABLE soniq_queues (
  name        TEXT    NOT NULL PRIMARY KEY,
  paused      INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
  max_running INTEGER CHECK (max_running >= 1),
  updated_at  INTEGER NOT NULL,
  unclaimable_after INTEGER CHECK (unclaimable_after >= 1),
  paused_until INTEGER
) STRICT;

CREATE TABLE soniq_rate_pauses (
  key    TEXT    PRIMARY KEY,
  until  INTEGER NOT NULL
);

CREATE TABLE soniq_rate_starts (
  key         TEXT    NOT NULL,
  expires_at  INTEGER NOT NULL
);

CREATE TABLE soniq_remote_early_answers (
  task_id     TEXT    NOT NULL PRIMARY KEY,
  job_name    TEXT,
  answer      TEXT    NOT NULL,
  received_at INTEGER NOT NULL
) STRICT;

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
  updated_at     INTEGER NOT NULL, job_version INTEGER NOT NULL DEFAULT 1,
  CHECK ((cron IS NULL) <> (every_seconds IS NULL))
) STRICT;

CREATE TABLE soniq_worker_exits (
  exit_reason TEXT    NOT NULL PRIMARY KEY,
  exits       INTEGER NOT NULL DEFAULT 0,
  last_at     INTEGER NOT NULL
);

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
, heartbeat_timeout_ms INTEGER, shutdown_state TEXT NOT NULL DEFAULT 'RUNNING'
  CHECK (shutdown_state IN ('RUNNING', 'DRAINING', 'FORCE_TIMEOUT_PATH', 'WAIT_FOR_THREAD',
                            'STOPPED')), drain_started_at INTEGER, deadline_at INTEGER, schema_version INTEGER, job_versions TEXT) STRICT;

CREATE TABLE sqlite_sequence(name,seq);

CREATE INDEX soniq_dead_letter_jobs_dead_at ON soniq_dead_letter_jobs (dead_at);

CREATE INDEX soniq_finished_jobs_expiry ON soniq_finished_jobs (result_expires_at);

CREATE INDEX soniq_finished_jobs_legacy_order ON soniq_finished_jobs (created_at DESC, id DESC)
  WHERE substr(id, 15, 1) <> '7';

CREATE INDEX soniq_flow_nodes_flow ON soniq_flow_nodes (flow_id) WHERE flow_id IS NOT NULL;

CREATE INDEX soniq_flow_nodes_heads ON soniq_flow_nodes (job_id)
  WHERE flow_id IS NULL OR flow_id = job_id;

CREATE INDEX soniq_job_deps_dep ON soniq_job_deps (dep_id);

CREATE INDEX soniq_job_events_at ON soniq_job_events (at);

CREATE INDEX soniq_job_events_job ON soniq_job_events (job_id, id);

CREATE INDEX soniq_jobs_claim ON soniq_jobs (priority, scheduled_at, created_at, id)
  WHERE status = 'queued';

CREATE INDEX soniq_jobs_keyed_claim ON soniq_jobs
  (concurrency_key, priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND concurrency_key IS NOT NULL;

CREATE INDEX soniq_jobs_keyed_running ON soniq_jobs (concurrency_key)
  WHERE status = 'processing' AND concurrency_key IS NOT NULL;

CREATE INDEX soniq_jobs_legacy_order ON soniq_jobs (created_at DESC, id DESC)
  WHERE substr(id, 15, 1) <> '7';

CREATE INDEX soniq_jobs_processing ON soniq_jobs (worker_id) WHERE status = 'processing';

CREATE INDEX soniq_jobs_waiting ON soniq_jobs (queue, name, version, scheduled_at)
  WHERE status = 'queued';

CREATE INDEX soniq_rate_starts_expiry ON soniq_rate_starts (expires_at);

CREATE INDEX soniq_rate_starts_key ON soniq_rate_starts (key, expires_at);

CREATE INDEX soniq_remote_submissions_admission ON soniq_remote_submissions (job_name, submitted_at);

CREATE INDEX soniq_remote_submissions_due ON soniq_remote_submissions (due_at)
  WHERE phase IN ('accepted', 'frozen');

CREATE INDEX soniq_remote_submissions_task ON soniq_remote_submissions (task_id)
  WHERE task_id IS NOT NULL;

CREATE INDEX soniq_schedule_runs_schedule ON soniq_schedule_runs (schedule_id, id);

CREATE INDEX soniq_schedules_next_run_at ON soniq_schedules (next_run_at)
  WHERE next_run_at IS NOT NULL;

CREATE INDEX soniq_workers_started_at ON soniq_workers (started_at);

CREATE TRIGGER soniq_batch_finished AFTER UPDATE OF pending, members_left ON soniq_flow_nodes
WHEN NEW.role = 'batch' AND NEW.pending = 0 AND NEW.members_left = 0
  AND (OLD.pending <> 0 OR OLD.members_left <> 0)
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  VALUES ('batch', NEW.job_id, CASE WHEN NEW.members_failed > 0 THEN 'failed' ELSE 'succeeded' END,
          CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER));
END;

CREATE TRIGGER soniq_batch_member_dead AFTER INSERT ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.id AND role = 'member')
BEGIN
  UPDATE soniq_flow_nodes SET members_left = members_left - 1,
    members_failed = members_failed + 1
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = NEW.id);
END;

CREATE TRIGGER soniq_batch_rearm AFTER DELETE ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id)
  AND EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = OLD.id AND role = 'member')
BEGIN
  UPDATE soniq_flow_nodes SET members_left = members_left + 1,
    members_failed = max(members_failed - 1, 0)
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = OLD.id);
END;

CREATE TRIGGER soniq_finished_flow AFTER INSERT ON soniq_finished_jobs
WHEN NOT EXISTS (SELECT 1 FROM soniq_flow_grouping)
  AND (EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.id)
       OR EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = NEW.id AND dep_state IS NULL))
BEGIN
  -- A batch's member ended: counted down on its batch's row.
  UPDATE soniq_flow_nodes SET members_left = members_left - 1,
    members_failed = members_failed + (NEW.status <> 'done')
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = NEW.id AND role = 'member');
  -- A flow's root ended: done or cancelled.
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  SELECT 'flow', NEW.id, CASE WHEN NEW.status = 'done' THEN 'done' ELSE 'cancelled' END,
         CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
  WHERE EXISTS (SELECT 1 FROM soniq_flow_nodes
                WHERE job_id = NEW.id AND flow_id = NEW.id AND role = 'job');
  -- The job's edges end (their own triggers release, fail or cancel each dependant).
  UPDATE soniq_job_deps SET dep_state = NEW.status, dep_result = NEW.result
  WHERE dep_id = NEW.id AND dep_state IS NULL;
END;

CREATE TRIGGER soniq_flow_cancel AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IN ('cancelled', 'dead') AND NEW.on_failure = 'cancel'
BEGIN
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'cancelled', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000,
    0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  UPDATE soniq_dedup_keys
  SET held_until = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
    + COALESCE((SELECT max(retention_ms, 0) FROM soniq_flow_nodes WHERE job_id = NEW.job_id), 0)
  WHERE job_id = NEW.job_id AND dedup_key = (
    SELECT dedup_key FROM soniq_jobs
    WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999);
  INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), worker_id, claim_token,
    'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state, NULL,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
      + COALESCE((SELECT max(retention_ms, 0) FROM soniq_flow_nodes WHERE job_id = NEW.job_id), 0),
    dedup_key, meta, start_known, uncharged_recoveries, trace_context, version
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
  DELETE FROM soniq_jobs
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
END;

CREATE TRIGGER soniq_flow_count_down AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IS NOT NULL
  AND (NEW.dep_state = 'done' OR NEW.on_failure = 'ignore')
  AND NOT EXISTS (SELECT 1 FROM soniq_flow_grouping)
BEGIN
  UPDATE soniq_flow_nodes SET pending = pending - 1 WHERE job_id = NEW.job_id;
END;

CREATE TRIGGER soniq_flow_dead AFTER INSERT ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = NEW.id AND dep_state IS NULL)
BEGIN
  UPDATE soniq_job_deps SET dep_state = 'dead' WHERE dep_id = NEW.id AND dep_state IS NULL;
END;

CREATE TRIGGER soniq_flow_fail AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IN ('cancelled', 'dead') AND NEW.on_failure = 'fail'
BEGIN
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'dead', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000, 0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  DELETE FROM soniq_dedup_keys WHERE job_id = NEW.job_id AND dedup_key = (
    SELECT dedup_key FROM soniq_jobs
    WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999);
  INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts, max_attempts,
    interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
    claim_token, last_error, dedup_key, reason, dead_at, version, meta)
  SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at, finished_at, worker_id,
    claim_token, 'dependency ' || NEW.dep_id || ' ended ' || NEW.dep_state, dedup_key,
    'dependency_failed', CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), version, meta
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
  DELETE FROM soniq_jobs
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999;
END;

CREATE TRIGGER soniq_flow_rearm AFTER DELETE ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id)
  AND EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = OLD.id)
BEGIN
  UPDATE soniq_flow_nodes SET pending = pending + 1
  WHERE job_id IN (
    SELECT e.job_id FROM soniq_job_deps AS e JOIN soniq_jobs AS j ON j.id = e.job_id
    WHERE e.dep_id = OLD.id AND e.dep_state IS NOT NULL AND e.on_failure = 'ignore'
      AND j.status = 'queued' AND j.scheduled_at = 253402300799999);
  UPDATE soniq_job_deps SET dep_state = NULL, dep_result = NULL
  WHERE dep_id = OLD.id AND dep_state IS NOT NULL
    AND (EXISTS (SELECT 1 FROM soniq_jobs AS j
                 WHERE j.id = soniq_job_deps.job_id AND j.status = 'queued'
                   AND j.scheduled_at = 253402300799999)
         OR EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d
                    WHERE d.id = soniq_job_deps.job_id AND d.reason = 'dependency_failed'));
  UPDATE soniq_flow_nodes
  SET pending = (SELECT count(*) FROM soniq_job_deps AS o
                 WHERE o.job_id = soniq_flow_nodes.job_id AND o.dep_state IS NULL)
  WHERE job_id IN (
    SELECT d.id FROM soniq_job_deps AS e JOIN soniq_dead_letter_jobs AS d ON d.id = e.job_id
    WHERE e.dep_id = OLD.id AND d.reason = 'dependency_failed'
      AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                      WHERE o.job_id = d.id AND o.dep_state IN ('cancelled', 'dead')
                        AND o.on_failure <> 'ignore'));
  INSERT INTO soniq_jobs (id, name, queue, args, status, priority, attempts, max_attempts,
    interruptions, scheduled_at, created_at, updated_at, last_error, dedup_key, version, meta,
    concurrency_key)
  SELECT d.id, d.name, d.queue, d.args, 'queued', d.priority, 0, d.max_attempts, 0,
    253402300799999, d.created_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER),
    d.last_error, NULL, d.version, d.meta, json_extract(d.meta, '$.concurrency.key')
  FROM soniq_job_deps AS e JOIN soniq_dead_letter_jobs AS d ON d.id = e.job_id
  WHERE e.dep_id = OLD.id AND d.reason = 'dependency_failed'
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                    WHERE o.job_id = d.id AND o.dep_state IN ('cancelled', 'dead')
                      AND o.on_failure <> 'ignore');
  DELETE FROM soniq_dead_letter_jobs
  WHERE reason = 'dependency_failed' AND id IN (
    SELECT e.job_id FROM soniq_job_deps AS e JOIN soniq_jobs AS j ON j.id = e.job_id
    WHERE e.dep_id = OLD.id AND j.status = 'queued' AND j.scheduled_at = 253402300799999);
END;

CREATE TRIGGER soniq_flow_release AFTER UPDATE OF pending ON soniq_flow_nodes
WHEN NEW.pending <= 0 AND NEW.pending < OLD.pending AND NEW.role <> 'batch'
BEGIN
  UPDATE soniq_jobs
  SET scheduled_at = COALESCE(NEW.run_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)),
      updated_at = CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
  WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND NOT (NEW.role = 'on_failure'
             AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                             AND dep_state IN ('cancelled', 'dead')));
  -- A batch's onFailure callback whose members all ended done: cancelled, never run.
  INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
  SELECT queue, 'cancelled', (CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) / 60000) * 60000, 0, 1, 0
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND NEW.role = 'on_failure'
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                    AND dep_state IN ('cancelled', 'dead'))
  ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = n + 1;
  INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), created_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), started_at, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER), worker_id, claim_token,
    'every member of the batch ended done', NULL, CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) + max(NEW.retention_ms, 0),
    dedup_key, meta, start_known, uncharged_recoveries, trace_context, version
  FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND NEW.role = 'on_failure'
    AND NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE job_id = NEW.job_id
                    AND dep_state IN ('cancelled', 'dead'));
  DELETE FROM soniq_jobs WHERE id = NEW.job_id AND status = 'queued' AND scheduled_at = 253402300799999
    AND EXISTS (SELECT 1 FROM soniq_finished_jobs WHERE id = NEW.job_id);
END;

CREATE TRIGGER soniq_flow_root_dead AFTER INSERT ON soniq_dead_letter_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes
             WHERE job_id = NEW.id AND flow_id = NEW.id AND role = 'job')
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  VALUES ('flow', NEW.id, 'failed', CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER));
END;

CREATE TRIGGER soniq_jobs_concurrency_key AFTER INSERT ON soniq_jobs
WHEN NEW.concurrency_key IS NULL AND NEW.meta IS NOT NULL
  AND json_extract(NEW.meta, '$.concurrency.key') IS NOT NULL
BEGIN
  UPDATE soniq_jobs SET concurrency_key = json_extract(NEW.meta, '$.concurrency.key')
  WHERE id = NEW.id;
END;

CREATE TRIGGER soniq_workers_schema_version BEFORE INSERT ON soniq_workers
WHEN NEW.schema_version IS NULL OR NEW.schema_version < 8
BEGIN
  SELECT RAISE(ABORT, 'this database was upgraded by soniq setup to schema version 8; this worker is of an earlier version of soniq and cannot run on it: upgrade the worker');
END;

CREATE TRIGGER soniq_workers_schema_version_update BEFORE UPDATE ON soniq_workers
WHEN NEW.schema_version IS NULL OR NEW.schema_version < 8
BEGIN
  SELECT RAISE(ABORT, 'this database was upgraded by soniq setup to schema version 8; this worker is of an earlier version of soniq and cannot run on it: upgrade the worker');
END;
