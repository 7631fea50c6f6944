-- Workflows: the release of a waiting job also tells the session that released it (issue 29, the
-- fan-in; docs/performance.md, "2026-12-07, round three").
--
-- A job released by a trigger (the statement that ended its last dependency) was announced only
-- by its NOTIFY. When that statement ran on a worker's own pool, the worker's listener could not
-- tell the NOTIFY from the echo of a local wake-up and held it 50 ms (notifier.ts, OWN_HOLD_MS)
-- before waking the worker's claims; behind a transaction-mode pooler without a LISTEN URL
-- nothing woke them before the next poll. Now the release also raises a NOTICE — only in a
-- session that asked for it (Soniq's own pool connections set `soniq.wake_notices` to `on` in
-- their session setup; any other session, a caller's transaction included, gets none) — which
-- reaches that session's client before the statement's answer: the pool wakes the queue's local
-- claims when the connection comes back from the statement (or its transaction), after its
-- commit. The NOTIFY is sent as before, for every other process.
CREATE OR REPLACE FUNCTION soniq_flow_notify(due_queue text) RETURNS void
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  channel text := CASE
    WHEN octet_length('soniq_' || current_schema()) <= 63 THEN 'soniq_' || current_schema()
    ELSE 'soniq_' || md5(current_schema())
  END;
  payload constant text := CASE WHEN octet_length(due_queue) <= 1024 THEN due_queue ELSE '*' END;
BEGIN
  PERFORM pg_notify(channel, payload);
  IF current_setting('soniq.wake_notices', true) = 'on' THEN
    RAISE NOTICE USING MESSAGE = 'soniq:wake:' || payload;
  END IF;
END;
$$;
