-- Claims by workers restricted to some queues walk this index, one queue at a time, in claim
-- order: the cost of such a claim no longer depends on the backlog of other queues.
CREATE INDEX soniq_jobs_queue_claim_idx ON soniq_jobs (queue, priority, scheduled_at, created_at, id)
  WHERE status = 'queued';
