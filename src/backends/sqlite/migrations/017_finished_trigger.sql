-- One trigger, not three, on every row a finishing write moves into soniq_finished_jobs.
-- Migrations 015 and 016 each added a row trigger there (the end of the job's edges, a flow
-- root's end, a batch member's count-down). SQLite runs each row trigger as a sub-program per
-- inserted row, whether its WHEN holds or not, and the three cost a plain job that nobody waits
-- for 13-15 µs of CPU per completion (bench/profile/sqlite-finish.ts, with and without them). This
-- trigger does the same three things, in the order they fired (the newest first: the member's
-- count-down, the root's end, the edges' end), behind one WHEN: a job with no node and no open
-- edge runs one sub-program and two index probes.
DROP TRIGGER soniq_flow_finished;
DROP TRIGGER soniq_flow_root_finished;
DROP TRIGGER soniq_batch_member_finished;

CREATE TRIGGER soniq_finished_flow AFTER INSERT ON soniq_finished_jobs
WHEN EXISTS (SELECT 1 FROM soniq_flow_nodes WHERE job_id = NEW.id)
  OR EXISTS (SELECT 1 FROM soniq_job_deps WHERE dep_id = NEW.id AND dep_state IS NULL)
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
