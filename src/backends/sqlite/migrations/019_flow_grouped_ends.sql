-- Workflows: a completion's count-downs once per batch and per dependant, not once per member
-- (issue 29, the fan-in; docs/performance.md, "The `fanin` workload").
--
-- After 017 and 018 every member's completion still rewrote three rows through row triggers (the
-- batch's `members_left`, the edge, the dependant's `pending`), each with its sub-program and
-- probes, inside the worker's own thread. Now the store's completion transaction
-- (transactions.ts `completeAll`) does that work itself, set-based, for all the jobs it moved:
-- one `UPDATE` per batch (`members_left`), the flow roots' ends, one `UPDATE` of the edges, and
-- one `UPDATE` of `pending` per dependant (the release trigger of 018 fires on it as before). While
-- it moves the jobs it holds a row in soniq_flow_grouping, and the two triggers it replaces skip
-- their work while that row exists; the row is deleted in the same transaction before the
-- dependants are counted down, so what a release does in turn (a batch's onFailure callback
-- cancelled, its own edges ended) runs through the triggers as before. Every other path that ends
-- a job (failure, cancel, recovery, operator delete, replay, a batch's seal, an end recorded at
-- enqueue) never writes that row: the triggers do all of it there, unchanged. The row is never
-- committed, so a file upgraded with flows in flight needs no rewrite of its counts.

CREATE TABLE soniq_flow_grouping (
  active INTEGER NOT NULL PRIMARY KEY CHECK (active = 1)
) STRICT;

DROP TRIGGER soniq_finished_flow;

CREATE TRIGGER soniq_finished_flow AFTER INSERT ON soniq_finished_jobs
WHEN NOT EXISTS (SELECT 1 FROM soniq_flow_grouping)
  AND (EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.id)
       OR EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = NEW.id AND dep_state IS NULL))
BEGIN
  -- A batch's member ended: counted down on its batch's row.
  UPDATE soniq_flow_nodes SET members_left = members_left - 1,
    members_failed = members_failed + (NEW.status <> 'done')
  WHERE role = 'batch'
    AND job_id = (SELECT flow_id FROM soniq_flow_nodes WHERE job_id = NEW.id AND role = 'member');
  -- A flow's root ended: done or cancelled.
  INSERT INTO soniq_flow_ends (kind, id, outcome, ended_at)
  SELECT 'flow', NEW.id, CASE WHEN NEW.status = 'done' THEN 'done' ELSE 'cancelled' END,
         CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)
  WHERE EXISTS (SELECT 1 FROM soniq_flow_nodes
                WHERE job_id = NEW.id AND flow_id = NEW.id AND role = 'job');
  -- The job's edges end (their own triggers release, fail or cancel each dependant).
  UPDATE soniq_job_deps SET dep_state = NEW.status, dep_result = NEW.result
  WHERE dep_id = NEW.id AND dep_state IS NULL;
END;

DROP TRIGGER soniq_flow_count_down;

CREATE TRIGGER soniq_flow_count_down AFTER UPDATE OF dep_state ON soniq_job_deps
WHEN OLD.dep_state IS NULL AND NEW.dep_state IS NOT NULL
  AND (NEW.dep_state = 'done' OR NEW.on_failure = 'ignore')
  AND NOT EXISTS (SELECT 1 FROM soniq_flow_grouping)
BEGIN
  UPDATE soniq_flow_nodes SET pending = pending - 1 WHERE job_id = NEW.job_id;
END;
