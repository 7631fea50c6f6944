-- The PostgreSQL schema after every migration, as a fresh `setup()` leaves it.
-- Written by `npm run schema:dump`; checked by test/schema/schema.test.ts. Do not edit.
-- Migrations: 001_initial.sql, 002_leases.sql, 003_queue_claim_index.sql, 004_schedules.sql, 005_start_marks.sql, 006_operations.sql, 007_remote_submissions.sql, 008_trace_context.sql, 009_notify_queued_only.sql, 010_finished_jobs.sql, 011_finished_partitions.sql, 012_job_versions.sql, 013_worker_capabilities.sql, 014_worker_exits.sql, 015_concurrency_keys.sql, 016_rate_limits.sql, 017_checkpoints.sql, 018_enqueue_function.sql, 019_workflows.sql, 020_keyed_claim_function.sql, 021_finish_notices.sql, 022_flow_ends.sql, 023_awaited_check.sql, 024_flow_settle_set.sql, 025_flow_settle_plans.sql, 026_release_wake_notice.sql, 027_claim_indexes_unkeyed.sql, 028_keyed_claim_one_path.sql, 029_awaited_once.sql, 030_flow_end_probes.sql, 031_dead_letter_meta.sql, 032_flow_member_kept.sql, 033_flow_short_count_locks.sql, 034_keyed_columns.sql, 035_batch_add_on_success.sql, 036_rearm_waiting_only.sql

CREATE TABLE soniq_dead_letter_jobs (
  id uuid NOT NULL,
  name text NOT NULL,
  queue text NOT NULL,
  args json NOT NULL,
  priority integer NOT NULL,
  attempts integer NOT NULL,
  max_attempts integer NOT NULL,
  interruptions integer NOT NULL DEFAULT 0,
  scheduled_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  started_at timestamp with time zone,
  finished_at timestamp with time zone,
  worker_id text,
  claim_token uuid,
  last_error text,
  dedup_key text,
  reason text NOT NULL,
  dead_at timestamp with time zone NOT NULL DEFAULT now(),
  version integer NOT NULL DEFAULT 1,
  meta json,
  CONSTRAINT soniq_dead_letter_jobs_pkey PRIMARY KEY (id)
);

CREATE TABLE soniq_dedup_keys (
  dedup_key text NOT NULL,
  job_id uuid NOT NULL,
  held_until timestamp with time zone,
  CONSTRAINT soniq_dedup_keys_pkey PRIMARY KEY (dedup_key)
);

CREATE TABLE soniq_finished_store (
  id uuid NOT NULL,
  name text NOT NULL,
  queue text NOT NULL,
  args json NOT NULL,
  status text NOT NULL,
  priority integer NOT NULL,
  attempts integer NOT NULL,
  max_attempts integer NOT NULL,
  interruptions integer NOT NULL,
  scheduled_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL,
  updated_at timestamp with time zone NOT NULL,
  started_at timestamp with time zone,
  finished_at timestamp with time zone NOT NULL,
  worker_id text,
  claim_token uuid,
  last_error text,
  result json,
  result_expires_at timestamp with time zone NOT NULL,
  dedup_key text,
  meta json,
  start_known boolean NOT NULL,
  uncharged_recoveries integer NOT NULL,
  trace_context text,
  version integer NOT NULL DEFAULT 1,
  checkpoint text,
  steps text,
  concurrency_key text,
  concurrency_limit integer,
  rate_limit integer,
  CONSTRAINT soniq_finished_store_pkey PRIMARY KEY (id, result_expires_at),
  CONSTRAINT soniq_finished_store_status_check CHECK ((status = ANY (ARRAY['done'::text, 'cancelled'::text])))
);

CREATE TABLE soniq_flow_counts (
  kind text NOT NULL,
  outcome text NOT NULL,
  n bigint NOT NULL,
  CONSTRAINT soniq_flow_counts_pkey PRIMARY KEY (kind, outcome)
);

CREATE TABLE soniq_flow_ends (
  seq bigint NOT NULL,
  kind text NOT NULL,
  id uuid NOT NULL,
  outcome text NOT NULL,
  ended_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT soniq_flow_ends_kind_check CHECK ((kind = ANY (ARRAY['flow'::text, 'batch'::text]))),
  CONSTRAINT soniq_flow_ends_pkey PRIMARY KEY (seq)
);

CREATE TABLE soniq_flow_nodes (
  job_id uuid NOT NULL,
  flow_id uuid,
  run_at timestamp with time zone,
  pending integer NOT NULL DEFAULT 0,
  retention_s double precision NOT NULL DEFAULT 0,
  role text NOT NULL DEFAULT 'job'::text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  members_left integer NOT NULL DEFAULT 0,
  members_failed integer NOT NULL DEFAULT 0,
  CONSTRAINT soniq_flow_nodes_pkey PRIMARY KEY (job_id),
  CONSTRAINT soniq_flow_nodes_role_check CHECK ((role = ANY (ARRAY['job'::text, 'member'::text, 'batch'::text, 'on_complete'::text, 'on_success'::text, 'on_failure'::text])))
);

CREATE TABLE soniq_job_controls (
  job_id uuid NOT NULL,
  cancel_requested_at timestamp with time zone,
  cancel_claim_token uuid,
  progress double precision,
  progress_message text,
  progress_at timestamp with time zone,
  CONSTRAINT soniq_job_controls_pkey PRIMARY KEY (job_id),
  CONSTRAINT soniq_job_controls_progress_check CHECK (((progress >= (0)::double precision) AND (progress <= (1)::double precision)))
);

CREATE TABLE soniq_job_counts (
  queue text NOT NULL,
  kind text NOT NULL,
  bucket timestamp with time zone NOT NULL,
  writer integer NOT NULL,
  n bigint NOT NULL,
  wait_s double precision NOT NULL DEFAULT 0,
  CONSTRAINT soniq_job_counts_pkey PRIMARY KEY (queue, kind, bucket, writer)
);

CREATE TABLE soniq_job_deps (
  job_id uuid NOT NULL,
  dep_id uuid NOT NULL,
  on_failure text NOT NULL DEFAULT 'fail'::text,
  dep_state text,
  dep_result json,
  CONSTRAINT soniq_job_deps_dep_state_check CHECK ((dep_state = ANY (ARRAY['done'::text, 'cancelled'::text, 'dead'::text]))),
  CONSTRAINT soniq_job_deps_on_failure_check CHECK ((on_failure = ANY (ARRAY['fail'::text, 'ignore'::text, 'cancel'::text]))),
  CONSTRAINT soniq_job_deps_pkey PRIMARY KEY (job_id, dep_id)
);

CREATE TABLE soniq_job_events (
  id bigint NOT NULL,
  job_id uuid NOT NULL,
  at timestamp with time zone NOT NULL DEFAULT now(),
  kind text NOT NULL,
  attempt integer,
  worker_id text,
  detail text,
  CONSTRAINT soniq_job_events_pkey PRIMARY KEY (id)
);

CREATE TABLE soniq_job_waits (
  job_id uuid NOT NULL,
  waiter text NOT NULL,
  since timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT soniq_job_waits_pkey PRIMARY KEY (job_id, waiter)
);

CREATE TABLE soniq_jobs (
  id uuid NOT NULL,
  name text NOT NULL,
  queue text NOT NULL,
  args json NOT NULL,
  status text NOT NULL DEFAULT 'queued'::text,
  priority integer NOT NULL DEFAULT 0,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  interruptions integer NOT NULL DEFAULT 0,
  scheduled_at timestamp with time zone NOT NULL DEFAULT now(),
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  started_at timestamp with time zone,
  finished_at timestamp with time zone,
  worker_id text,
  claim_token uuid,
  last_error text,
  result json,
  result_expires_at timestamp with time zone,
  dedup_key text,
  meta json,
  start_known boolean NOT NULL DEFAULT true,
  uncharged_recoveries integer NOT NULL DEFAULT 0,
  trace_context text,
  version integer NOT NULL DEFAULT 1,
  checkpoint text,
  steps text,
  concurrency_key text GENERATED ALWAYS AS (((meta -> 'concurrency'::text) ->> 'key'::text)) STORED,
  concurrency_limit integer GENERATED ALWAYS AS ((((meta -> 'concurrency'::text) ->> 'limit'::text))::integer) STORED,
  rate_limit integer GENERATED ALWAYS AS ((((meta -> 'rate'::text) ->> 'limit'::text))::integer) STORED,
  CONSTRAINT soniq_jobs_attempts_check CHECK ((attempts >= 0)),
  CONSTRAINT soniq_jobs_interruptions_check CHECK ((interruptions >= 0)),
  CONSTRAINT soniq_jobs_max_attempts_check CHECK ((max_attempts >= 1)),
  CONSTRAINT soniq_jobs_pkey PRIMARY KEY (id),
  CONSTRAINT soniq_jobs_status_check CHECK ((status = ANY (ARRAY['queued'::text, 'processing'::text]))),
  CONSTRAINT soniq_jobs_uncharged_recoveries_check CHECK ((uncharged_recoveries >= 0)),
  CONSTRAINT soniq_jobs_version_check CHECK ((version >= 1))
);

CREATE TABLE soniq_leases (
  name text NOT NULL,
  holder text NOT NULL,
  expires_at timestamp with time zone NOT NULL,
  CONSTRAINT soniq_leases_pkey PRIMARY KEY (name)
);

CREATE TABLE soniq_migrations (
  version integer NOT NULL,
  name text NOT NULL,
  applied_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT soniq_migrations_pkey PRIMARY KEY (version)
);

CREATE TABLE soniq_prune_mark (
  one boolean NOT NULL DEFAULT true,
  expires_at timestamp with time zone NOT NULL,
  id uuid NOT NULL,
  CONSTRAINT soniq_prune_mark_one_check CHECK (one),
  CONSTRAINT soniq_prune_mark_pkey PRIMARY KEY (one)
);

CREATE TABLE soniq_queues (
  name text NOT NULL,
  paused boolean NOT NULL DEFAULT false,
  max_running integer,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  unclaimable_after integer,
  paused_until timestamp with time zone,
  CONSTRAINT soniq_queues_max_running_check CHECK ((max_running >= 1)),
  CONSTRAINT soniq_queues_pkey PRIMARY KEY (name),
  CONSTRAINT soniq_queues_unclaimable_after_check CHECK ((unclaimable_after >= 1))
);

CREATE TABLE soniq_rate_pauses (
  key text NOT NULL,
  until timestamp with time zone NOT NULL,
  CONSTRAINT soniq_rate_pauses_pkey PRIMARY KEY (key)
);

CREATE TABLE soniq_rate_starts (
  key text NOT NULL,
  expires_at timestamp with time zone NOT NULL
);

CREATE TABLE soniq_remote_early_answers (
  task_id text NOT NULL,
  job_name text,
  answer text NOT NULL,
  received_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT soniq_remote_early_answers_pkey PRIMARY KEY (task_id)
);

CREATE TABLE soniq_remote_submissions (
  job_id uuid NOT NULL,
  job_name text NOT NULL,
  queue text NOT NULL,
  phase text NOT NULL,
  generation integer NOT NULL DEFAULT 1,
  task_id text,
  submitted_at timestamp with time zone,
  accepted_at timestamp with time zone,
  frozen_at timestamp with time zone,
  frozen_reason text,
  due_at timestamp with time zone,
  polls integer NOT NULL DEFAULT 0,
  answer text,
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT soniq_remote_submissions_generation_check CHECK ((generation >= 1)),
  CONSTRAINT soniq_remote_submissions_phase_check CHECK ((phase = ANY (ARRAY['submitting'::text, 'accepted'::text, 'frozen'::text, 'released'::text, 'finished'::text]))),
  CONSTRAINT soniq_remote_submissions_pkey PRIMARY KEY (job_id),
  CONSTRAINT soniq_remote_submissions_task_id_check CHECK (((task_id IS NULL) OR ((length(task_id) >= 1) AND (length(task_id) <= 256))))
);

CREATE TABLE soniq_schedule_runs (
  id bigint NOT NULL,
  schedule_id text NOT NULL,
  occurrence timestamp with time zone NOT NULL,
  outcome text NOT NULL,
  job_id uuid,
  manual boolean NOT NULL DEFAULT false,
  recorded_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT soniq_schedule_runs_outcome_check CHECK ((outcome = ANY (ARRAY['enqueued'::text, 'late'::text, 'missed'::text, 'skipped_overlap'::text, 'paused'::text]))),
  CONSTRAINT soniq_schedule_runs_pkey PRIMARY KEY (id)
);

CREATE TABLE soniq_schedules (
  id text NOT NULL,
  job_name text NOT NULL,
  queue text NOT NULL,
  priority integer NOT NULL,
  max_attempts integer NOT NULL,
  args json NOT NULL,
  cron text,
  every_seconds double precision,
  timezone text NOT NULL,
  start_at timestamp with time zone,
  end_at timestamp with time zone,
  missed_policy text NOT NULL,
  missed_grace double precision NOT NULL,
  missed_within double precision NOT NULL,
  missed_max integer NOT NULL,
  overlap text NOT NULL,
  history_limit integer NOT NULL,
  next_run_at timestamp with time zone,
  last_run_at timestamp with time zone,
  last_job_id uuid,
  paused boolean NOT NULL DEFAULT false,
  revision integer NOT NULL DEFAULT 1,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  job_version integer NOT NULL DEFAULT 1,
  CONSTRAINT soniq_schedules_check CHECK (((cron IS NULL) <> (every_seconds IS NULL))),
  CONSTRAINT soniq_schedules_every_seconds_check CHECK ((every_seconds >= (1)::double precision)),
  CONSTRAINT soniq_schedules_history_limit_check CHECK ((history_limit >= 1)),
  CONSTRAINT soniq_schedules_max_attempts_check CHECK ((max_attempts >= 1)),
  CONSTRAINT soniq_schedules_missed_policy_check CHECK ((missed_policy = ANY (ARRAY['skip'::text, 'latest'::text, 'all'::text]))),
  CONSTRAINT soniq_schedules_overlap_check CHECK ((overlap = ANY (ARRAY['allow'::text, 'skip'::text]))),
  CONSTRAINT soniq_schedules_pkey PRIMARY KEY (id)
);

CREATE TABLE soniq_worker_exits (
  exit_reason text NOT NULL,
  exits bigint NOT NULL DEFAULT 0,
  last_at timestamp with time zone NOT NULL,
  CONSTRAINT soniq_worker_exits_pkey PRIMARY KEY (exit_reason)
);

CREATE TABLE soniq_workers (
  id text NOT NULL,
  hostname text NOT NULL,
  pid integer NOT NULL,
  queues text[],
  concurrency integer NOT NULL,
  status text NOT NULL DEFAULT 'running'::text,
  started_at timestamp with time zone NOT NULL DEFAULT now(),
  last_heartbeat_at timestamp with time zone NOT NULL DEFAULT now(),
  stopped_at timestamp with time zone,
  heartbeat_timeout double precision,
  shutdown_state text NOT NULL DEFAULT 'RUNNING'::text,
  drain_started_at timestamp with time zone,
  deadline_at timestamp with time zone,
  schema_version integer,
  job_versions jsonb,
  CONSTRAINT soniq_workers_pkey PRIMARY KEY (id),
  CONSTRAINT soniq_workers_shutdown_state_check CHECK ((shutdown_state = ANY (ARRAY['RUNNING'::text, 'DRAINING'::text, 'FORCE_TIMEOUT_PATH'::text, 'WAIT_FOR_THREAD'::text, 'STOPPED'::text]))),
  CONSTRAINT soniq_workers_status_check CHECK ((status = ANY (ARRAY['running'::text, 'draining'::text, 'stopped'::text])))
);

CREATE VIEW soniq_finished_jobs AS
 SELECT f.id,
    f.name,
    f.queue,
    f.args,
    f.status,
    f.priority,
    f.attempts,
    f.max_attempts,
    f.interruptions,
    f.scheduled_at,
    f.created_at,
    f.updated_at,
    f.started_at,
    f.finished_at,
    f.worker_id,
    f.claim_token,
    f.last_error,
    f.result,
    f.result_expires_at,
    f.dedup_key,
    f.meta,
    f.start_known,
    f.uncharged_recoveries,
    f.trace_context,
    f.version,
    f.checkpoint,
    f.steps,
    f.concurrency_key,
    f.concurrency_limit,
    f.rate_limit
   FROM soniq_finished_store f
  WHERE (((f.result_expires_at, f.id) > ( SELECT m.expires_at,
            m.id
           FROM soniq_prune_mark m))) IS TRUE;

CREATE INDEX soniq_dead_letter_jobs_dead_at_idx ON soniq_dead_letter_jobs USING btree (dead_at);
CREATE INDEX soniq_finished_store_expiry_idx ON ONLY soniq_finished_store USING btree (result_expires_at, id);
CREATE INDEX soniq_finished_store_legacy_order_idx ON ONLY soniq_finished_store USING btree (created_at DESC, id DESC) WHERE (substr((id)::text, 15, 1) <> '7'::text);
CREATE INDEX soniq_flow_nodes_flow_idx ON soniq_flow_nodes USING btree (flow_id) WHERE (flow_id IS NOT NULL);
CREATE INDEX soniq_job_deps_dep_idx ON soniq_job_deps USING btree (dep_id);
CREATE INDEX soniq_job_events_at_idx ON soniq_job_events USING btree (at);
CREATE INDEX soniq_job_events_job_idx ON soniq_job_events USING btree (job_id, id);
CREATE INDEX soniq_jobs_claim_idx ON soniq_jobs USING btree (priority, scheduled_at, created_at, id) WHERE ((status = 'queued'::text) AND ((meta IS NULL) OR ((meta -> 'concurrency'::text) IS NULL)));
CREATE UNIQUE INDEX soniq_jobs_dedup_key_idx ON soniq_jobs USING btree (dedup_key) WHERE (dedup_key IS NOT NULL);
CREATE INDEX soniq_jobs_keyed_claim_idx ON soniq_jobs USING btree (concurrency_key, priority, scheduled_at, created_at, id) WHERE ((status = 'queued'::text) AND (concurrency_key IS NOT NULL));
CREATE INDEX soniq_jobs_keyed_queue_idx ON soniq_jobs USING btree (queue, scheduled_at) WHERE ((status = 'queued'::text) AND (meta IS NOT NULL) AND ((meta -> 'concurrency'::text) IS NOT NULL));
CREATE INDEX soniq_jobs_keyed_running_idx ON soniq_jobs USING btree (concurrency_key) WHERE ((status = 'processing'::text) AND (concurrency_key IS NOT NULL));
CREATE INDEX soniq_jobs_legacy_order_idx ON soniq_jobs USING btree (created_at DESC, id DESC) WHERE (substr((id)::text, 15, 1) <> '7'::text);
CREATE INDEX soniq_jobs_processing_idx ON soniq_jobs USING btree (worker_id) WHERE (status = 'processing'::text);
CREATE INDEX soniq_jobs_queue_claim_idx ON soniq_jobs USING btree (queue, priority, scheduled_at, created_at, id) WHERE ((status = 'queued'::text) AND ((meta IS NULL) OR ((meta -> 'concurrency'::text) IS NULL)));
CREATE INDEX soniq_jobs_waiting_idx ON soniq_jobs USING btree (queue, name, version, scheduled_at) WHERE (status = 'queued'::text);
CREATE INDEX soniq_rate_starts_expiry_idx ON soniq_rate_starts USING btree (expires_at);
CREATE INDEX soniq_rate_starts_key_idx ON soniq_rate_starts USING btree (key, expires_at);
CREATE INDEX soniq_remote_submissions_admission_idx ON soniq_remote_submissions USING btree (job_name, submitted_at);
CREATE INDEX soniq_remote_submissions_due_idx ON soniq_remote_submissions USING btree (due_at) WHERE (phase = ANY (ARRAY['accepted'::text, 'frozen'::text]));
CREATE INDEX soniq_remote_submissions_task_idx ON soniq_remote_submissions USING btree (task_id) WHERE (task_id IS NOT NULL);
CREATE INDEX soniq_schedule_runs_schedule_idx ON soniq_schedule_runs USING btree (schedule_id, id);
CREATE INDEX soniq_schedules_next_run_at_idx ON soniq_schedules USING btree (next_run_at) WHERE (next_run_at IS NOT NULL);
CREATE INDEX soniq_workers_started_at_idx ON soniq_workers USING btree (started_at DESC);

CREATE OR REPLACE FUNCTION soniq_batch_finished()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
BEGIN
  INSERT INTO soniq_flow_ends (kind, id, outcome)
  VALUES ('batch', NEW.job_id, CASE WHEN NEW.members_failed > 0 THEN 'failed' ELSE 'succeeded' END);
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_batch_rearm()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
BEGIN
  IF EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id) THEN
    UPDATE soniq_flow_nodes AS b SET members_left = b.members_left + 1,
      members_failed = GREATEST(b.members_failed - 1, 0)
    FROM soniq_flow_nodes AS m
    WHERE m.job_id = OLD.id AND m.role = 'member' AND b.job_id = m.flow_id AND b.role = 'batch';
  END IF;
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_enqueue(job_name text, args jsonb DEFAULT '{}'::jsonb, options jsonb DEFAULT '{}'::jsonb)
 RETURNS uuid
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  known constant text[] := ARRAY['queue', 'priority', 'maxAttempts', 'delay', 'runAt',
                                 'dedupKey', 'version', 'concurrency'];
  opts jsonb := COALESCE(options, '{}'::jsonb);
  bad_key text;
  v_queue text := 'default';
  v_priority integer := 0;
  v_max_attempts integer := 5;
  v_version integer := 1;
  v_due timestamptz := now();
  v_dedup text;
  v_meta json;
  v_args text;
  v_id uuid;
  v_bytes bytea;
  v_holder uuid;
  v_taken boolean;
BEGIN
  IF job_name IS NULL OR char_length(job_name) > 200
     OR job_name !~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$' THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_JOB_NAME: job name ' || COALESCE(to_json(job_name)::text, 'null')
        || ' must be dotted lower-case (letters, digits, _), e.g. "email.send", at most 200 characters';
  END IF;
  IF args IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_PAYLOAD: arguments of ' || job_name || ': SQL NULL (pass ''null''::jsonb for a JSON null)';
  END IF;
  v_args := args::text;
  IF octet_length(v_args) > 1048576 THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_PAYLOAD: arguments of ' || job_name || ': ' || octet_length(v_args)
        || ' bytes of JSON exceeds the limit of 1048576 bytes (the default maxPayloadBytes)';
  END IF;
  IF jsonb_typeof(opts) <> 'object' THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_ENQUEUE_OPTION: options must be a JSON object, got ' || jsonb_typeof(opts);
  END IF;
  SELECT k INTO bad_key FROM jsonb_object_keys(opts) AS k WHERE k <> ALL (known) ORDER BY k LIMIT 1;
  IF bad_key IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_ENQUEUE_OPTION: unknown option ' || to_json(bad_key)::text
        || ' (known: ' || array_to_string(known, ', ') || ')';
  END IF;

  IF opts ? 'queue' THEN
    IF jsonb_typeof(opts -> 'queue') <> 'string'
       OR (opts ->> 'queue') !~ '^[A-Za-z0-9_.:-]{1,100}$' THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: queue must be 1-100 of letters, digits and _ . : -, got '
          || (opts -> 'queue')::text;
    END IF;
    v_queue := opts ->> 'queue';
  END IF;

  v_priority := soniq_enqueue_integer_option(opts, 'priority', -1000, 1000, v_priority);
  v_max_attempts := soniq_enqueue_integer_option(opts, 'maxAttempts', 1, 1000, v_max_attempts);
  v_version := soniq_enqueue_integer_option(opts, 'version', 1, 2147483647, v_version);

  IF opts ? 'delay' AND opts ? 'runAt' THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_ENQUEUE_OPTION: give delay or runAt, not both';
  END IF;
  IF opts ? 'delay' THEN
    IF jsonb_typeof(opts -> 'delay') <> 'number' OR (opts ->> 'delay')::numeric < 0
       OR (opts ->> 'delay')::numeric > 315360000 THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: delay must be a number of seconds 0..315360000 (10 years), got '
          || (opts -> 'delay')::text;
    END IF;
    v_due := now() + make_interval(secs => (opts ->> 'delay')::float8);
  END IF;
  IF opts ? 'runAt' THEN
    IF jsonb_typeof(opts -> 'runAt') <> 'string'
       OR (opts ->> 'runAt') !~* '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$' THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: runAt must be an ISO-8601 instant with a time zone (Z or +hh:mm), got '
          || (opts -> 'runAt')::text;
    END IF;
    BEGIN
      v_due := (opts ->> 'runAt')::timestamptz;
    EXCEPTION WHEN others THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: runAt is not a valid instant: ' || (opts -> 'runAt')::text;
    END;
  END IF;

  IF opts ? 'dedupKey' THEN
    IF jsonb_typeof(opts -> 'dedupKey') <> 'string' OR char_length(opts ->> 'dedupKey') < 1
       OR char_length(opts ->> 'dedupKey') > 500 THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: dedupKey must be a string of 1 to 500 characters';
    END IF;
    v_dedup := opts ->> 'dedupKey';
  END IF;

  IF opts ? 'concurrency' THEN
    IF jsonb_typeof(opts -> 'concurrency') <> 'object'
       OR jsonb_typeof(opts -> 'concurrency' -> 'key') IS DISTINCT FROM 'string'
       OR char_length(opts -> 'concurrency' ->> 'key') NOT BETWEEN 1 AND 200
       OR jsonb_typeof(opts -> 'concurrency' -> 'limit') IS DISTINCT FROM 'number'
       OR (opts -> 'concurrency' ->> 'limit')::numeric < 1
       OR (opts -> 'concurrency' ->> 'limit')::numeric
          <> trunc((opts -> 'concurrency' ->> 'limit')::numeric)
       OR (SELECT count(*) FROM jsonb_object_keys(opts -> 'concurrency')) <> 2 THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: concurrency must be {"key": <1 to 200 characters>, "limit": <integer >= 1>}';
    END IF;
    v_meta := json_build_object('concurrency', json_build_object(
      'key', opts -> 'concurrency' ->> 'key',
      'limit', (opts -> 'concurrency' ->> 'limit')::integer));
  END IF;

  -- A time-ordered id: 48 bits of Unix milliseconds, version 7, the rest random (as the library's).
  v_bytes := uuid_send(gen_random_uuid());
  v_bytes := overlay(v_bytes PLACING substring(
    int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6);
  v_bytes := set_byte(v_bytes, 6, (get_byte(v_bytes, 6) & 15) | 112);
  v_id := encode(v_bytes, 'hex')::uuid;

  IF v_dedup IS NOT NULL THEN
    -- The library's rule (takeKeys in src/backends/postgres/finish-sql.ts): take a free key, or
    -- one whose hold has passed; a held key inserts nothing and answers its holder.
    INSERT INTO soniq_dedup_keys AS d (dedup_key, job_id) VALUES (v_dedup, v_id)
    ON CONFLICT (dedup_key) DO NOTHING;
    v_taken := FOUND;
    IF NOT v_taken THEN
      UPDATE soniq_dedup_keys AS d SET job_id = v_id, held_until = NULL
      WHERE d.dedup_key = v_dedup AND d.held_until <= now();
      v_taken := FOUND;
    END IF;
    IF NOT v_taken THEN
      SELECT d.job_id INTO v_holder FROM soniq_dedup_keys AS d WHERE d.dedup_key = v_dedup;
      IF v_holder IS NOT NULL THEN
        RETURN v_holder;
      END IF;
      RAISE EXCEPTION USING ERRCODE = '40001',
        MESSAGE = 'DEDUP_CONFLICT: the holder of dedup key ' || to_json(v_dedup)::text
          || ' changed during the enqueue; try again';
    END IF;
  END IF;

  INSERT INTO soniq_jobs (id, name, queue, args, priority, max_attempts, scheduled_at, dedup_key,
                          meta, version)
  VALUES (v_id, job_name, v_queue, v_args::json, v_priority, v_max_attempts, v_due, v_dedup,
          v_meta, v_version);
  RETURN v_id;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_enqueue_integer_option(opts jsonb, key text, lo numeric, hi numeric, fallback integer)
 RETURNS integer
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
DECLARE
  v numeric;
BEGIN
  IF NOT opts ? key THEN
    RETURN fallback;
  END IF;
  IF jsonb_typeof(opts -> key) = 'number' THEN
    v := (opts ->> key)::numeric;
    IF v = trunc(v) AND v BETWEEN lo AND hi THEN
      RETURN v::integer;
    END IF;
  END IF;
  RAISE EXCEPTION USING ERRCODE = '22023',
    MESSAGE = 'INVALID_ENQUEUE_OPTION: ' || key || ' must be an integer ' || lo || '..' || hi
      || ', got ' || (opts -> key)::text;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_flow_cancel_waiting(target uuid, why text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
  keep double precision;
BEGIN
  SELECT retention_s INTO keep FROM soniq_flow_nodes WHERE job_id = target;
  WITH moved AS (
    DELETE FROM soniq_jobs
    WHERE id = target AND status = 'queued' AND scheduled_at = waiting
    RETURNING *
  ), held AS (
    UPDATE soniq_dedup_keys AS d
    SET held_until = now() + make_interval(secs => GREATEST(COALESCE(keep, 0), 0))
    FROM moved AS m WHERE d.dedup_key = m.dedup_key AND d.job_id = m.id
    RETURNING 1
  ), counted AS (
    INSERT INTO soniq_job_counts AS c (queue, kind, bucket, writer, n)
    SELECT m.queue, 'cancelled', date_trunc('minute', now()), pg_backend_pid(), 1
    FROM moved AS m
    ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = c.n + 1
    RETURNING 1
  )
  INSERT INTO soniq_finished_store (id, name, queue, args, status, priority, attempts,
    max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
    worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
    uncharged_recoveries, trace_context, version)
  SELECT id, name, queue, args, 'cancelled', priority, attempts, max_attempts, interruptions,
    now(), created_at, now(), started_at, now(), worker_id, claim_token, why, NULL,
    now() + make_interval(secs => GREATEST(COALESCE(keep, 0), 0)), dedup_key, meta,
    start_known, uncharged_recoveries, trace_context, version
  FROM moved;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_flow_ended()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO <schema>
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
  e record;
  dead constant boolean := TG_TABLE_NAME = 'soniq_dead_letter_jobs';
  ids uuid[];
  ends jsonb;
  n_id uuid[];
  n_status text[];
  n_role text[];
  n_flow uuid[];
  s_job uuid[];
  s_dep uuid[];
  s_state text[];
  s_policy text[];
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_flow_nodes) AND NOT EXISTS (SELECT 1 FROM soniq_job_deps) THEN
    RETURN NULL;
  END IF;
  -- Each ended row's node, one probe of the primary key per row (a scalar sub-query returning
  -- the node's row, kept apart by OFFSET 0 so that it runs once per row): only the rows that
  -- have one. (A dead-letter entry has no status column: its end is `dead`.)
  IF dead THEN
    SELECT array_agg(x.id), array_agg('dead'::text), array_agg((x.node).role),
      array_agg((x.node).flow_id)
      INTO n_id, n_status, n_role, n_flow
    FROM (
      SELECT n.id, (SELECT f FROM soniq_flow_nodes AS f WHERE f.job_id = n.id) AS node
      FROM ended AS n OFFSET 0
    ) AS x
    WHERE (x.node).job_id IS NOT NULL;
  ELSE
    SELECT array_agg(x.id), array_agg(x.status), array_agg((x.node).role),
      array_agg((x.node).flow_id)
      INTO n_id, n_status, n_role, n_flow
    FROM (
      SELECT n.id, n.status, (SELECT f FROM soniq_flow_nodes AS f WHERE f.job_id = n.id) AS node
      FROM ended AS n OFFSET 0
    ) AS x
    WHERE (x.node).job_id IS NOT NULL;
  END IF;
  -- The open edges on the ended rows, ended first: they are written only by the end of their
  -- dependency (this statement's), so this waits for nobody, and the dependants are settled
  -- below, after the batches, with the edges returned here.
  ids := ARRAY(SELECT n.id FROM ended AS n);
  IF EXISTS (SELECT 1 FROM soniq_job_deps AS d WHERE d.dep_id = ANY(ids) AND d.dep_state IS NULL)
  THEN
    PERFORM set_config('soniq.flow_settle_deferred', 'on', true);
    IF dead THEN
      WITH u AS (
        UPDATE soniq_job_deps SET dep_state = 'dead'
        WHERE dep_id = ANY(ids) AND dep_state IS NULL
        RETURNING job_id, dep_id, dep_state, on_failure
      )
      SELECT array_agg(u.job_id), array_agg(u.dep_id), array_agg(u.dep_state),
        array_agg(u.on_failure)
        INTO s_job, s_dep, s_state, s_policy FROM u;
    ELSE
      -- The ended rows' states and results as one object keyed by id (each edge's a lookup in
      -- it; no join with `ended`). The result travels as its JSON text, unchanged.
      SELECT jsonb_object_agg(n.id::text, jsonb_build_array(n.status, n.result::text))
        INTO ends FROM ended AS n;
      WITH u AS (
        UPDATE soniq_job_deps SET dep_state = ends -> dep_id::text ->> 0,
          dep_result = (ends -> dep_id::text ->> 1)::json
        WHERE dep_id = ANY(ids) AND dep_state IS NULL
        RETURNING job_id, dep_id, dep_state, on_failure
      )
      SELECT array_agg(u.job_id), array_agg(u.dep_id), array_agg(u.dep_state),
        array_agg(u.on_failure)
        INTO s_job, s_dep, s_state, s_policy FROM u;
    END IF;
    PERFORM set_config('soniq.flow_settle_deferred', 'off', true);
  END IF;
  IF n_id IS NOT NULL THEN
    -- The members that ended count down their batch's row, batches in id order.
    FOR e IN
      SELECT m.flow_id, count(*)::int AS n,
        count(*) FILTER (WHERE m.status <> 'done')::int AS failed
      FROM unnest(n_status, n_role, n_flow) AS m(status, role, flow_id)
      WHERE m.role = 'member' AND m.flow_id IS NOT NULL
      GROUP BY m.flow_id ORDER BY m.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.failed
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    -- A flow's root that ended is its flow's end.
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', r.id,
      CASE WHEN dead THEN 'failed' WHEN r.status = 'done' THEN 'done' ELSE 'cancelled' END
    FROM unnest(n_id, n_status, n_role, n_flow) AS r(id, status, role, flow_id)
    WHERE r.role = 'job' AND r.flow_id = r.id
    ORDER BY r.id;
  END IF;
  IF s_job IS NOT NULL THEN
    PERFORM soniq_flow_settle(s_job, s_dep, s_state, s_policy);
  END IF;
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_flow_notify(due_queue text)
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || current_schema()) <= 63 THEN 'soniq_' || current_schema()
    ELSE 'soniq_' || md5(current_schema())
  END;
  payload constant text := CASE WHEN octet_length(due_queue) <= 1024 THEN due_queue ELSE '*' END;
BEGIN
  PERFORM pg_notify(channel, payload);
  IF current_setting('soniq.wake_notices', true) = 'on' THEN
    RAISE NOTICE USING MESSAGE = 'soniq:wake:' || payload;
  END IF;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_flow_rearm()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_jobs WHERE id = OLD.id) THEN
    RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = OLD.id) THEN
    RETURN NULL;
  END IF;
  UPDATE soniq_flow_nodes AS f SET pending = f.pending + 1
  FROM soniq_job_deps AS e, soniq_jobs AS j
  WHERE e.dep_id = OLD.id AND e.dep_state IS NOT NULL AND e.on_failure = 'ignore'
    AND f.job_id = e.job_id AND j.id = e.job_id AND j.status = 'queued'
    AND j.scheduled_at = waiting;
  UPDATE soniq_job_deps AS e SET dep_state = NULL, dep_result = NULL
  WHERE e.dep_id = OLD.id AND e.dep_state IS NOT NULL
    AND (EXISTS (SELECT 1 FROM soniq_jobs AS j
                 WHERE j.id = e.job_id AND j.status = 'queued' AND j.scheduled_at = waiting)
         OR EXISTS (SELECT 1 FROM soniq_dead_letter_jobs AS d
                    WHERE d.id = e.job_id AND d.reason = 'dependency_failed'));
  WITH back AS (
    SELECT d.id FROM soniq_job_deps AS e JOIN soniq_dead_letter_jobs AS d ON d.id = e.job_id
    WHERE e.dep_id = OLD.id AND d.reason = 'dependency_failed'
      AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                      WHERE o.job_id = d.id AND o.dep_state IN ('cancelled', 'dead')
                        AND o.on_failure <> 'ignore')
  ), counted AS (
    UPDATE soniq_flow_nodes AS f SET pending = (
      SELECT count(*) FROM soniq_job_deps AS o
      WHERE o.job_id = f.job_id AND o.dep_state IS NULL)
    FROM back AS b WHERE f.job_id = b.id
    RETURNING f.job_id
  ), restored AS (
    INSERT INTO soniq_jobs (id, name, queue, args, status, priority, attempts, max_attempts,
                            interruptions, scheduled_at, created_at, updated_at, last_error,
                            dedup_key, version, meta)
    SELECT d.id, d.name, d.queue, d.args, 'queued', d.priority, 0, d.max_attempts, 0, waiting,
           d.created_at, now(), d.last_error, NULL, d.version, d.meta
    FROM soniq_dead_letter_jobs AS d JOIN counted AS c ON c.job_id = d.id
    RETURNING id
  )
  DELETE FROM soniq_dead_letter_jobs AS d USING restored AS r WHERE d.id = r.id;
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_flow_settle(p_job uuid[], p_dep uuid[], p_state text[], p_policy text[])
 RETURNS void
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  waiting constant timestamptz := '9999-12-31 23:59:59.999999+00';
  e record;
  left_ integer;
  due timestamptz;
  q text;
BEGIN
  FOR e IN
    SELECT w.job_id,
      count(*) FILTER (WHERE w.dep_state = 'done' OR w.on_failure = 'ignore')::int AS good,
      (array_agg(w.dep_id ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_dep,
      (array_agg(w.dep_state ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_state,
      (array_agg(w.on_failure ORDER BY w.dep_id)
         FILTER (WHERE w.dep_state <> 'done' AND w.on_failure <> 'ignore'))[1] AS bad_policy
    FROM unnest(p_job, p_dep, p_state, p_policy) AS w(job_id, dep_id, dep_state, on_failure)
    GROUP BY w.job_id ORDER BY w.job_id
  LOOP
    IF e.good > 0 THEN
      UPDATE soniq_flow_nodes SET pending = pending - e.good WHERE job_id = e.job_id
        RETURNING pending, run_at INTO left_, due;
      IF left_ = 0 AND EXISTS (
        SELECT 1 FROM soniq_flow_nodes AS f WHERE f.job_id = e.job_id AND f.role = 'on_failure'
          AND NOT EXISTS (SELECT 1 FROM soniq_job_deps AS o
                          WHERE o.job_id = f.job_id AND o.dep_state IN ('cancelled', 'dead')))
      THEN
        -- A batch's onFailure callback whose members all ended done: it is cancelled, never run.
        PERFORM soniq_flow_cancel_waiting(e.job_id, 'every member of the batch ended done');
      ELSIF left_ = 0 THEN
        q := NULL;
        UPDATE soniq_jobs SET scheduled_at = COALESCE(due, now()), updated_at = now()
          WHERE id = e.job_id AND status = 'queued' AND scheduled_at = waiting
          RETURNING queue INTO q;
        IF q IS NOT NULL AND COALESCE(due, now()) <= now() THEN
          PERFORM soniq_flow_notify(q);
        END IF;
      END IF;
    END IF;
    IF e.bad_policy = 'fail' THEN
      WITH moved AS (
        DELETE FROM soniq_jobs
        WHERE id = e.job_id AND status = 'queued' AND scheduled_at = waiting
        RETURNING *
      ), released AS (
        DELETE FROM soniq_dedup_keys AS d USING moved AS m
        WHERE d.dedup_key = m.dedup_key AND d.job_id = m.id
        RETURNING 1
      ), counted AS (
        INSERT INTO soniq_job_counts AS c (queue, kind, bucket, writer, n)
        SELECT m.queue, 'dead', date_trunc('minute', now()), pg_backend_pid(), 1 FROM moved AS m
        ON CONFLICT (queue, kind, bucket, writer) DO UPDATE SET n = c.n + 1
        RETURNING 1
      )
      INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts, max_attempts,
        interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
        claim_token, last_error, dedup_key, reason, dead_at, version, meta)
      SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions, now(),
        created_at, now(), started_at, finished_at, worker_id, claim_token,
        'dependency ' || e.bad_dep || ' ended ' || e.bad_state, dedup_key, 'dependency_failed',
        now(), version, meta
      FROM moved;
    ELSIF e.bad_policy = 'cancel' THEN
      PERFORM soniq_flow_cancel_waiting(e.job_id,
        'dependency ' || e.bad_dep || ' ended ' || e.bad_state);
    END IF;
  END LOOP;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_flow_settle_ended()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  s_job uuid[];
  s_dep uuid[];
  s_state text[];
  s_policy text[];
BEGIN
  IF current_setting('soniq.flow_settle_deferred', true) = 'on' THEN
    RETURN NULL;
  END IF;
  SELECT array_agg(w.job_id), array_agg(w.dep_id), array_agg(w.dep_state), array_agg(w.on_failure)
    INTO s_job, s_dep, s_state, s_policy
  FROM (
    SELECT u.job_id, u.dep_id,
      min(u.dep_state) FILTER (WHERE NOT u.was) AS dep_state,
      min(u.on_failure) FILTER (WHERE NOT u.was) AS on_failure
    FROM (
      SELECT n.job_id, n.dep_id, n.dep_state, n.on_failure, false AS was FROM new_edges AS n
      UNION ALL
      SELECT o.job_id, o.dep_id, o.dep_state, o.on_failure, true FROM old_edges AS o
    ) AS u
    GROUP BY u.job_id, u.dep_id
    HAVING bool_or(u.was AND u.dep_state IS NULL) AND bool_or(NOT u.was AND u.dep_state IS NOT NULL)
  ) AS w;
  IF s_job IS NOT NULL THEN
    PERFORM soniq_flow_settle(s_job, s_dep, s_state, s_policy);
  END IF;
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_job_awaited(job uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
BEGIN
  RETURN EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = job);
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_jobs_awaited(jobs uuid[])
 RETURNS uuid[]
 LANGUAGE plpgsql
 SET search_path TO <schema>
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
  RETURN ARRAY(
    SELECT d.dep_id FROM soniq_job_deps AS d WHERE d.dep_id = ANY(jobs)
    UNION
    SELECT f.job_id FROM soniq_flow_nodes AS f
    WHERE f.job_id = ANY(jobs) AND (f.role = 'member' OR (f.role = 'job' AND f.flow_id = f.job_id)));
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_keyed_claim(p_worker text, p_limit integer, p_queues text[], p_start_known boolean, p_names text[], p_versions integer[], p_cursor text, p_lock text)
 RETURNS SETOF soniq_jobs
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
BEGIN
  RETURN QUERY SELECT * FROM soniq_keyed_claim(p_worker, p_limit, p_queues, p_start_known,
                                               p_names, p_versions, p_cursor, p_lock, true,
                                               false);
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_keyed_claim(p_worker text, p_limit integer, p_queues text[], p_start_known boolean, p_names text[], p_versions integer[], p_cursor text, p_lock text, p_restricted boolean, p_next_window boolean)
 RETURNS SETOF soniq_jobs
 LANGUAGE plpgsql
 SET search_path TO <schema>
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
DECLARE
  taken soniq_jobs[] := '{}';
  got soniq_jobs[];
  ids uuid[];
  last_key text;
  wait_ms bigint;
  -- No cursor: '' sorts before every key (keys have 1 to 200 characters), so the walk starts at
  -- the first key and has nothing to wrap round to; one statement text either way.
  cur constant text := COALESCE(p_cursor, '');
  -- The instant of each pass, read after the lock wait (statement_timestamp() would be the
  -- calling statement's start, before it): the jobs' started_at and the rate windows' clock.
  t timestamptz;
  -- Whether any key is paused (ctx.rateLimited, scope key): else the passes skip the probe per key.
  paused_keys boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(p_lock));
  PERFORM set_config('soniq.keyed_cursor', '', true);
  PERFORM set_config('soniq.keyed_next_window', '', true);
  IF p_limit < 1 THEN
    RETURN;
  END IF;
  FOR pass IN 1..2 LOOP
    t := clock_timestamp();
    paused_keys := EXISTS (SELECT 1 FROM soniq_rate_pauses AS p WHERE p.until > t);
    IF pass = 1 THEN
      -- The rotating pass: keys with queued jobs in key order from just after the cursor,
      -- wrapping round; each key's head while the key has room, until p_limit heads. The walk
      -- reads each key's first queued row in claim order (its first entry in the keyed index):
      -- when that row is due and passes the filters it is the head, else a probe finds it.
      WITH RECURSIVE after_keys(k, id, ok, lim, rate_lim) AS (
        (SELECT f.concurrency_key AS k, f.id,
                 (f.scheduled_at <= now()
                 AND (p_queues IS NULL OR f.queue = ANY(p_queues))
                 AND (p_names IS NULL OR f.name = ANY(p_names))
                 AND (f.version = 1 OR p_versions IS NULL
                      OR f.version <= p_versions[array_position(p_names, f.name)])
                 AND (NOT p_restricted OR f.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 f.concurrency_limit AS lim,
                 f.rate_limit AS rate_lim
          FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND f.concurrency_key IS NOT NULL
           AND f.concurrency_key > cur
         ORDER BY f.concurrency_key, f.priority, f.scheduled_at, f.created_at,
                  f.id
         LIMIT 1)
        UNION ALL
        SELECT n.k, n.id, n.ok, n.lim, n.rate_lim
        FROM after_keys AS a
        CROSS JOIN LATERAL (SELECT n.concurrency_key AS k, n.id,
                 (n.scheduled_at <= now()
                 AND (p_queues IS NULL OR n.queue = ANY(p_queues))
                 AND (p_names IS NULL OR n.name = ANY(p_names))
                 AND (n.version = 1 OR p_versions IS NULL
                      OR n.version <= p_versions[array_position(p_names, n.name)])
                 AND (NOT p_restricted OR n.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 n.concurrency_limit AS lim,
                 n.rate_limit AS rate_lim
          FROM soniq_jobs AS n
          WHERE n.status = 'queued' AND n.concurrency_key IS NOT NULL
            AND n.concurrency_key > a.k
          ORDER BY n.concurrency_key, n.priority, n.scheduled_at, n.created_at,
                   n.id
          LIMIT 1) AS n
      ), before_keys(k, id, ok, lim, rate_lim) AS (
        (SELECT f.concurrency_key AS k, f.id,
                 (f.scheduled_at <= now()
                 AND (p_queues IS NULL OR f.queue = ANY(p_queues))
                 AND (p_names IS NULL OR f.name = ANY(p_names))
                 AND (f.version = 1 OR p_versions IS NULL
                      OR f.version <= p_versions[array_position(p_names, f.name)])
                 AND (NOT p_restricted OR f.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 f.concurrency_limit AS lim,
                 f.rate_limit AS rate_lim
          FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND f.concurrency_key IS NOT NULL
           AND f.concurrency_key <= cur
         ORDER BY f.concurrency_key, f.priority, f.scheduled_at, f.created_at,
                  f.id
         LIMIT 1)
        UNION ALL
        SELECT n.k, n.id, n.ok, n.lim, n.rate_lim
        FROM before_keys AS a
        CROSS JOIN LATERAL (SELECT n.concurrency_key AS k, n.id,
                 (n.scheduled_at <= now()
                 AND (p_queues IS NULL OR n.queue = ANY(p_queues))
                 AND (p_names IS NULL OR n.name = ANY(p_names))
                 AND (n.version = 1 OR p_versions IS NULL
                      OR n.version <= p_versions[array_position(p_names, n.name)])
                 AND (NOT p_restricted OR n.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 n.concurrency_limit AS lim,
                 n.rate_limit AS rate_lim
          FROM soniq_jobs AS n
          WHERE n.status = 'queued' AND n.concurrency_key IS NOT NULL
            AND n.concurrency_key > a.k
            AND n.concurrency_key <= cur
          ORDER BY n.concurrency_key, n.priority, n.scheduled_at, n.created_at,
                   n.id
          LIMIT 1) AS n
      ), walk AS (
        SELECT k, id, ok, lim, rate_lim, 1 AS part FROM after_keys
        UNION ALL
        SELECT k, id, ok, lim, rate_lim, 2 AS part FROM before_keys
      ), heads AS MATERIALIZED (
        SELECT c.id, walk.k, walk.part
        FROM walk
        CROSS JOIN LATERAL (
          SELECT walk.id, walk.lim, walk.rate_lim WHERE walk.ok
          UNION ALL
          (SELECT q.id, q.concurrency_limit AS lim,
                  q.rate_limit AS rate_lim
           FROM soniq_jobs AS q
           WHERE NOT walk.ok AND q.status = 'queued' AND q.concurrency_key IS NOT NULL
             AND q.concurrency_key = walk.k
             AND (q.scheduled_at <= now()
                 AND (p_queues IS NULL OR q.queue = ANY(p_queues))
                 AND (p_names IS NULL OR q.name = ANY(p_names))
                 AND (q.version = 1 OR p_versions IS NULL
                      OR q.version <= p_versions[array_position(p_names, q.name)])
                 AND (NOT p_restricted OR q.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL)))
           ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
           LIMIT 1)
        ) AS c
        WHERE (c.lim IS NULL OR (SELECT count(*) FROM soniq_jobs AS r
                                 WHERE r.status = 'processing'
                                   AND r.concurrency_key IS NOT NULL
                                   AND r.concurrency_key = walk.k) < c.lim)
          AND (c.rate_lim IS NULL OR (SELECT count(*) FROM soniq_rate_starts AS st
                                      WHERE st.key = walk.k AND st.expires_at > t) < c.rate_lim)
          AND (NOT paused_keys
               OR NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p
                              WHERE p.key = walk.k AND p.until > t))
        LIMIT p_limit
      )
      SELECT ARRAY(SELECT heads.id FROM heads),
             (SELECT CASE WHEN bool_or(part = 2) THEN max(k) FILTER (WHERE part = 2)
                          ELSE max(k) END
              FROM heads)
      INTO ids, last_key;
      PERFORM set_config('soniq.keyed_cursor', COALESCE(last_key, ''), true);
    ELSE
      -- Fewer heads than asked: every key was passed. The full pass fills the rest: every key's
      -- due candidates ranked within their key first, then in claim order, within the keys'
      -- room (the rotating pass's claims count as running: this statement's snapshot has them).
      WITH RECURSIVE keys(k) AS (
        (SELECT f.concurrency_key FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND f.concurrency_key IS NOT NULL ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT n.concurrency_key FROM soniq_jobs AS n
                WHERE n.status = 'queued' AND n.concurrency_key IS NOT NULL
                  AND n.concurrency_key > keys.k
                ORDER BY 1 LIMIT 1)
        FROM keys WHERE keys.k IS NOT NULL
      ), candidates AS (
        SELECT c.id, c.priority, c.scheduled_at, c.created_at, c.rn
        FROM keys
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_jobs AS r
                            WHERE r.status = 'processing'
                              AND r.concurrency_key IS NOT NULL
                              AND r.concurrency_key = keys.k) AS running
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_rate_starts AS st
                            WHERE st.key = keys.k AND st.expires_at > t) AS started
        CROSS JOIN LATERAL (
          SELECT q.id, q.priority, q.scheduled_at, q.created_at,
                 q.concurrency_limit AS lim,
                 q.rate_limit AS rate_lim,
                 row_number() OVER (ORDER BY q.priority, q.scheduled_at, q.created_at, q.id) AS rn
          FROM soniq_jobs AS q
          WHERE q.status = 'queued' AND q.concurrency_key IS NOT NULL
            AND q.concurrency_key = keys.k
            AND q.scheduled_at <= now()
            AND (p_queues IS NULL OR q.queue = ANY(p_queues))
            AND (p_names IS NULL OR q.name = ANY(p_names))
            AND (q.version = 1 OR p_versions IS NULL
                 OR q.version <= p_versions[array_position(p_names, q.name)])
            AND (NOT p_restricted
                 OR q.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                                    WHERE (qs.paused AND (qs.paused_until IS NULL
                                                          OR qs.paused_until > now()))
                                       OR qs.max_running IS NOT NULL))
          ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
          LIMIT p_limit - cardinality(taken)
        ) AS c
        WHERE keys.k IS NOT NULL AND (c.lim IS NULL OR running.n + c.rn <= c.lim)
          AND (NOT paused_keys
               OR NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p
                              WHERE p.key = keys.k AND p.until > t))
          AND (c.rate_lim IS NULL OR started.n + c.rn <= c.rate_lim)
      )
      SELECT ARRAY(SELECT candidates.id FROM candidates
                   ORDER BY rn, priority, scheduled_at, created_at, id
                   LIMIT p_limit - cardinality(taken))
      INTO ids;
    END IF;
    -- The claim of the ids the pass picked (rows changed meanwhile, cancelled say, are left: the
    -- status check), the starts of the rate-limited ones, expired starts and pauses deleted.
    WITH claimed AS (
      UPDATE soniq_jobs AS j
      SET status = 'processing', worker_id = p_worker, claim_token = gen_random_uuid(),
          started_at = t, updated_at = now(), start_known = p_start_known
      WHERE j.id = ANY(ids) AND (j.status = 'queued') IS TRUE
      RETURNING j
    ), charged AS (
      INSERT INTO soniq_rate_starts (key, expires_at)
      SELECT (claimed.j).concurrency_key,
             t + ((((claimed.j).meta -> 'rate' ->> 'per')::bigint) * interval '1 millisecond')
      FROM claimed WHERE (claimed.j).rate_limit IS NOT NULL
    ), expired AS (
      DELETE FROM soniq_rate_starts AS x WHERE x.expires_at <= t
    ), unpaused AS (
      DELETE FROM soniq_rate_pauses AS u WHERE u.until <= t
    )
    SELECT ARRAY(SELECT claimed.j FROM claimed) INTO got;
    taken := taken || got;
    EXIT WHEN cardinality(taken) >= p_limit;
  END LOOP;
  -- When a short claim's held rate-limited jobs may start: the first start to leave its window
  -- among keys with due queued rate-limited jobs (read after the claims deleted passed starts).
  IF cardinality(taken) < p_limit
     AND (p_next_window
          OR EXISTS (SELECT 1 FROM unnest(taken) AS u WHERE u.rate_limit IS NOT NULL)) THEN
    SELECT greatest(0, ceil(extract(epoch FROM min(st.expires_at) - clock_timestamp()) * 1000))
    INTO wait_ms
    FROM soniq_rate_starts AS st
    WHERE EXISTS (SELECT 1 FROM soniq_jobs AS w
                  WHERE w.status = 'queued' AND w.concurrency_key IS NOT NULL
                    AND w.concurrency_key = st.key
                    AND w.rate_limit IS NOT NULL AND w.scheduled_at <= now());
    PERFORM set_config('soniq.keyed_next_window', COALESCE(wait_ms::text, ''), true);
  END IF;
  RETURN QUERY SELECT * FROM unnest(taken);
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_notify_finished_jobs()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO <schema>
AS $function$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || TG_TABLE_SCHEMA) <= 63 THEN 'soniq_' || TG_TABLE_SCHEMA
    ELSE 'soniq_' || md5(TG_TABLE_SCHEMA)
  END;
  finished_id uuid;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_job_waits) THEN
    RETURN NULL;
  END IF;
  FOR finished_id IN
    WITH gone AS (
      DELETE FROM soniq_job_waits AS w USING finished_jobs AS f
      WHERE w.job_id = f.id
      RETURNING w.job_id
    )
    SELECT DISTINCT job_id FROM gone
  LOOP
    PERFORM pg_notify(channel, '!done ' || finished_id);
  END LOOP;
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_notify_inserted_jobs()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || TG_TABLE_SCHEMA) <= 63 THEN 'soniq_' || TG_TABLE_SCHEMA
    ELSE 'soniq_' || md5(TG_TABLE_SCHEMA)
  END;
  due_queue text;
BEGIN
  -- A queue name too long for a NOTIFY payload (8000 bytes) wakes everyone instead ('*').
  FOR due_queue IN
    SELECT DISTINCT CASE WHEN octet_length(queue) <= 1024 THEN queue ELSE '*' END
    FROM inserted_jobs WHERE status = 'queued' AND scheduled_at <= now()
  LOOP
    PERFORM pg_notify(channel, due_queue);
  END LOOP;
  RETURN NULL;
END;
$function$;

CREATE OR REPLACE FUNCTION soniq_refuse_old_workers()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'SQ001',
    MESSAGE = 'this database was upgraded by soniq setup to schema version 10; this worker '
      || 'is of an earlier version of soniq and cannot run on it: upgrade the worker';
END;
$function$;

CREATE TRIGGER soniq_batch_rearm AFTER DELETE ON soniq_dead_letter_jobs FOR EACH ROW EXECUTE FUNCTION soniq_batch_rearm();
CREATE TRIGGER soniq_flow_dead AFTER INSERT ON soniq_dead_letter_jobs REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION soniq_flow_ended();
CREATE TRIGGER soniq_flow_rearm AFTER DELETE ON soniq_dead_letter_jobs FOR EACH ROW EXECUTE FUNCTION soniq_flow_rearm();
CREATE TRIGGER soniq_flow_finished AFTER INSERT ON soniq_finished_store REFERENCING NEW TABLE AS ended FOR EACH STATEMENT EXECUTE FUNCTION soniq_flow_ended();
CREATE TRIGGER soniq_batch_finished AFTER UPDATE OF pending, members_left ON soniq_flow_nodes FOR EACH ROW WHEN (((new.role = 'batch'::text) AND (new.pending = 0) AND (new.members_left = 0) AND ((old.pending <> 0) OR (old.members_left <> 0)))) EXECUTE FUNCTION soniq_batch_finished();
CREATE TRIGGER soniq_flow_settle_ended AFTER UPDATE ON soniq_job_deps REFERENCING OLD TABLE AS old_edges NEW TABLE AS new_edges FOR EACH STATEMENT EXECUTE FUNCTION soniq_flow_settle_ended();
CREATE TRIGGER soniq_jobs_finished AFTER DELETE ON soniq_jobs REFERENCING OLD TABLE AS finished_jobs FOR EACH STATEMENT EXECUTE FUNCTION soniq_notify_finished_jobs();
CREATE TRIGGER soniq_jobs_notify_insert AFTER INSERT ON soniq_jobs REFERENCING NEW TABLE AS inserted_jobs FOR EACH STATEMENT EXECUTE FUNCTION soniq_notify_inserted_jobs();
CREATE TRIGGER soniq_workers_schema_version BEFORE INSERT OR UPDATE ON soniq_workers FOR EACH ROW WHEN (((new.schema_version IS NULL) OR (new.schema_version < 10))) EXECUTE FUNCTION soniq_refuse_old_workers();
