-- Hand-off at enqueue (docs/performance.md, "Pick-up latency"): a pool enqueue may insert a job
-- already claimed by an idle worker of the same process (status 'processing'). Such a row is
-- nobody else's to claim, so the insert trigger now NOTIFYs only for rows inserted 'queued' and
-- due; everything else about the wake-up is as in 001_initial.sql.
CREATE OR REPLACE FUNCTION soniq_notify_inserted_jobs() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || TG_TABLE_SCHEMA) <= 63 THEN 'soniq_' || TG_TABLE_SCHEMA
    ELSE 'soniq_' || md5(TG_TABLE_SCHEMA)
  END;
  due_queue text;
BEGIN
  -- A queue name too long for a NOTIFY payload (8000 bytes) wakes everyone instead ('*').
  FOR due_queue IN
    SELECT DISTINCT CASE WHEN octet_length(queue) <= 1024 THEN queue ELSE '*' END
    FROM inserted_jobs WHERE status = 'queued' AND scheduled_at <= now()
  LOOP
    PERFORM pg_notify(channel, due_queue);
  END LOOP;
  RETURN NULL;
END;
$$;
