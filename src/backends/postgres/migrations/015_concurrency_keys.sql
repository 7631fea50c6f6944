-- Per-key concurrency (docs/flow-control.md): a keyed job stores its key and limit in its Soniq
-- metadata (`meta` = {"concurrency":{"key":"…","limit":n}}), so no table changes. Two partial
-- indexes serve the keyed claim (src/backends/postgres/keyed-claim.ts) and hold keyed rows only,
-- so they are empty, and cost nothing, for an application that declares no keys:
-- the queued keyed jobs by key in claim order (the claim's walk over keys and each key's head),
CREATE INDEX soniq_jobs_keyed_claim_idx ON soniq_jobs
  ((meta -> 'concurrency' ->> 'key'), priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND (meta -> 'concurrency') IS NOT NULL;
-- and the running keyed jobs by key (the count of a key's taken slots).
CREATE INDEX soniq_jobs_keyed_running_idx ON soniq_jobs ((meta -> 'concurrency' ->> 'key'))
  WHERE status = 'processing' AND (meta -> 'concurrency') IS NOT NULL;
