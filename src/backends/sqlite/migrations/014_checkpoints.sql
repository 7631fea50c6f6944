-- Checkpoints and durable steps (issue 30; docs/checkpoints.md): a running job's last checkpoint
-- (`ctx.checkpoint`) and its steps' records (`ctx.step`), JSON text written whole by the claim's
-- owner (fenced), read back by the next attempt. Two nullable columns: a job that never
-- checkpoints keeps them NULL, and the claim does not select them (a job that has some carries
-- `"resume": true` in its `meta`, which the claim returns already, and its worker reads them with
-- one fenced read before the handler starts).
ALTER TABLE soniq_jobs ADD COLUMN checkpoint TEXT;
ALTER TABLE soniq_jobs ADD COLUMN steps TEXT;

-- A finished job keeps them for its retention (the move copies every column: an operator reads
-- what the job's steps returned); a dead letter does not (a replay starts afresh).
ALTER TABLE soniq_finished_jobs ADD COLUMN checkpoint TEXT;
ALTER TABLE soniq_finished_jobs ADD COLUMN steps TEXT;
