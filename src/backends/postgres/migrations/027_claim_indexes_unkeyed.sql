-- The claims of jobs without a key walk indexes of those jobs only (issue 28; docs/performance.md,
-- "The PostgreSQL keyed claim, 2026-12-07, round three"). The ordinary claims (sql.ts `claimAll`,
-- `claimQueue`, `claimQueues`, `claimLimited`) walk soniq_jobs_claim_idx or
-- soniq_jobs_queue_claim_idx in claim order and skip the rows with a concurrency key, which the
-- keyed claim takes: during a backlog of keyed jobs they read past every queued keyed row ahead
-- of the first one without a key (10,000 rows, ≈ 10 ms, on the claims that ran them in a keyed
-- drain). Both indexes now hold the queued rows without a key only, under the claims' own
-- condition (`pgUnkeyed`, shared/concurrency-meta.ts, written the same way, so the planner sees
-- a claim's condition imply the index's). For an application without keys they hold the same
-- rows as before, so a job without a key costs the same writes.
--
-- The hand-off probe (hand-off-sql.ts: "is a due job of this queue queued?") read the queue index
-- for every queued row; it now asks that index for rows without a key and the index below for
-- keyed ones, keyed rows only (empty for an application without keys; a keyed job leaves the two
-- claim indexes and enters this one).
DROP INDEX soniq_jobs_claim_idx;
CREATE INDEX soniq_jobs_claim_idx ON soniq_jobs (priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND (meta IS NULL OR (meta -> 'concurrency') IS NULL);
DROP INDEX soniq_jobs_queue_claim_idx;
CREATE INDEX soniq_jobs_queue_claim_idx ON soniq_jobs (queue, priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND (meta IS NULL OR (meta -> 'concurrency') IS NULL);
-- (`meta IS NOT NULL` is for the planner: it has statistics on `meta`'s NULLs, none on the JSON
-- expression, whose default estimate says nearly every row is keyed.)
CREATE INDEX soniq_jobs_keyed_queue_idx ON soniq_jobs (queue, scheduled_at)
  WHERE status = 'queued' AND meta IS NOT NULL AND (meta -> 'concurrency') IS NOT NULL;
