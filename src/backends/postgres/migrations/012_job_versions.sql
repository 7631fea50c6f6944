-- Job versions (issue 25 item 2; docs/operations.md, "Deploying new job code"): every job row
-- carries the version of the definition that enqueued it, and a worker claims a job only when its
-- own definition of that name has a version >= the job's. Rows written before this migration,
-- and rows inserted by workers of the previous version (which do not name the column), read as
-- version 1: the default of every table and of the finished-jobs view.
--
-- Adding a column with a constant default rewrites no table (PostgreSQL 11+); the CHECK on the
-- live table reads its rows once, and the live table holds live jobs only. The claim filters on
-- the rows its index walk reads already, so no index changes.
ALTER TABLE soniq_jobs ADD COLUMN version integer NOT NULL DEFAULT 1
  CONSTRAINT soniq_jobs_version_check CHECK (version >= 1);

-- The finished store and its view (migration 011): the view is `SELECT *`, fixed at its creation,
-- so it is made again with the new column last; its default serves inserts that do not name it.
ALTER TABLE soniq_finished_store ADD COLUMN version integer NOT NULL DEFAULT 1;
CREATE OR REPLACE VIEW soniq_finished_jobs AS
SELECT * FROM soniq_finished_store AS f
WHERE ((f.result_expires_at, f.id) > (SELECT m.expires_at, m.id FROM soniq_prune_mark AS m)) IS TRUE;
ALTER VIEW soniq_finished_jobs ALTER COLUMN version SET DEFAULT 1;

-- A dead letter keeps its job's version: a replay puts it back with it.
ALTER TABLE soniq_dead_letter_jobs ADD COLUMN version integer NOT NULL DEFAULT 1;

-- A schedule's occurrences are enqueued with the version of the definition that wrote the
-- schedule's arguments (its last sync), so arguments and version always travel together.
ALTER TABLE soniq_schedules ADD COLUMN job_version integer NOT NULL DEFAULT 1;
