-- Workflows: a finishing statement's flow work reaches the flow tables by index only (issue 29,
-- the fan-in; docs/performance.md, "2026-12-07, round four").
--
-- soniq_flow_ended (migration 025) joined the statement's ended rows (`ended`, ~150 in a batched
-- completion) with soniq_flow_nodes twice (its members, its flows' roots) and updated the ended
-- edges by `dep_id = ANY(ids)`. While a fan-in of 10,000 ran, the planner chose, for each of the
-- three, to read the whole table (10,000 node rows or edges: a hash join over a sequential scan,
-- a bitmap scan of the flow index, a sequential scan filtered by the ids) rather than probe an
-- index 150 times: for one statement the cost model rates the scan cheaper (a ~100-page table
-- against 150 random probes), but a fan-in runs one such statement per ~150 members, so each
-- member's end paid a read of about 10,000 / 150 × 3 ≈ 200 rows, and the fan-in's database work
-- grew with the square of its size. Now:
-- - each ended row looks its node up by the primary key in a scalar sub-query (a sub-plan run
--   once per row, which the planner does not turn into a join), for the members' count-down and
--   for the flows' roots, in a sub-select kept apart by OFFSET 0 so the probe runs once per row;
-- - the function runs with enable_seqscan off (restored when it returns), so the edges' probe and
--   update use soniq_job_deps_dep_idx whatever the statistics say; the statements it runs nested
--   (the edges' settle trigger, a cancel or dead-letter move of a dependant, whose own ends come
--   back here) all read by key or from transition tables, for which the setting changes nothing;
-- - soniq_jobs_awaited (migration 029: a completion at retention 0 asks which of its rows another
--   job waits for) runs with it too: a drain of plain jobs beside an open fan-in read its 10,000
--   edges once per statement.
-- What the function writes, locks and in which order is 025's.
--
-- The edges' table keeps half of each page free for new rows (fillfactor 50): an edge is updated
-- once, when its dependency ends, and with room on its page that update is a heap-only tuple —
-- no new entry in the primary key or soniq_job_deps_dep_idx (the update touched ~11 buffers per
-- edge, ~5.5 with the room). Pages written from now on keep the room; existing ones are as they
-- were.

ALTER TABLE soniq_job_deps SET (fillfactor = 50);

CREATE OR REPLACE FUNCTION soniq_jobs_awaited(jobs uuid[]) RETURNS uuid[]
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
SET enable_seqscan = off
AS $$
BEGIN
  RETURN ARRAY(SELECT DISTINCT d.dep_id FROM soniq_job_deps AS d WHERE d.dep_id = ANY(jobs));
END;
$$;

CREATE OR REPLACE FUNCTION soniq_flow_ended() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
SET enable_seqscan = off
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
  -- The members that ended count down their batch's row, batches in id order; a flow's root
  -- that ended is its flow's end. Each ended row's node is one probe of the primary key (a
  -- scalar sub-query), never a scan of the nodes. (Two branches: a dead-letter entry has no
  -- status column.)
  IF dead THEN
    FOR e IN
      SELECT m.flow_id, count(*)::int AS n
      FROM (
        SELECT (SELECT f.flow_id FROM soniq_flow_nodes AS f
                WHERE f.job_id = n.id AND f.role = 'member') AS flow_id
        FROM ended AS n OFFSET 0
      ) AS m
      WHERE m.flow_id IS NOT NULL
      GROUP BY m.flow_id ORDER BY m.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.n
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', r.id, 'failed'
    FROM (
      SELECT n.id,
        EXISTS (SELECT 1 FROM soniq_flow_nodes AS f
                WHERE f.job_id = n.id AND f.flow_id = n.id AND f.role = 'job') AS root
      FROM ended AS n OFFSET 0
    ) AS r
    WHERE r.root
    ORDER BY r.id;
  ELSE
    FOR e IN
      SELECT m.flow_id, count(*)::int AS n,
        count(*) FILTER (WHERE m.status <> 'done')::int AS failed
      FROM (
        SELECT n.status,
          (SELECT f.flow_id FROM soniq_flow_nodes AS f
           WHERE f.job_id = n.id AND f.role = 'member') AS flow_id
        FROM ended AS n OFFSET 0
      ) AS m
      WHERE m.flow_id IS NOT NULL
      GROUP BY m.flow_id ORDER BY m.flow_id
    LOOP
      UPDATE soniq_flow_nodes SET members_left = members_left - e.n,
        members_failed = members_failed + e.failed
      WHERE job_id = e.flow_id AND role = 'batch';
    END LOOP;
    INSERT INTO soniq_flow_ends (kind, id, outcome)
    SELECT 'flow', r.id, CASE WHEN r.status = 'done' THEN 'done' ELSE 'cancelled' END
    FROM (
      SELECT n.id, n.status,
        EXISTS (SELECT 1 FROM soniq_flow_nodes AS f
                WHERE f.job_id = n.id AND f.flow_id = n.id AND f.role = 'job') AS root
      FROM ended AS n OFFSET 0
    ) AS r
    WHERE r.root
    ORDER BY r.id;
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
