-- Per-key concurrency (docs/flow-control.md): the key of a keyed job in a column of its own,
-- `concurrency_key`, instead of only inside `meta` (docs/performance.md, "SQLite keyed claim,
-- stored key column"). Migration 012's two partial indexes were built on
-- `json_extract(meta, '$.concurrency.key')`: every claim of a keyed row (its move from the queued
-- index to the running one) and every delete of a finished keyed row parsed `meta` once per index
-- to find its entries, and every read of jobs without a key parsed the `meta` of each row it
-- tested. The column is written at enqueue (each insert of sql.ts derives it from the `meta` it
-- inserts); `meta` keeps the key too (the limit and rate limit stay there only).
ALTER TABLE soniq_jobs ADD COLUMN concurrency_key TEXT;
UPDATE soniq_jobs SET concurrency_key = json_extract(meta, '$.concurrency.key')
WHERE meta IS NOT NULL AND json_extract(meta, '$.concurrency.key') IS NOT NULL;
DROP INDEX soniq_jobs_keyed_claim;
DROP INDEX soniq_jobs_keyed_running;
CREATE INDEX soniq_jobs_keyed_claim ON soniq_jobs
  (concurrency_key, priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND concurrency_key IS NOT NULL;
CREATE INDEX soniq_jobs_keyed_running ON soniq_jobs (concurrency_key)
  WHERE status = 'processing' AND concurrency_key IS NOT NULL;
-- An insert that did not write the column (a process of the previous version during an upgrade,
-- or a path that copies `meta` alone) gets it from `meta`, so its job keeps its limit. The inserts
-- of this version write it, and a job without a key has no `meta` at enqueue (a schedule's
-- occurrence excepted): the WHEN is false for both without parsing anything.
CREATE TRIGGER soniq_jobs_concurrency_key AFTER INSERT ON soniq_jobs
WHEN NEW.concurrency_key IS NULL AND NEW.meta IS NOT NULL
  AND json_extract(NEW.meta, '$.concurrency.key') IS NOT NULL
BEGIN
  UPDATE soniq_jobs SET concurrency_key = json_extract(NEW.meta, '$.concurrency.key')
  WHERE id = NEW.id;
END;
