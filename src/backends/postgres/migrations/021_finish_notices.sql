-- Completion notices for `soniq.jobs.waitFor(id)` (docs/operations.md, "Waiting for a job's
-- result"): a wait registers here (one row per wait; `waiter` names it), and the statement that
-- takes the job out of soniq_jobs — done, cancelled, dead-lettered or deleted: every finish
-- deletes the live row — NOTIFYs `!done <id>` on the schema's channel in the same transaction
-- (so the notice arrives after the commit) and deletes the job's wait rows. The registration
-- locks the live row (FOR KEY SHARE, src/backends/postgres/finish-notices.ts) while it inserts:
-- a finish either waits for the registration to commit, and then sees its row, or deleted the
-- live row first, and then the registration inserts nothing and the waiter reads the outcome.
-- With no wait registered the trigger is one probe of an empty table per finishing statement.
CREATE TABLE soniq_job_waits (
  job_id  uuid        NOT NULL,
  waiter  text        NOT NULL,
  since   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, waiter)
);

-- `search_path` is fixed to this schema when the function is made (migrations run with it set),
-- so the trigger finds soniq_job_waits whatever the finishing session's search_path.
CREATE FUNCTION soniq_notify_finished_jobs() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || TG_TABLE_SCHEMA) <= 63 THEN 'soniq_' || TG_TABLE_SCHEMA
    ELSE 'soniq_' || md5(TG_TABLE_SCHEMA)
  END;
  finished_id uuid;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM soniq_job_waits) THEN
    RETURN NULL;
  END IF;
  FOR finished_id IN
    WITH gone AS (
      DELETE FROM soniq_job_waits AS w USING finished_jobs AS f
      WHERE w.job_id = f.id
      RETURNING w.job_id
    )
    SELECT DISTINCT job_id FROM gone
  LOOP
    PERFORM pg_notify(channel, '!done ' || finished_id);
  END LOOP;
  RETURN NULL;
END;
$$;

CREATE TRIGGER soniq_jobs_finished
  AFTER DELETE ON soniq_jobs
  REFERENCING OLD TABLE AS finished_jobs
  FOR EACH STATEMENT EXECUTE FUNCTION soniq_notify_finished_jobs();
