-- Every PostgreSQL keyed claim through one function (issue 28; src/backends/postgres/keyed-claim.ts).
-- Until now soniq_keyed_claim (migration 020) served the keyed claim of a drain, while a store
-- that had taken rate-limited jobs, and the keyed part of a limited queue's claim, ran the same
-- passes from TypeScript inside a transaction: the pass SQL was written twice, and the claim's
-- tail (update, rate starts, expired starts and pauses) twice more inside 020. Now the function
-- takes two more arguments and serves all of them:
-- - p_restricted: true skips the jobs of queues that are paused or have a max_running (every
--   claim but one); false is the keyed part of a limited queue's claim, whose caller holds that
--   queue's row lock in its transaction and passes the queue and its room (limited-claim.ts);
-- - p_next_window: true asks, when the claim came back short, when the first full rate window of
--   a key with due queued rate-limited jobs frees a start (a store that has taken rate-limited
--   jobs, as the transaction of keyed-claim.ts did); it is asked too when this claim took
--   rate-limited jobs and came back short (that store's first such claim, which asked in a
--   statement of its own after it). The answer, in milliseconds (0: it has passed; '': none or
--   not asked), is left in the transaction-local setting `soniq.keyed_next_window`, beside
--   `soniq.keyed_cursor` (the key the rotating pass took its last head from, '' when none).
--
-- As in 020: the lock first (a transaction-scoped advisory lock: held to the end of the caller's
-- transaction, the statement's own outside one), then each pass as a statement of its own, which
-- under READ COMMITTED takes its snapshot at its start, after the lock, so it sees every keyed
-- claim committed before (and the rotating pass's claims). The clock of each pass (started_at,
-- the rate windows) is read after the lock. A pass selects the ids it takes; one claim statement,
-- run after each pass, takes them, records the rate-limited ones' starts and deletes the starts
-- and pauses that have passed. The passes' expressions name the keyed indexes of 015 exactly.
-- PL/pgSQL keeps every statement's plan per connection, and `plan_cache_mode` makes it the generic
-- plan from the first call: a worker's claims are spread over its pool's connections, and each
-- connection would otherwise plan each statement anew for its first five calls (the rotating pass
-- takes milliseconds to plan); test/postgres/query-plans.test.ts checks the generic plans.
CREATE FUNCTION soniq_keyed_claim(p_worker text, p_limit integer, p_queues text[],
                                  p_start_known boolean, p_names text[], p_versions integer[],
                                  p_cursor text, p_lock text, p_restricted boolean,
                                  p_next_window boolean)
RETURNS SETOF soniq_jobs
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
  taken soniq_jobs[] := '{}';
  got soniq_jobs[];
  ids uuid[];
  last_key text;
  wait_ms bigint;
  -- No cursor: '' sorts before every key (keys have 1 to 200 characters), so the walk starts at
  -- the first key and has nothing to wrap round to; one statement text either way.
  cur constant text := COALESCE(p_cursor, '');
  -- The instant of each pass, read after the lock wait (statement_timestamp() would be the
  -- calling statement's start, before it): the jobs' started_at and the rate windows' clock.
  t timestamptz;
  -- Whether any key is paused (ctx.rateLimited, scope key): else the passes skip the probe per key.
  paused_keys boolean;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext(p_lock));
  PERFORM set_config('soniq.keyed_cursor', '', true);
  PERFORM set_config('soniq.keyed_next_window', '', true);
  IF p_limit < 1 THEN
    RETURN;
  END IF;
  FOR pass IN 1..2 LOOP
    t := clock_timestamp();
    paused_keys := EXISTS (SELECT 1 FROM soniq_rate_pauses AS p WHERE p.until > t);
    IF pass = 1 THEN
      -- The rotating pass: keys with queued jobs in key order from just after the cursor,
      -- wrapping round; each key's head while the key has room, until p_limit heads. The walk
      -- reads each key's first queued row in claim order (its first entry in the keyed index):
      -- when that row is due and passes the filters it is the head, else a probe finds it.
      WITH RECURSIVE after_keys(k, id, ok, lim, rate_lim) AS (
        (SELECT (f.meta -> 'concurrency' ->> 'key') AS k, f.id,
                 (f.scheduled_at <= now()
                 AND (p_queues IS NULL OR f.queue = ANY(p_queues))
                 AND (p_names IS NULL OR f.name = ANY(p_names))
                 AND (f.version = 1 OR p_versions IS NULL
                      OR f.version <= p_versions[array_position(p_names, f.name)])
                 AND (NOT p_restricted OR f.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 ((f.meta -> 'concurrency' ->> 'limit')::int) AS lim,
                 ((f.meta -> 'rate' ->> 'limit')::int) AS rate_lim
          FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND (f.meta -> 'concurrency') IS NOT NULL
           AND (f.meta -> 'concurrency' ->> 'key') > cur
         ORDER BY (f.meta -> 'concurrency' ->> 'key'), f.priority, f.scheduled_at, f.created_at,
                  f.id
         LIMIT 1)
        UNION ALL
        SELECT n.k, n.id, n.ok, n.lim, n.rate_lim
        FROM after_keys AS a
        CROSS JOIN LATERAL (SELECT (n.meta -> 'concurrency' ->> 'key') AS k, n.id,
                 (n.scheduled_at <= now()
                 AND (p_queues IS NULL OR n.queue = ANY(p_queues))
                 AND (p_names IS NULL OR n.name = ANY(p_names))
                 AND (n.version = 1 OR p_versions IS NULL
                      OR n.version <= p_versions[array_position(p_names, n.name)])
                 AND (NOT p_restricted OR n.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 ((n.meta -> 'concurrency' ->> 'limit')::int) AS lim,
                 ((n.meta -> 'rate' ->> 'limit')::int) AS rate_lim
          FROM soniq_jobs AS n
          WHERE n.status = 'queued' AND (n.meta -> 'concurrency') IS NOT NULL
            AND (n.meta -> 'concurrency' ->> 'key') > a.k
          ORDER BY (n.meta -> 'concurrency' ->> 'key'), n.priority, n.scheduled_at, n.created_at,
                   n.id
          LIMIT 1) AS n
      ), before_keys(k, id, ok, lim, rate_lim) AS (
        (SELECT (f.meta -> 'concurrency' ->> 'key') AS k, f.id,
                 (f.scheduled_at <= now()
                 AND (p_queues IS NULL OR f.queue = ANY(p_queues))
                 AND (p_names IS NULL OR f.name = ANY(p_names))
                 AND (f.version = 1 OR p_versions IS NULL
                      OR f.version <= p_versions[array_position(p_names, f.name)])
                 AND (NOT p_restricted OR f.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 ((f.meta -> 'concurrency' ->> 'limit')::int) AS lim,
                 ((f.meta -> 'rate' ->> 'limit')::int) AS rate_lim
          FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND (f.meta -> 'concurrency') IS NOT NULL
           AND (f.meta -> 'concurrency' ->> 'key') <= cur
         ORDER BY (f.meta -> 'concurrency' ->> 'key'), f.priority, f.scheduled_at, f.created_at,
                  f.id
         LIMIT 1)
        UNION ALL
        SELECT n.k, n.id, n.ok, n.lim, n.rate_lim
        FROM before_keys AS a
        CROSS JOIN LATERAL (SELECT (n.meta -> 'concurrency' ->> 'key') AS k, n.id,
                 (n.scheduled_at <= now()
                 AND (p_queues IS NULL OR n.queue = ANY(p_queues))
                 AND (p_names IS NULL OR n.name = ANY(p_names))
                 AND (n.version = 1 OR p_versions IS NULL
                      OR n.version <= p_versions[array_position(p_names, n.name)])
                 AND (NOT p_restricted OR n.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 ((n.meta -> 'concurrency' ->> 'limit')::int) AS lim,
                 ((n.meta -> 'rate' ->> 'limit')::int) AS rate_lim
          FROM soniq_jobs AS n
          WHERE n.status = 'queued' AND (n.meta -> 'concurrency') IS NOT NULL
            AND (n.meta -> 'concurrency' ->> 'key') > a.k
            AND (n.meta -> 'concurrency' ->> 'key') <= cur
          ORDER BY (n.meta -> 'concurrency' ->> 'key'), n.priority, n.scheduled_at, n.created_at,
                   n.id
          LIMIT 1) AS n
      ), walk AS (
        SELECT k, id, ok, lim, rate_lim, 1 AS part FROM after_keys
        UNION ALL
        SELECT k, id, ok, lim, rate_lim, 2 AS part FROM before_keys
      ), heads AS MATERIALIZED (
        SELECT c.id, walk.k, walk.part
        FROM walk
        CROSS JOIN LATERAL (
          SELECT walk.id, walk.lim, walk.rate_lim WHERE walk.ok
          UNION ALL
          (SELECT q.id, ((q.meta -> 'concurrency' ->> 'limit')::int) AS lim,
                  ((q.meta -> 'rate' ->> 'limit')::int) AS rate_lim
           FROM soniq_jobs AS q
           WHERE NOT walk.ok AND q.status = 'queued' AND (q.meta -> 'concurrency') IS NOT NULL
             AND (q.meta -> 'concurrency' ->> 'key') = walk.k
             AND (q.scheduled_at <= now()
                 AND (p_queues IS NULL OR q.queue = ANY(p_queues))
                 AND (p_names IS NULL OR q.name = ANY(p_names))
                 AND (q.version = 1 OR p_versions IS NULL
                      OR q.version <= p_versions[array_position(p_names, q.name)])
                 AND (NOT p_restricted OR q.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL)))
           ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
           LIMIT 1)
        ) AS c
        WHERE (c.lim IS NULL OR (SELECT count(*) FROM soniq_jobs AS r
                                 WHERE r.status = 'processing'
                                   AND (r.meta -> 'concurrency') IS NOT NULL
                                   AND (r.meta -> 'concurrency' ->> 'key') = walk.k) < c.lim)
          AND (c.rate_lim IS NULL OR (SELECT count(*) FROM soniq_rate_starts AS st
                                      WHERE st.key = walk.k AND st.expires_at > t) < c.rate_lim)
          AND (NOT paused_keys
               OR NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p
                              WHERE p.key = walk.k AND p.until > t))
        LIMIT p_limit
      )
      SELECT ARRAY(SELECT heads.id FROM heads),
             (SELECT CASE WHEN bool_or(part = 2) THEN max(k) FILTER (WHERE part = 2)
                          ELSE max(k) END
              FROM heads)
      INTO ids, last_key;
      PERFORM set_config('soniq.keyed_cursor', COALESCE(last_key, ''), true);
    ELSE
      -- Fewer heads than asked: every key was passed. The full pass fills the rest: every key's
      -- due candidates ranked within their key first, then in claim order, within the keys'
      -- room (the rotating pass's claims count as running: this statement's snapshot has them).
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
                            WHERE r.status = 'processing'
                              AND (r.meta -> 'concurrency') IS NOT NULL
                              AND (r.meta -> 'concurrency' ->> 'key') = keys.k) AS running
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_rate_starts AS st
                            WHERE st.key = keys.k AND st.expires_at > t) AS started
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
            AND (NOT p_restricted
                 OR q.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                                    WHERE (qs.paused AND (qs.paused_until IS NULL
                                                          OR qs.paused_until > now()))
                                       OR qs.max_running IS NOT NULL))
          ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
          LIMIT p_limit - cardinality(taken)
        ) AS c
        WHERE keys.k IS NOT NULL AND (c.lim IS NULL OR running.n + c.rn <= c.lim)
          AND (NOT paused_keys
               OR NOT EXISTS (SELECT 1 FROM soniq_rate_pauses AS p
                              WHERE p.key = keys.k AND p.until > t))
          AND (c.rate_lim IS NULL OR started.n + c.rn <= c.rate_lim)
      )
      SELECT ARRAY(SELECT candidates.id FROM candidates
                   ORDER BY rn, priority, scheduled_at, created_at, id
                   LIMIT p_limit - cardinality(taken))
      INTO ids;
    END IF;
    -- The claim of the ids the pass picked (rows changed meanwhile, cancelled say, are left: the
    -- status check), the starts of the rate-limited ones, expired starts and pauses deleted.
    WITH claimed AS (
      UPDATE soniq_jobs AS j
      SET status = 'processing', worker_id = p_worker, claim_token = gen_random_uuid(),
          started_at = t, updated_at = now(), start_known = p_start_known
      WHERE j.id = ANY(ids) AND (j.status = 'queued') IS TRUE
      RETURNING j
    ), charged AS (
      INSERT INTO soniq_rate_starts (key, expires_at)
      SELECT ((claimed.j).meta -> 'concurrency' ->> 'key'),
             t + ((((claimed.j).meta -> 'rate' ->> 'per')::bigint) * interval '1 millisecond')
      FROM claimed WHERE ((claimed.j).meta -> 'rate') IS NOT NULL
    ), expired AS (
      DELETE FROM soniq_rate_starts AS x WHERE x.expires_at <= t
    ), unpaused AS (
      DELETE FROM soniq_rate_pauses AS u WHERE u.until <= t
    )
    SELECT ARRAY(SELECT claimed.j FROM claimed) INTO got;
    taken := taken || got;
    EXIT WHEN cardinality(taken) >= p_limit;
  END LOOP;
  -- When a short claim's held rate-limited jobs may start: the first start to leave its window
  -- among keys with due queued rate-limited jobs (read after the claims deleted passed starts).
  IF cardinality(taken) < p_limit
     AND (p_next_window
          OR EXISTS (SELECT 1 FROM unnest(taken) AS u WHERE (u.meta -> 'rate') IS NOT NULL)) THEN
    SELECT greatest(0, ceil(extract(epoch FROM min(st.expires_at) - clock_timestamp()) * 1000))
    INTO wait_ms
    FROM soniq_rate_starts AS st
    WHERE EXISTS (SELECT 1 FROM soniq_jobs AS w
                  WHERE w.status = 'queued' AND (w.meta -> 'concurrency') IS NOT NULL
                    AND (w.meta -> 'concurrency' ->> 'key') = st.key
                    AND (w.meta -> 'rate') IS NOT NULL AND w.scheduled_at <= now());
    PERFORM set_config('soniq.keyed_next_window', COALESCE(wait_ms::text, ''), true);
  END IF;
  RETURN QUERY SELECT * FROM unnest(taken);
END;
$$;

-- Migration 020's signature, for a process of the previous version still running during an
-- upgrade: the same claim through the function above (every queue's jobs but the paused and
-- limited queues', no next-window read). Its passes are no longer written here.
CREATE OR REPLACE FUNCTION soniq_keyed_claim(p_worker text, p_limit integer, p_queues text[],
                                             p_start_known boolean, p_names text[],
                                             p_versions integer[], p_cursor text, p_lock text)
RETURNS SETOF soniq_jobs
LANGUAGE plpgsql VOLATILE
SET search_path FROM CURRENT
AS $$
BEGIN
  RETURN QUERY SELECT * FROM soniq_keyed_claim(p_worker, p_limit, p_queues, p_start_known,
                                               p_names, p_versions, p_cursor, p_lock, true,
                                               false);
END;
$$;
