-- Worker exits outlive the process (issue 26 item 6; docs/metrics.md, "What to alert on"): each
-- worker that stops counts its exit reason here, in the statement that marks its row stopped, so
-- the maintenance leader of a later process can export how drains ended — a CLI worker's own
-- counters end with it, before any scrape. One row per exit reason: `exits` counts the stops,
-- `last_at` is the latest (database clock). Never pruned; at most a handful of rows.
CREATE TABLE soniq_worker_exits (
  exit_reason text        PRIMARY KEY,
  exits       bigint      NOT NULL DEFAULT 0,
  last_at     timestamptz NOT NULL
);
