-- Workflows at a retention of 0 (docs/performance.md, "Database CPU per job in the real drain"):
-- migration 023's soniq_job_awaited(id) was called once per finished row, a PL/pgSQL call and a
-- snapshot per job even when nobody waits for any job (3–10 µs of database CPU per job on the
-- development machine). This asks once per finishing statement, for all the rows it moved: →
-- the ids among `jobs` that another job waits for. Same rule as 023: VOLATILE, so its query
-- takes a snapshot of its own, after the statement's DELETE got every row (the caller reads all
-- the moved rows first), and sees an edge an `after` enqueue committed while the finish waited
-- for a row's lock.
CREATE FUNCTION soniq_jobs_awaited(jobs uuid[]) RETURNS uuid[]
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  RETURN ARRAY(SELECT DISTINCT d.dep_id FROM soniq_job_deps AS d WHERE d.dep_id = ANY(jobs));
END;
$$;
