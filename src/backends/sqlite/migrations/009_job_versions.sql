-- Job versions (issue 25 item 2; docs/operations.md, "Deploying new job code"): every job row
-- carries the version of the definition that enqueued it, and a worker claims a job only when its
-- own definition of that name has a version >= the job's. Rows written before this migration,
-- and rows inserted by workers of the previous version (which do not name the column), read as
-- version 1: the default of every table. ADD COLUMN with a constant default rewrites nothing.
ALTER TABLE soniq_jobs ADD COLUMN version INTEGER NOT NULL DEFAULT 1 CHECK (version >= 1);
ALTER TABLE soniq_finished_jobs ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- A dead letter keeps its job's version: a replay puts it back with it.
ALTER TABLE soniq_dead_letter_jobs ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- A schedule's occurrences are enqueued with the version of the definition that wrote the
-- schedule's arguments (its last sync), so arguments and version always travel together.
ALTER TABLE soniq_schedules ADD COLUMN job_version INTEGER NOT NULL DEFAULT 1;
