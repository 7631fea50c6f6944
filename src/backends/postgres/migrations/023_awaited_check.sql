-- Workflows (docs/workflows.md): whether another job waits for a finishing job, read with a
-- snapshot of its own. A finishing statement keeps the finished row of a job others wait for even
-- with a retention of 0 (src/backends/postgres/finish-sql.ts), so the finished store's trigger
-- (migration 019) ends its edges. Asked in the statement's own snapshot, an edge committed by an
-- `after` enqueue while the finish waited for the dependency's row lock (the enqueue holds it
-- FOR KEY SHARE until it commits) was not seen: nothing was kept, the edge never ended and the
-- dependant waited for ever. A VOLATILE function's query takes a new snapshot (READ COMMITTED),
-- after the finish's DELETE got the row, so it sees that edge.
CREATE FUNCTION soniq_job_awaited(job uuid) RETURNS boolean
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = job);
END;
$$;
