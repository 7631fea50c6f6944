-- The finished-jobs store is cheap to forget (docs/backends.md, "Forgetting finished jobs:
-- daily partitions and the prune mark"; issue 24, item 4).
--
-- The rows move to soniq_finished_store, partitioned by range of result_expires_at, one
-- partition per UTC day (soniq_finished_store_pYYYYMMDD, [day, day + 1)), plus a DEFAULT
-- partition for expiries no daily partition covers (a retention beyond the horizon of the
-- partitions made so far), so a completion never fails for lack of a partition.
--
-- Nothing is deleted row by row when a result expires: the pruner advances a mark
-- (soniq_prune_mark, one row) over the expired rows in (result_expires_at, id) order and counts
-- them as gone; a finished row is visible iff (result_expires_at, id) > the mark. That rule lives
-- in one place, the view soniq_finished_jobs, which every statement reads and writes instead of
-- the table. The maintenance leader then drops each daily partition wholly below the mark, and
-- deletes only the default partition's rows below it.
--
-- Workers of the previous version (010) keep working against this schema: every statement they
-- run names soniq_finished_jobs, which is now this view (simple, hence insertable, updatable and
-- deletable), so they see exactly what this version sees, and their row-by-row prune deletes
-- only visible rows (never one the mark already counted as gone). No refusal is added.

CREATE TABLE soniq_finished_store (
  id                   uuid        NOT NULL,
  name                 text        NOT NULL,
  queue                text        NOT NULL,
  args                 json        NOT NULL,
  status               text        NOT NULL CHECK (status IN ('done', 'cancelled')),
  priority             integer     NOT NULL,
  attempts             integer     NOT NULL,
  max_attempts         integer     NOT NULL,
  interruptions        integer     NOT NULL,
  scheduled_at         timestamptz NOT NULL,
  created_at           timestamptz NOT NULL,
  updated_at           timestamptz NOT NULL,
  started_at           timestamptz,
  finished_at          timestamptz NOT NULL,
  worker_id            text,
  claim_token          uuid,
  last_error           text,
  result               json,
  result_expires_at    timestamptz NOT NULL,
  dedup_key            text,
  meta                 json,
  start_known          boolean     NOT NULL,
  uncharged_recoveries integer     NOT NULL,
  trace_context        text,
  -- A partitioned table's unique keys must contain the partition key. Lookups by id use this
  -- key's prefix. That an id is unique across partitions is held by the move itself: a row
  -- enters this table only by leaving soniq_jobs (whose primary key is id) in the same
  -- statement, and leaves it before it can enter soniq_jobs again (run again).
  CONSTRAINT soniq_finished_store_pkey PRIMARY KEY (id, result_expires_at)
) PARTITION BY RANGE (result_expires_at);
-- The prune walks the expired rows in (result_expires_at, id) order from the mark: an ordered
-- range scan of this index (partitions are in key order, so no merge). It replaces 010's
-- soniq_finished_jobs_expiry_idx: the store has as many indexes as before.
CREATE INDEX soniq_finished_store_expiry_idx ON soniq_finished_store (result_expires_at, id);
CREATE INDEX soniq_finished_store_legacy_order_idx ON soniq_finished_store (created_at DESC, id DESC)
  WHERE substr(id::text, 15, 1) <> '7';
CREATE TABLE soniq_finished_store_default PARTITION OF soniq_finished_store DEFAULT;

-- The first daily partitions (today, UTC, and the next 9 days: the default retention of 7 days
-- plus 2), so a fresh setup forgets by partition before any leader runs; the leader keeps the
-- horizon ahead from then on.
DO $$
DECLARE
  day date := (now() AT TIME ZONE 'UTC')::date;
  i integer;
BEGIN
  FOR i IN 0..9 LOOP
    EXECUTE format(
      'CREATE TABLE %I PARTITION OF soniq_finished_store FOR VALUES FROM (%L) TO (%L)',
      'soniq_finished_store_p' || to_char(day + i, 'YYYYMMDD'),
      to_char(day + i, 'YYYY-MM-DD') || ' 00:00:00+00',
      to_char(day + i + 1, 'YYYY-MM-DD') || ' 00:00:00+00');
  END LOOP;
END
$$;

-- The rows of 010 are copied over (those expiring before today or after the horizon land in the
-- default partition); the counters (soniq_job_counts) do not change: the same rows are kept.
INSERT INTO soniq_finished_store SELECT * FROM soniq_finished_jobs;
DROP TABLE soniq_finished_jobs;

-- The prune mark: one row. Finished rows at or below (expires_at, id) are forgotten (counted as
-- gone, unreadable), whether or not their partition has been dropped yet. The prune updates it
-- under FOR UPDATE; a statement that removes a visible finished row (run again, delete) reads it
-- FOR SHARE, so a row is never counted as gone both by the prune and by that statement.
CREATE TABLE soniq_prune_mark (
  one        boolean     NOT NULL DEFAULT true CHECK (one),
  expires_at timestamptz NOT NULL,
  id         uuid        NOT NULL,
  CONSTRAINT soniq_prune_mark_pkey PRIMARY KEY (one)
);
INSERT INTO soniq_prune_mark (expires_at, id)
VALUES ('-infinity', '00000000-0000-0000-0000-000000000000');

-- The finished jobs that are still remembered: the only way any statement reads the store.
-- `IS TRUE` keeps the rule a filter, never an index condition: as a range condition on
-- result_expires_at it made the planner answer a listing's window (newest ids first, a few
-- thousand rows) by reading the whole expiry index and sorting it — work that grows with the
-- history — instead of walking each partition's primary key backwards.
CREATE VIEW soniq_finished_jobs AS
SELECT * FROM soniq_finished_store AS f
WHERE ((f.result_expires_at, f.id) > (SELECT m.expires_at, m.id FROM soniq_prune_mark AS m)) IS TRUE;
