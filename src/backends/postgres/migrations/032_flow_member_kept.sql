-- Workflows at a retention of 0 (issue 29; docs/workflows.md, "Batches"): a batch's member or a
-- flow's root that nobody waits for was deleted at its end with `resultRetention: 0`, never
-- landing in the finished store, so the statement trigger there (soniq_flow_ended) never counted
-- it: its batch never finished (no `batch_finished`, no count), nor its flow. Migration 029's
-- function (030's `enable_seqscan = off` kept) now also names, among `jobs`, those that are a
-- batch's member or a flow's root: the finishing statements keep them as finished (expiring at
-- once: the next prune forgets them), as they keep a job another waits for. One more probe of
-- soniq_flow_nodes' primary key per row, and only at a retention of 0. A node is inserted with its job, so it is committed before the job
-- can end.
CREATE OR REPLACE FUNCTION soniq_jobs_awaited(jobs uuid[]) RETURNS uuid[]
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
SET enable_seqscan = off
AS $$
BEGIN
  RETURN ARRAY(
    SELECT d.dep_id FROM soniq_job_deps AS d WHERE d.dep_id = ANY(jobs)
    UNION
    SELECT f.job_id FROM soniq_flow_nodes AS f
    WHERE f.job_id = ANY(jobs) AND (f.role = 'member' OR (f.role = 'job' AND f.flow_id = f.job_id)));
END;
$$;
