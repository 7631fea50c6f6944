-- Enqueue from SQL (issue 31 item 5; docs/enqueue-from-sql.md): soniq_enqueue(name, args, options)
-- inserts one job the way the library's enqueue does — the same checks of names and limits, the
-- same dedup rule (soniq_dedup_keys: a key is held while its job is queued or processing and until
-- its retention ends once finished), a time-ordered id (UUIDv7), and the same wake-up (the insert
-- trigger NOTIFYs at commit) — so any language can enqueue inside its own transaction. It knows
-- nothing of job definitions: there is no argument schema check, and what a definition would give
-- (queue, priority, max attempts, version, concurrency) comes from `options` or the defaults.
--
-- Errors are raised with SQLSTATE 22023 (invalid_parameter_value) and a message that starts with
-- the library's error code (`INVALID_JOB_NAME: …`, `INVALID_ENQUEUE_OPTION: …`, `INVALID_PAYLOAD: …`).
-- The function runs with the search path of the schema it was made in, whatever the caller's.
-- One integer option of soniq_enqueue: `fallback` when absent, else a JSON number that is a whole
-- number in lo..hi, or INVALID_ENQUEUE_OPTION.
CREATE FUNCTION soniq_enqueue_integer_option(opts jsonb, key text, lo numeric, hi numeric,
                                             fallback integer)
RETURNS integer
LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
  v numeric;
BEGIN
  IF NOT opts ? key THEN
    RETURN fallback;
  END IF;
  IF jsonb_typeof(opts -> key) = 'number' THEN
    v := (opts ->> key)::numeric;
    IF v = trunc(v) AND v BETWEEN lo AND hi THEN
      RETURN v::integer;
    END IF;
  END IF;
  RAISE EXCEPTION USING ERRCODE = '22023',
    MESSAGE = 'INVALID_ENQUEUE_OPTION: ' || key || ' must be an integer ' || lo || '..' || hi
      || ', got ' || (opts -> key)::text;
END;
$$;

CREATE FUNCTION soniq_enqueue(job_name text, args jsonb DEFAULT '{}'::jsonb,
                              options jsonb DEFAULT '{}'::jsonb)
RETURNS uuid
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  known constant text[] := ARRAY['queue', 'priority', 'maxAttempts', 'delay', 'runAt',
                                 'dedupKey', 'version', 'concurrency'];
  opts jsonb := COALESCE(options, '{}'::jsonb);
  bad_key text;
  v_queue text := 'default';
  v_priority integer := 0;
  v_max_attempts integer := 5;
  v_version integer := 1;
  v_due timestamptz := now();
  v_dedup text;
  v_meta json;
  v_args text;
  v_id uuid;
  v_bytes bytea;
  v_holder uuid;
  v_taken boolean;
BEGIN
  IF job_name IS NULL OR char_length(job_name) > 200
     OR job_name !~ '^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$' THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_JOB_NAME: job name ' || COALESCE(to_json(job_name)::text, 'null')
        || ' must be dotted lower-case (letters, digits, _), e.g. "email.send", at most 200 characters';
  END IF;
  IF args IS NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_PAYLOAD: arguments of ' || job_name || ': SQL NULL (pass ''null''::jsonb for a JSON null)';
  END IF;
  v_args := args::text;
  IF octet_length(v_args) > 1048576 THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_PAYLOAD: arguments of ' || job_name || ': ' || octet_length(v_args)
        || ' bytes of JSON exceeds the limit of 1048576 bytes (the default maxPayloadBytes)';
  END IF;
  IF jsonb_typeof(opts) <> 'object' THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_ENQUEUE_OPTION: options must be a JSON object, got ' || jsonb_typeof(opts);
  END IF;
  SELECT k INTO bad_key FROM jsonb_object_keys(opts) AS k WHERE k <> ALL (known) ORDER BY k LIMIT 1;
  IF bad_key IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_ENQUEUE_OPTION: unknown option ' || to_json(bad_key)::text
        || ' (known: ' || array_to_string(known, ', ') || ')';
  END IF;

  IF opts ? 'queue' THEN
    IF jsonb_typeof(opts -> 'queue') <> 'string'
       OR (opts ->> 'queue') !~ '^[A-Za-z0-9_.:-]{1,100}$' THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: queue must be 1-100 of letters, digits and _ . : -, got '
          || (opts -> 'queue')::text;
    END IF;
    v_queue := opts ->> 'queue';
  END IF;

  v_priority := soniq_enqueue_integer_option(opts, 'priority', -1000, 1000, v_priority);
  v_max_attempts := soniq_enqueue_integer_option(opts, 'maxAttempts', 1, 1000, v_max_attempts);
  v_version := soniq_enqueue_integer_option(opts, 'version', 1, 2147483647, v_version);

  IF opts ? 'delay' AND opts ? 'runAt' THEN
    RAISE EXCEPTION USING ERRCODE = '22023',
      MESSAGE = 'INVALID_ENQUEUE_OPTION: give delay or runAt, not both';
  END IF;
  IF opts ? 'delay' THEN
    IF jsonb_typeof(opts -> 'delay') <> 'number' OR (opts ->> 'delay')::numeric < 0
       OR (opts ->> 'delay')::numeric > 315360000 THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: delay must be a number of seconds 0..315360000 (10 years), got '
          || (opts -> 'delay')::text;
    END IF;
    v_due := now() + make_interval(secs => (opts ->> 'delay')::float8);
  END IF;
  IF opts ? 'runAt' THEN
    IF jsonb_typeof(opts -> 'runAt') <> 'string'
       OR (opts ->> 'runAt') !~* '^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$' THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: runAt must be an ISO-8601 instant with a time zone (Z or +hh:mm), got '
          || (opts -> 'runAt')::text;
    END IF;
    BEGIN
      v_due := (opts ->> 'runAt')::timestamptz;
    EXCEPTION WHEN others THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: runAt is not a valid instant: ' || (opts -> 'runAt')::text;
    END;
  END IF;

  IF opts ? 'dedupKey' THEN
    IF jsonb_typeof(opts -> 'dedupKey') <> 'string' OR char_length(opts ->> 'dedupKey') < 1
       OR char_length(opts ->> 'dedupKey') > 500 THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: dedupKey must be a string of 1 to 500 characters';
    END IF;
    v_dedup := opts ->> 'dedupKey';
  END IF;

  IF opts ? 'concurrency' THEN
    IF jsonb_typeof(opts -> 'concurrency') <> 'object'
       OR jsonb_typeof(opts -> 'concurrency' -> 'key') IS DISTINCT FROM 'string'
       OR char_length(opts -> 'concurrency' ->> 'key') NOT BETWEEN 1 AND 200
       OR jsonb_typeof(opts -> 'concurrency' -> 'limit') IS DISTINCT FROM 'number'
       OR (opts -> 'concurrency' ->> 'limit')::numeric < 1
       OR (opts -> 'concurrency' ->> 'limit')::numeric
          <> trunc((opts -> 'concurrency' ->> 'limit')::numeric)
       OR (SELECT count(*) FROM jsonb_object_keys(opts -> 'concurrency')) <> 2 THEN
      RAISE EXCEPTION USING ERRCODE = '22023',
        MESSAGE = 'INVALID_ENQUEUE_OPTION: concurrency must be {"key": <1 to 200 characters>, "limit": <integer >= 1>}';
    END IF;
    v_meta := json_build_object('concurrency', json_build_object(
      'key', opts -> 'concurrency' ->> 'key',
      'limit', (opts -> 'concurrency' ->> 'limit')::integer));
  END IF;

  -- A time-ordered id: 48 bits of Unix milliseconds, version 7, the rest random (as the library's).
  v_bytes := uuid_send(gen_random_uuid());
  v_bytes := overlay(v_bytes PLACING substring(
    int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6);
  v_bytes := set_byte(v_bytes, 6, (get_byte(v_bytes, 6) & 15) | 112);
  v_id := encode(v_bytes, 'hex')::uuid;

  IF v_dedup IS NOT NULL THEN
    -- The library's rule (takeKeys in src/backends/postgres/finish-sql.ts): take a free key, or
    -- one whose hold has passed; a held key inserts nothing and answers its holder.
    INSERT INTO soniq_dedup_keys AS d (dedup_key, job_id) VALUES (v_dedup, v_id)
    ON CONFLICT (dedup_key) DO NOTHING;
    v_taken := FOUND;
    IF NOT v_taken THEN
      UPDATE soniq_dedup_keys AS d SET job_id = v_id, held_until = NULL
      WHERE d.dedup_key = v_dedup AND d.held_until <= now();
      v_taken := FOUND;
    END IF;
    IF NOT v_taken THEN
      SELECT d.job_id INTO v_holder FROM soniq_dedup_keys AS d WHERE d.dedup_key = v_dedup;
      IF v_holder IS NOT NULL THEN
        RETURN v_holder;
      END IF;
      RAISE EXCEPTION USING ERRCODE = '40001',
        MESSAGE = 'DEDUP_CONFLICT: the holder of dedup key ' || to_json(v_dedup)::text
          || ' changed during the enqueue; try again';
    END IF;
  END IF;

  INSERT INTO soniq_jobs (id, name, queue, args, priority, max_attempts, scheduled_at, dedup_key,
                          meta, version)
  VALUES (v_id, job_name, v_queue, v_args::json, v_priority, v_max_attempts, v_due, v_dedup,
          v_meta, v_version);
  RETURN v_id;
END;
$$;
