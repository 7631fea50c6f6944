-- A keyed job's key and limits in columns of their own (issue 28; docs/performance.md, "The
-- PostgreSQL keyed claim, round five"). Until now the keyed claim read them from `meta`, a `json`
-- column: every `meta -> 'concurrency' ->> 'key'` parses the row's JSON text twice (the object,
-- then its member), and the claim read the key, the limit and the rate limit of each key's head
-- and of every row its walk passed (about 1 µs each on this machine).
-- Three generated columns hold them now, computed from `meta` when a row is inserted (and if its
-- `meta` is ever rewritten: PostgreSQL recomputes a stored generated column only on an UPDATE
-- that sets a column it depends on, so a claim or a release, which never set `meta`, costs
-- nothing more). Every writer keeps writing `meta` only: the enqueue of the library and of
-- soniq_enqueue, flows, replays and re-runs all get the columns without a change. A job without a
-- key has NULL in all three.
--
-- Adding stored generated columns rewrites soniq_jobs (live jobs only since migration 010: the
-- finished ones are in soniq_finished_store), holding its ACCESS EXCLUSIVE lock for the rewrite.
ALTER TABLE soniq_jobs
  ADD COLUMN concurrency_key text
    GENERATED ALWAYS AS (meta -> 'concurrency' ->> 'key') STORED,
  ADD COLUMN concurrency_limit integer
    GENERATED ALWAYS AS ((meta -> 'concurrency' ->> 'limit')::integer) STORED,
  ADD COLUMN rate_limit integer
    GENERATED ALWAYS AS ((meta -> 'rate' ->> 'limit')::integer) STORED;

-- The finished store gets the same three columns, plain and always NULL (the move copies the
-- columns a writer writes, src/backends/postgres/finish-sql.ts; the key stays in `meta`): a
-- statement that reads a job "live, else finished" unions `SELECT *` of both, in this version
-- and in the one before it, which may still run beside this schema during a rolling deploy.
-- Nullable columns without a default rewrite nothing. The view is `SELECT *`, fixed when made
-- (as in migration 017), so it is made again.
ALTER TABLE soniq_finished_store
  ADD COLUMN concurrency_key text,
  ADD COLUMN concurrency_limit integer,
  ADD COLUMN rate_limit integer;
CREATE OR REPLACE VIEW soniq_finished_jobs AS
SELECT * FROM soniq_finished_store AS f
WHERE ((f.result_expires_at, f.id) > (SELECT m.expires_at, m.id FROM soniq_prune_mark AS m)) IS TRUE;
ALTER VIEW soniq_finished_jobs ALTER COLUMN version SET DEFAULT 1;

-- The two keyed indexes of migration 015 on the column (same names, same rows).
DROP INDEX soniq_jobs_keyed_claim_idx;
CREATE INDEX soniq_jobs_keyed_claim_idx ON soniq_jobs
  (concurrency_key, priority, scheduled_at, created_at, id)
  WHERE status = 'queued' AND concurrency_key IS NOT NULL;
DROP INDEX soniq_jobs_keyed_running_idx;
CREATE INDEX soniq_jobs_keyed_running_idx ON soniq_jobs (concurrency_key)
  WHERE status = 'processing' AND concurrency_key IS NOT NULL;
-- Left on `meta` on purpose: the ordinary claim indexes (migration 027) and the hand-off probe's
-- keyed index, whose conditions the previous version's statements name; on the column, that
-- version's claims would read the whole table while a rolling deploy runs both. For a job
-- without a key their conditions stop at `meta IS NULL`, as before.

-- The keyed claim of migration 028, reading the columns (the same passes, rules and answers).
CREATE OR REPLACE FUNCTION soniq_keyed_claim(p_worker text, p_limit integer, p_queues text[],
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
        (SELECT f.concurrency_key AS k, f.id,
                 (f.scheduled_at <= now()
                 AND (p_queues IS NULL OR f.queue = ANY(p_queues))
                 AND (p_names IS NULL OR f.name = ANY(p_names))
                 AND (f.version = 1 OR p_versions IS NULL
                      OR f.version <= p_versions[array_position(p_names, f.name)])
                 AND (NOT p_restricted OR f.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 f.concurrency_limit AS lim,
                 f.rate_limit AS rate_lim
          FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND f.concurrency_key IS NOT NULL
           AND f.concurrency_key > cur
         ORDER BY f.concurrency_key, f.priority, f.scheduled_at, f.created_at,
                  f.id
         LIMIT 1)
        UNION ALL
        SELECT n.k, n.id, n.ok, n.lim, n.rate_lim
        FROM after_keys AS a
        CROSS JOIN LATERAL (SELECT n.concurrency_key AS k, n.id,
                 (n.scheduled_at <= now()
                 AND (p_queues IS NULL OR n.queue = ANY(p_queues))
                 AND (p_names IS NULL OR n.name = ANY(p_names))
                 AND (n.version = 1 OR p_versions IS NULL
                      OR n.version <= p_versions[array_position(p_names, n.name)])
                 AND (NOT p_restricted OR n.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 n.concurrency_limit AS lim,
                 n.rate_limit AS rate_lim
          FROM soniq_jobs AS n
          WHERE n.status = 'queued' AND n.concurrency_key IS NOT NULL
            AND n.concurrency_key > a.k
          ORDER BY n.concurrency_key, n.priority, n.scheduled_at, n.created_at,
                   n.id
          LIMIT 1) AS n
      ), before_keys(k, id, ok, lim, rate_lim) AS (
        (SELECT f.concurrency_key AS k, f.id,
                 (f.scheduled_at <= now()
                 AND (p_queues IS NULL OR f.queue = ANY(p_queues))
                 AND (p_names IS NULL OR f.name = ANY(p_names))
                 AND (f.version = 1 OR p_versions IS NULL
                      OR f.version <= p_versions[array_position(p_names, f.name)])
                 AND (NOT p_restricted OR f.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 f.concurrency_limit AS lim,
                 f.rate_limit AS rate_lim
          FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND f.concurrency_key IS NOT NULL
           AND f.concurrency_key <= cur
         ORDER BY f.concurrency_key, f.priority, f.scheduled_at, f.created_at,
                  f.id
         LIMIT 1)
        UNION ALL
        SELECT n.k, n.id, n.ok, n.lim, n.rate_lim
        FROM before_keys AS a
        CROSS JOIN LATERAL (SELECT n.concurrency_key AS k, n.id,
                 (n.scheduled_at <= now()
                 AND (p_queues IS NULL OR n.queue = ANY(p_queues))
                 AND (p_names IS NULL OR n.name = ANY(p_names))
                 AND (n.version = 1 OR p_versions IS NULL
                      OR n.version <= p_versions[array_position(p_names, n.name)])
                 AND (NOT p_restricted OR n.queue NOT IN (SELECT qs.name FROM soniq_queues AS qs
                      WHERE (qs.paused AND (qs.paused_until IS NULL OR qs.paused_until > now()))
                         OR qs.max_running IS NOT NULL))) AS ok,
                 n.concurrency_limit AS lim,
                 n.rate_limit AS rate_lim
          FROM soniq_jobs AS n
          WHERE n.status = 'queued' AND n.concurrency_key IS NOT NULL
            AND n.concurrency_key > a.k
            AND n.concurrency_key <= cur
          ORDER BY n.concurrency_key, n.priority, n.scheduled_at, n.created_at,
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
          (SELECT q.id, q.concurrency_limit AS lim,
                  q.rate_limit AS rate_lim
           FROM soniq_jobs AS q
           WHERE NOT walk.ok AND q.status = 'queued' AND q.concurrency_key IS NOT NULL
             AND q.concurrency_key = walk.k
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
                                   AND r.concurrency_key IS NOT NULL
                                   AND r.concurrency_key = walk.k) < c.lim)
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
        (SELECT f.concurrency_key FROM soniq_jobs AS f
         WHERE f.status = 'queued' AND f.concurrency_key IS NOT NULL ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT n.concurrency_key FROM soniq_jobs AS n
                WHERE n.status = 'queued' AND n.concurrency_key IS NOT NULL
                  AND n.concurrency_key > keys.k
                ORDER BY 1 LIMIT 1)
        FROM keys WHERE keys.k IS NOT NULL
      ), candidates AS (
        SELECT c.id, c.priority, c.scheduled_at, c.created_at, c.rn
        FROM keys
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_jobs AS r
                            WHERE r.status = 'processing'
                              AND r.concurrency_key IS NOT NULL
                              AND r.concurrency_key = keys.k) AS running
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM soniq_rate_starts AS st
                            WHERE st.key = keys.k AND st.expires_at > t) AS started
        CROSS JOIN LATERAL (
          SELECT q.id, q.priority, q.scheduled_at, q.created_at,
                 q.concurrency_limit AS lim,
                 q.rate_limit AS rate_lim,
                 row_number() OVER (ORDER BY q.priority, q.scheduled_at, q.created_at, q.id) AS rn
          FROM soniq_jobs AS q
          WHERE q.status = 'queued' AND q.concurrency_key IS NOT NULL
            AND q.concurrency_key = keys.k
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
      SELECT (claimed.j).concurrency_key,
             t + ((((claimed.j).meta -> 'rate' ->> 'per')::bigint) * interval '1 millisecond')
      FROM claimed WHERE (claimed.j).rate_limit IS NOT NULL
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
          OR EXISTS (SELECT 1 FROM unnest(taken) AS u WHERE u.rate_limit IS NOT NULL)) THEN
    SELECT greatest(0, ceil(extract(epoch FROM min(st.expires_at) - clock_timestamp()) * 1000))
    INTO wait_ms
    FROM soniq_rate_starts AS st
    WHERE EXISTS (SELECT 1 FROM soniq_jobs AS w
                  WHERE w.status = 'queued' AND w.concurrency_key IS NOT NULL
                    AND w.concurrency_key = st.key
                    AND w.rate_limit IS NOT NULL AND w.scheduled_at <= now());
    PERFORM set_config('soniq.keyed_next_window', COALESCE(wait_ms::text, ''), true);
  END IF;
  RETURN QUERY SELECT * FROM unnest(taken);
END;
$$;

