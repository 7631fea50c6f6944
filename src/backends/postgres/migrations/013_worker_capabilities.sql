-- Nothing waits unseen (issue 25 item 3; docs/operations.md, "Jobs waiting for a worker that can
-- run them"): each worker records the job names it runs and, per name, its definition's version,
-- so the maintenance leader can find queued jobs that no live worker can claim.
--
-- A worker of the previous version does not name the column: its row keeps NULL, read as
-- "unknown capability" (it may run any job of its queues), so such a worker never makes a job
-- read as waiting. Adding a nullable column rewrites no table.
ALTER TABLE soniq_workers ADD COLUMN job_versions jsonb;

-- Per queue: seconds a due job may wait with no live worker able to run it before the leader
-- moves it to the dead-letter queue (`no_capable_worker`). NULL (the default): never.
ALTER TABLE soniq_queues ADD COLUMN unclaimable_after integer
  CONSTRAINT soniq_queues_unclaimable_after_check CHECK (unclaimable_after >= 1);

-- The leader's read walks the distinct (queue, name, version) groups of queued jobs by skipping
-- through this index (one probe per group, whatever the backlog), then counts only the groups no
-- live worker can run. Queued rows only: the finished jobs are in their own table.
CREATE INDEX soniq_jobs_waiting_idx ON soniq_jobs (queue, name, version, scheduled_at)
  WHERE status = 'queued';
