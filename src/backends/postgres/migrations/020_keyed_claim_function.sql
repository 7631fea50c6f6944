-- The keyed claim in one round trip (issue 28; src/backends/postgres/keyed-claim.ts, the class
-- KeyedClaim's `claim`): soniq_keyed_claim takes the schema's keyed-claim lock, runs the rotating
-- pass, and the full pass when the rotating one came back short, in the caller's (implicit)
-- transaction, so that a keyed claim outside another transaction is one statement instead of
-- BEGIN+lock, the pass and COMMIT. Each pass is its own statement of this VOLATILE function, run
-- after the lock: under READ COMMITTED each takes its snapshot at its start, so it sees every
-- keyed claim committed before the lock was granted (and the rotating pass's claims), as the
-- transaction of keyed-claim.ts does. The statements are the rotating and the full pass of
-- keyedClaimStatements (same filters, `$7` restricted always true); their expressions name the
-- keyed indexes of 015 exactly. PL/pgSQL keeps their plans per connection.
--
-- Arguments: worker id, claim size, queues (NULL: every queue), start known, names (NULL: any),
-- versions (NULL: any), the cursor (the key this process's last rotating pass ended at; NULL:
-- none), the lock's name (hashed into the advisory lock key, as the other keyed claims do).
-- Returns the claimed rows; the key the rotating pass took its last head from (the next cursor)
-- is left in the transaction-local setting `soniq.keyed_cursor` ('' when the pass took none),
-- for the calling statement to select beside the rows.
CREATE FUNCTION soniq_keyed_claim(p_worker text, p_limit integer, p_queues text[],
                                  p_start_known boolean, p_names text[], p_versions integer[],
                                  p_cursor text, p_lock text)
RETURNS SETOF soniq_jobs
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
DECLARE
  taken soniq_jobs[];
  more soniq_jobs[];
  last_key text;
  -- No cursor: '' sorts before every key (keys have 1 to 200 characters), so the walk starts at
  -- the first key and has nothing to wrap round to; one statement text either way.
  cur constant text := COALESCE(p_cursor, '');
  -- The instant of each pass, taken after the lock wait (statement_timestamp() would be the
  -- calling statement's start, before it): the jobs' started_at and the rate windows' clock.
  t timestamptz;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(p_lock));
  t := clock_timestamp();
  IF p_limit < 1 THEN
    PERFORM set_config('soniq.keyed_cursor', '', true);
    RETURN;
  END IF;
  -- The rotating pass: keys with queued jobs in key order from just after the cursor, wrapping
  -- round; each key's head while the key has room, until p_limit heads.
  WITH RECURSIVE after_keys(k) AS (
    (SELECT (f.meta -> 'concurrency' ->> 'key') FROM soniq_jobs AS f
     WHERE f.status = 'queued' AND (f.meta -> 'concurrency') IS NOT NULL
       AND (f.meta -> 'concurrency' ->> 'key') > cur
     ORDER BY 1 LIMIT 1)
    UNION ALL
    SELECT (SELECT (n.meta -> 'concurrency' ->> 'key') FROM soniq_jobs AS n
            WHERE n.status = 'queued' AND (n.meta -> 'concurrency') IS NOT NULL
              AND (n.meta -> 'concurrency' ->> 'key') > after_keys.k
            ORDER BY 1 LIMIT 1)
    FROM after_keys WHERE after_keys.k IS NOT NULL
  ), before_keys(k) AS (
    (SELECT (f.meta -> 'concurrency' ->> 'key') FROM soniq_jobs AS f
     WHERE f.status = 'queued' AND (f.meta -> 'concurrency') IS NOT NULL
       AND (f.meta -> 'concurrency' ->> 'key') <= cur ORDER BY 1 LIMIT 1)
    UNION ALL
    SELECT (SELECT (n.meta -> 'concurrency' ->> 'key') FROM soniq_jobs AS n
            WHERE n.status = 'queued' AND (n.meta -> 'concurrency') IS NOT NULL
              AND (n.meta -> 'concurrency' ->> 'key') > before_keys.k
              AND (n.meta -> 'concurrency' ->> 'key') <= cur
            ORDER BY 1 LIMIT 1)
    FROM before_keys WHERE before_keys.k IS NOT NULL
  ), walk AS (
    SELECT k, 1 AS part FROM after_keys WHERE k IS NOT NULL
    UNION ALL
    SELECT k, 2 AS part FROM before_keys WHERE k IS NOT NULL
  ), heads AS MATERIALIZED (
    SELECT c.id, walk.k, walk.part
    FROM walk
    CROSS JOIN LATERAL (
      SELECT q.id, ((q.meta -> 'concurrency' ->> 'limit')::int) AS lim,
             ((q.meta -> 'rate' ->> 'limit')::int) AS rate_lim
      FROM soniq_jobs AS q
      WHERE q.status = 'queued' AND (q.meta -> 'concurrency') IS NOT NULL
        AND (q.meta -> 'concurrency' ->> 'key') = walk.k
        AND q.scheduled_at <= now()
        AND (p_queues IS NULL OR q.queue = ANY(p_queues))
        AND (p_names IS NULL OR q.name = ANY(p_names))
        AND (q.version = 1 OR p_versions IS NULL
             OR q.version <= p_versions[array_position(p_names, q.name)])
        AND q.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                            WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                               OR qs.max_running IS NOT NULL)
      ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
      LIMIT 1
    ) AS c
    WHERE (c.lim IS NULL OR (SELECT count(*) FROM soniq_jobs AS r
                             WHERE r.status = 'processing' AND (r.meta -> 'concurrency') IS NOT NULL
                               AND (r.meta -> 'concurrency' ->> 'key') = walk.k) < c.lim)
      AND (c.rate_lim IS NULL OR (SELECT count(*) FROM soniq_rate_starts AS st
                                  WHERE st.key = walk.k
                                    AND st.expires_at > t) < c.rate_lim)
      AND NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p
                      WHERE p.key = walk.k AND p.until > t)
    LIMIT p_limit
  ), claimed AS (
    UPDATE soniq_jobs AS j
    SET status = 'processing', worker_id = p_worker, claim_token = gen_random_uuid(),
        started_at = t, updated_at = now(), start_known = p_start_known
    WHERE j.id = ANY(ARRAY(SELECT heads.id FROM heads)) AND (j.status = 'queued') IS TRUE
    RETURNING j
  ), charged AS (
    INSERT INTO soniq_rate_starts (key, expires_at)
    SELECT ((claimed.j).meta -> 'concurrency' ->> 'key'),
           t
             + ((((claimed.j).meta -> 'rate' ->> 'per')::bigint) * interval '1 millisecond')
    FROM claimed WHERE ((claimed.j).meta -> 'rate') IS NOT NULL
  ), expired AS (
    DELETE FROM soniq_rate_starts AS x WHERE x.expires_at <= t
  ), unpaused AS (
    DELETE FROM soniq_rate_pauses AS u WHERE u.until <= t
  ), last AS (
    SELECT CASE WHEN bool_or(part = 2) THEN max(k) FILTER (WHERE part = 2)
                ELSE max(k) END AS k
    FROM heads
  )
  SELECT ARRAY(SELECT claimed.j FROM claimed), (SELECT last.k FROM last)
  INTO taken, last_key;
  PERFORM set_config('soniq.keyed_cursor', COALESCE(last_key, ''), true);
  RETURN QUERY SELECT * FROM unnest(taken);
  IF cardinality(taken) >= p_limit THEN
    RETURN;
  END IF;
  t := clock_timestamp();
  -- Fewer heads than asked: every key was passed. The full pass fills the rest: every key's due
  -- candidates ranked within their key first, then in claim order, within the keys' room.
  WITH RECURSIVE keys(k) AS (
    (SELECT (f.meta -> 'concurrency' ->> 'key') FROM soniq_jobs AS f
     WHERE f.status = 'queued' AND (f.meta -> 'concurrency') IS NOT NULL ORDER BY 1 LIMIT 1)
    UNION ALL
    SELECT (SELECT (n.meta -> 'concurrency' ->> 'key') FROM soniq_jobs AS n
            WHERE n.status = 'queued' AND (n.meta -> 'concurrency') IS NOT NULL
              AND (n.meta -> 'concurrency' ->> 'key') > keys.k
            ORDER BY 1 LIMIT 1)
    FROM keys WHERE keys.k IS NOT NULL
  ), candidates AS (
    SELECT c.id, c.priority, c.scheduled_at, c.created_at, c.rn
    FROM keys
    CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_jobs AS r
                        WHERE r.status = 'processing' AND (r.meta -> 'concurrency') IS NOT NULL
                          AND (r.meta -> 'concurrency' ->> 'key') = keys.k) AS running
    CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_rate_starts AS st
                        WHERE st.key = keys.k
                          AND st.expires_at > t) AS started
    CROSS JOIN LATERAL (
      SELECT q.id, q.priority, q.scheduled_at, q.created_at,
             ((q.meta -> 'concurrency' ->> 'limit')::int) AS lim,
             ((q.meta -> 'rate' ->> 'limit')::int) AS rate_lim,
             row_number() OVER (ORDER BY q.priority, q.scheduled_at, q.created_at, q.id) AS rn
      FROM soniq_jobs AS q
      WHERE q.status = 'queued' AND (q.meta -> 'concurrency') IS NOT NULL
        AND (q.meta -> 'concurrency' ->> 'key') = keys.k
        AND q.scheduled_at <= now()
        AND (p_queues IS NULL OR q.queue = ANY(p_queues))
        AND (p_names IS NULL OR q.name = ANY(p_names))
        AND (q.version = 1 OR p_versions IS NULL
             OR q.version <= p_versions[array_position(p_names, q.name)])
        AND q.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                            WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                               OR qs.max_running IS NOT NULL)
      ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
      LIMIT p_limit - cardinality(taken)
    ) AS c
    WHERE keys.k IS NOT NULL AND (c.lim IS NULL OR running.n + c.rn <= c.lim)
      AND NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p
                      WHERE p.key = keys.k AND p.until > t)
      AND (c.rate_lim IS NULL OR started.n + c.rn <= c.rate_lim)
  ), picked AS (
    SELECT id FROM candidates ORDER BY rn, priority, scheduled_at, created_at, id
    LIMIT p_limit - cardinality(taken)
  ), claimed AS (
    UPDATE soniq_jobs AS j
    SET status = 'processing', worker_id = p_worker, claim_token = gen_random_uuid(),
        started_at = t, updated_at = now(), start_known = p_start_known
    WHERE j.id = ANY(ARRAY(SELECT picked.id FROM picked)) AND (j.status = 'queued') IS TRUE
    RETURNING j
  ), charged AS (
    INSERT INTO soniq_rate_starts (key, expires_at)
    SELECT ((claimed.j).meta -> 'concurrency' ->> 'key'),
           t
             + ((((claimed.j).meta -> 'rate' ->> 'per')::bigint) * interval '1 millisecond')
    FROM claimed WHERE ((claimed.j).meta -> 'rate') IS NOT NULL
  ), expired AS (
    DELETE FROM soniq_rate_starts AS x WHERE x.expires_at <= t
  ), unpaused AS (
    DELETE FROM soniq_rate_pauses AS u WHERE u.until <= t
  )
  SELECT ARRAY(SELECT claimed.j FROM claimed) INTO more;
  RETURN QUERY SELECT * FROM unnest(more);
END;
$$;
