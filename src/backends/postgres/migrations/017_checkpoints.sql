-- Checkpoints and durable steps (issue 30; docs/checkpoints.md): a running job's last checkpoint
-- (`ctx.checkpoint`) and its steps' records (`ctx.step`), JSON text written whole by the claim's
-- owner (fenced), read back by the next attempt. Two nullable columns: a job that never
-- checkpoints keeps them NULL (no bytes in its row), and the claim does not select them (a job
-- that has some carries `"resume": true` in its `meta`, which the claim returns already, and its
-- worker reads them with one fenced read before the handler starts). Adding nullable columns
-- rewrites no table.
ALTER TABLE soniq_jobs ADD COLUMN checkpoint text;
ALTER TABLE soniq_jobs ADD COLUMN steps text;

-- A finished job keeps them for its retention (the move copies every column: an operator reads
-- what the job's steps returned); a dead letter does not (a replay starts afresh), so its table
-- has no such columns. The finished-jobs view is `SELECT *`, fixed at its creation (migration
-- 011), so it is made again with the new columns last.
ALTER TABLE soniq_finished_store ADD COLUMN checkpoint text;
ALTER TABLE soniq_finished_store ADD COLUMN steps text;
CREATE OR REPLACE VIEW soniq_finished_jobs AS
SELECT * FROM soniq_finished_store AS f
WHERE ((f.result_expires_at, f.id) > (SELECT m.expires_at, m.id FROM soniq_prune_mark AS m)) IS TRUE;
ALTER VIEW soniq_finished_jobs ALTER COLUMN version SET DEFAULT 1;
