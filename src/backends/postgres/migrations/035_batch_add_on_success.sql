-- A batch's onSuccess callback and the members added to the open batch (issue 29; docs/workflows.md,
-- "Batches"). `batch.add` gave each callback's edge to a new member the policy of that callback's
-- edge to the batch itself, which is `ignore` for every callback; so onSuccess was not cancelled
-- when an added member ended dead-lettered or cancelled, and ran though its batch failed (members
-- given at creation were right: `cancel`). The add now takes the policy from the callback's role
-- (backends/shared/flow-graph.ts `memberEdgePolicy`). Here the edges written that way and not
-- ended yet get the policy they should have had; an edge that already ended keeps its end.
UPDATE soniq_job_deps AS d SET on_failure = 'cancel'
FROM soniq_flow_nodes AS cb, soniq_flow_nodes AS m
WHERE cb.job_id = d.job_id AND cb.role = 'on_success'
  AND m.job_id = d.dep_id AND m.role = 'member'
  AND d.on_failure = 'ignore' AND d.dep_state IS NULL;
