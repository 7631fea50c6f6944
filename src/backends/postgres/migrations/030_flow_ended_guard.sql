-- Jobs nobody waits for (docs/performance.md, "Database CPU per job in the real drain"): the
-- finished store's statement trigger (migrations 019, 022, 024, 025) ran its three reads of the
-- finishing statement's rows — batch members, flow roots, open edges: index probes for every row
-- — even where no workflow was ever made, ≈ 4–5 µs of database CPU per finished job in a no-op
-- drain. Migration 025's function, unchanged, behind one guard: when soniq_flow_nodes and
-- soniq_job_deps both have no row, none of the three can match, so it returns at once.
--
-- The guard reads with a snapshot of its own, taken after the statement (as every query of this
-- function), so it sees what the reads it stands for would see: a job's node is inserted with
-- the job, so it is committed before the job can end; an edge on a job is inserted by an `after`
-- enqueue holding the job's row FOR KEY SHARE, so it is committed before the finishing DELETE
-- gets that row (migration 023), or waits for this transaction and then reads the end itself.
-- Where workflows are used the tables have rows and the function runs as before, after two
-- one-row reads.
CREATE OR REPLACE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  e record;
  dead constant boolean := TG_TABLE_NAME = 'soniq_dead_letter_jobs';
  ids uuid[];
  ends jsonb;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_flow_nodes) AND NOT EXISTS (SELECT 1 FROM soniq_job_deps) THEN
    RETURN NULL;
  END IF;
  IF dead THEN
    FOR e IN
      SELECT f.flow_id, count(*)::int AS n FROM ended AS n JOIN soniq_flow_nodes AS f
        ON f.job_id = n.id AND f.role = 'member'
      GROUP BY f.flow_id ORDER BY f.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.n
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', n.id, 'failed' FROM ended AS n JOIN soniq_flow_nodes AS f
      ON f.job_id = n.id AND f.flow_id = n.id AND f.role = 'job'
    ORDER BY n.id;
  ELSE
    FOR e IN
      SELECT f.flow_id, count(*)::int AS n,
        count(*) FILTER (WHERE n.status <> 'done')::int AS failed
      FROM ended AS n JOIN soniq_flow_nodes AS f ON f.job_id = n.id AND f.role = 'member'
      GROUP BY f.flow_id ORDER BY f.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.failed
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', n.id, CASE WHEN n.status = 'done' THEN 'done' ELSE 'cancelled' END
    FROM ended AS n JOIN soniq_flow_nodes AS f
      ON f.job_id = n.id AND f.flow_id = n.id AND f.role = 'job'
    ORDER BY n.id;
  END IF;
  SELECT array_agg(DISTINCT d.dep_id) INTO ids FROM soniq_job_deps AS d
  WHERE d.dep_id = ANY(ARRAY(SELECT n.id FROM ended AS n)) AND d.dep_state IS NULL;
  IF ids IS NULL THEN
    RETURN NULL;
  END IF;
  IF dead THEN
    UPDATE soniq_job_deps SET dep_state = 'dead'
    WHERE dep_id = ANY(ids) AND dep_state IS NULL;
  ELSE
    -- The ended rows' states and results as one object keyed by id (each edge's a lookup in
    -- it): no join of the edges with `ended`, whose plan PL/pgSQL would keep from the first
    -- few rows (a rescan of `ended` per edge). The result travels as its JSON text, unchanged.
    SELECT jsonb_object_agg(n.id::text, jsonb_build_array(n.status, n.result::text))
      INTO ends FROM ended AS n;
    UPDATE soniq_job_deps SET dep_state = ends -> dep_id::text ->> 0,
      dep_result = (ends -> dep_id::text ->> 1)::json
    WHERE dep_id = ANY(ids) AND dep_state IS NULL;
  END IF;
  RETURN NULL;
END;
$$;

