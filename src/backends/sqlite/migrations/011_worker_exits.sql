-- Worker exits outlive the process (issue 26 item 6; docs/metrics.md, "What to alert on"): each
-- worker that stops counts its exit reason here, in the transaction that marks its row stopped,
-- so the maintenance leader of a later process can export how drains ended — a CLI worker's own
-- counters end with it, before any scrape. One row per exit reason: `exits` counts the stops,
-- `last_at` is the latest (milliseconds since the epoch). Never pruned; a handful of rows.
CREATE TABLE soniq_worker_exits (
  exit_reason TEXT    NOT NULL PRIMARY KEY,
  exits       INTEGER NOT NULL DEFAULT 0,
  last_at     INTEGER NOT NULL
);
