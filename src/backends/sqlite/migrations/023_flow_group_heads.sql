-- The flow-retention walk reads one row per group, not one per node (issue 29; docs/workflows.md,
-- "Retention"). Every group of soniq_flow_nodes has one head, the node whose id is the group's:
-- a flow's root and a batch's own node (`flow_id = job_id`), and a job enqueued with `after`
-- alone (`flow_id` NULL); a group's nodes are written together with its head and forgotten
-- together. The pruner's walk read every node in id order, 10,000 a step, to find the groups: a
-- batch of 10,000 members still running cost a whole step of reads on the worker's own thread
-- (20-50 ms each, measured beside a fan-in) to find one group that is kept. The walk now reads
-- the heads through this index.
CREATE INDEX soniq_flow_nodes_heads ON soniq_flow_nodes (job_id)
  WHERE flow_id IS NULL OR flow_id = job_id;
