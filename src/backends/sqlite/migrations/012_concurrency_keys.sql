-- Per-key concurrency (docs/flow-control.md): a keyed job stores its key and limit in its Soniq
-- metadata (`meta` = {"concurrency":{"key":"…","limit":n}}), so no table changes. Two partial
-- indexes hold keyed rows only (empty for an application that declares no keys): the queued
-- keyed jobs by key in claim order, and the running keyed jobs by key (a key's taken slots).
CREATE INDEX soniq_jobs_keyed_claim ON soniq_jobs
  (json_extract(meta, '$.concurrency.key'), priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND json_extract(meta, '$.concurrency.key') IS NOT NULL;
CREATE INDEX soniq_jobs_keyed_running ON soniq_jobs (json_extract(meta, '$.concurrency.key'))
  WHERE status = 'processing' AND json_extract(meta, '$.concurrency.key') IS NOT NULL;
