-- Soniq schema, version 1.
-- Runs inside the migration transaction with `search_path` set to the configured schema
-- (see migrate.ts): nothing here names the schema.

CREATE TABLE soniq_jobs (
  id                uuid        PRIMARY KEY,
  name              text        NOT NULL,
  queue             text        NOT NULL,
  -- json, not jsonb: the text comes back byte for byte and may hold \u0000.
  args              json        NOT NULL,
  status            text        NOT NULL DEFAULT 'queued'
                                CHECK (status IN ('queued', 'processing', 'done', 'cancelled')),
  priority          integer     NOT NULL DEFAULT 0,
  attempts          integer     NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  max_attempts      integer     NOT NULL CHECK (max_attempts >= 1),
  interruptions     integer     NOT NULL DEFAULT 0 CHECK (interruptions >= 0),
  scheduled_at      timestamptz NOT NULL DEFAULT now(),
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  started_at        timestamptz,
  finished_at       timestamptz,
  worker_id         text,
  claim_token       uuid,
  last_error        text,
  result            json,
  result_expires_at timestamptz,
  dedup_key         text
);

-- A dedup key is held by at most one row of soniq_jobs, whatever its status.
CREATE UNIQUE INDEX soniq_jobs_dedup_key_idx ON soniq_jobs (dedup_key)
  WHERE dedup_key IS NOT NULL;

-- The claim: due queued rows in priority, due-time, creation order.
CREATE INDEX soniq_jobs_claim_idx ON soniq_jobs (priority, scheduled_at, created_at, id)
  WHERE status = 'queued';

-- Recovery: processing rows by owner.
CREATE INDEX soniq_jobs_processing_idx ON soniq_jobs (worker_id)
  WHERE status = 'processing';

-- Pruning: finished rows by expiry.
CREATE INDEX soniq_jobs_prune_idx ON soniq_jobs (result_expires_at)
  WHERE status IN ('done', 'cancelled');

CREATE TABLE soniq_dead_letter_jobs (
  id            uuid        PRIMARY KEY,
  name          text        NOT NULL,
  queue         text        NOT NULL,
  args          json        NOT NULL,
  priority      integer     NOT NULL,
  attempts      integer     NOT NULL,
  max_attempts  integer     NOT NULL,
  interruptions integer     NOT NULL DEFAULT 0,
  scheduled_at  timestamptz NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  started_at    timestamptz,
  finished_at   timestamptz,
  worker_id     text,
  claim_token   uuid,
  last_error    text,
  -- Not unique here: a dead-letter entry does not hold its key.
  dedup_key     text,
  reason        text        NOT NULL,
  dead_at       timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX soniq_dead_letter_jobs_dead_at_idx ON soniq_dead_letter_jobs (dead_at);

CREATE TABLE soniq_workers (
  id                text        PRIMARY KEY,
  hostname          text        NOT NULL,
  pid               integer     NOT NULL,
  -- NULL: every queue.
  queues            text[],
  concurrency       integer     NOT NULL,
  status            text        NOT NULL DEFAULT 'running'
                                CHECK (status IN ('running', 'draining', 'stopped')),
  started_at        timestamptz NOT NULL DEFAULT now(),
  last_heartbeat_at timestamptz NOT NULL DEFAULT now(),
  stopped_at        timestamptz
);

CREATE INDEX soniq_workers_started_at_idx ON soniq_workers (started_at DESC);

-- Wake-ups: one NOTIFY per queue that received due jobs, once per INSERT statement (so a
-- batch costs one notification per queue, and a transactional enqueue notifies at commit).
-- The channel is `soniq_<schema>`, or `soniq_<md5(schema)>` when that exceeds 63 bytes; it
-- must match notifyChannel() in identifiers.ts.
CREATE FUNCTION soniq_notify_inserted_jobs() RETURNS trigger
LANGUAGE plpgsql AS $$
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
    FROM inserted_jobs WHERE scheduled_at <= now()
  LOOP
    PERFORM pg_notify(channel, due_queue);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_jobs_notify_insert
  AFTER INSERT ON soniq_jobs
  REFERENCING NEW TABLE AS inserted_jobs
  FOR EACH STATEMENT
  EXECUTE FUNCTION soniq_notify_inserted_jobs();
