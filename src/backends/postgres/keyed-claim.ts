/**
 * The claim of jobs with a concurrency key (docs/flow-control.md), after the ordinary and the
 * limited claims (job-store.ts), which skip keyed rows. One transaction: a transaction-scoped
 * advisory lock of the schema's keyed claims (keyed claims of every process take turns; nothing
 * else waits for it; sent with the `BEGIN` in one simple query, `beginLocked`), then up to two
 * (prepared) statements — each with a snapshot taken after the lock, so it sees every keyed claim
 * committed before (and the first's claims):
 *
 * - the **rotating pass** ({@link keyedClaimStatements} `rotate`): walks the keys with queued jobs
 *   (`soniq_jobs_keyed_claim_idx`, one probe per key) in key order from just after the key where
 *   this process's last pass stopped, wrapping round, and takes each key's head while the key has
 *   room (`soniq_jobs_keyed_running_idx` counts its processing rows), lazily: it stops once it has
 *   the claim's size, so a claim of `n` reads about `n` keys, not every key;
 * - when that pass came back short (it passed every key), the **full pass** (`claim`): every
 *   key's due candidates, ranked within their key first (every key's first due job, then every
 *   key's second…), then in claim order; a job is taken only while its key's running count plus
 *   the jobs taken before it of that key stays within the job's limit.
 *
 * Outside another transaction (`KeyedClaim.claim`), the lock and both passes are one statement,
 * migration 020's function `soniq_keyed_claim` (the same passes written in PL/pgSQL, each a
 * statement of its own after the lock, so each takes its snapshot after it): one round trip
 * instead of three. A store that has taken rate-limited jobs keeps the transaction (it reads the
 * next window in it), and so does the keyed part of a limited queue's claim (`claimIn`).
 *
 * Fairness: a claim of `n` jobs serves `n` different keys before a second job of any key. The
 * bound: a due keyed job at the head of a key with room is taken within one rotation of the key
 * walk of a process that keeps claiming (⌈keys ÷ claim size⌉ claims) — never behind another key's
 * backlog, which gives one head per rotation.
 */

import type pg from "pg";
import {
  pgKeyed,
  pgKeyOf,
  pgLimitOf,
  pgRateLimitOf,
  pgRateWindowOf,
} from "../shared/concurrency-meta.js";
import { pgQueuePaused } from "../shared/queue-pause.js";
import { hasRateLimit, RateWindowWake } from "../shared/rate-window-wake.js";
import type { PgConnection } from "./connection.js";
import { quoteIdent } from "./identifiers.js";
import { CLAIMED_COLUMNS, type RawClaimedRow } from "./rows.js";

/** How long "no keyed job is queued" is believed while a claim already got jobs, in ms. */
const NONE_QUEUED_TTL_MS = 1000;

/** The name of a schema's keyed-claim lock (hashed into an advisory lock key). */
function lockNameOf(schema: string): string {
  return `soniq.keyed-claim:${schema}`;
}

/** The keyed claim's statements for one schema. */
export function keyedClaimStatements(schema: string) {
  const s = quoteIdent(schema);
  const jobs = `${s}.${quoteIdent("soniq_jobs")}`;
  const queues = `${s}.${quoteIdent("soniq_queues")}`;
  const starts = `${s}.${quoteIdent("soniq_rate_starts")}`;
  const pauses = `${s}.${quoteIdent("soniq_rate_pauses")}`;
  /**
   * The CTEs (`), claimed AS (…` up to the last one, left open) that claim the ids of CTE
   * `picked` for worker `$1` (start known `$4`), record the rate-limited ones' starts and delete
   * passed starts and pauses: shared by the rotating and the full pass.
   */
  const claimTail = (picked: string) => `), claimed AS (
        UPDATE ${jobs} AS j
        SET status = 'processing', worker_id = $1, claim_token = gen_random_uuid(),
            started_at = statement_timestamp(), updated_at = now(), start_known = $4::boolean
        WHERE j.id = ANY(ARRAY(SELECT ${picked}.id FROM ${picked})) AND (j.status = 'queued') IS TRUE
        RETURNING j.id, j.name, j.queue, j.args, j.priority, j.attempts, j.max_attempts,
                  j.interruptions, j.uncharged_recoveries, j.scheduled_at, j.created_at,
                  j.worker_id, j.claim_token, j.meta, j.trace_context, j.version
      ), charged AS (
        INSERT INTO ${starts} (key, expires_at)
        SELECT ${pgKeyOf("claimed")}, statement_timestamp() + ${pgRateWindowOf("claimed")}
        FROM claimed WHERE (claimed.meta -> 'rate') IS NOT NULL
      ), expired AS (
        DELETE FROM ${starts} AS x WHERE x.expires_at <= statement_timestamp()
      ), unpaused AS (
        DELETE FROM ${pauses} AS u WHERE u.until <= statement_timestamp()`;
  /**
   * The rotating pass's statement, `cursorFilter` the anchor's condition on the first key after
   * the cursor (`$8`): two texts, not `$8 IS NULL OR …`, so that a prepared statement's generic
   * plan still starts the key walk at the cursor (with the OR it read the keyed index from its
   * first key to the cursor: 4,480 rows, 9.7 ms of a claim of 180).
   */
  const rotate = (cursorFilter: string) => `WITH RECURSIVE after_keys(k) AS (
        (SELECT ${pgKeyOf("f")} FROM ${jobs} AS f
         WHERE f.status = 'queued' AND ${pgKeyed("f")}
           ${cursorFilter} ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT ${pgKeyOf("n")} FROM ${jobs} AS n
                WHERE n.status = 'queued' AND ${pgKeyed("n")} AND ${pgKeyOf("n")} > after_keys.k
                ORDER BY 1 LIMIT 1)
        FROM after_keys WHERE after_keys.k IS NOT NULL
      ), before_keys(k) AS (
        (SELECT ${pgKeyOf("f")} FROM ${jobs} AS f
         WHERE $8::text IS NOT NULL AND f.status = 'queued' AND ${pgKeyed("f")}
           AND ${pgKeyOf("f")} <= $8::text ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT ${pgKeyOf("n")} FROM ${jobs} AS n
                WHERE n.status = 'queued' AND ${pgKeyed("n")} AND ${pgKeyOf("n")} > before_keys.k
                  AND ${pgKeyOf("n")} <= $8::text
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
          SELECT q.id, ${pgLimitOf("q")} AS lim, ${pgRateLimitOf("q")} AS rate_lim
          FROM ${jobs} AS q
          WHERE q.status = 'queued' AND ${pgKeyed("q")} AND ${pgKeyOf("q")} = walk.k
            AND q.scheduled_at <= now()
            AND ($3::text[] IS NULL OR q.queue = ANY($3::text[]))
            AND ($5::text[] IS NULL OR q.name = ANY($5::text[]))
            AND (q.version = 1 OR $6::int[] IS NULL
                 OR q.version <= ($6::int[])[array_position($5::text[], q.name)])
            AND (NOT $7::boolean OR q.queue NOT IN (SELECT qs.name FROM ${queues} AS qs
                                   WHERE ${pgQueuePaused("qs")} OR qs.max_running IS NOT NULL))
          ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
          LIMIT 1
        ) AS c
        WHERE (c.lim IS NULL OR (SELECT count(*) FROM ${jobs} AS r
                                 WHERE r.status = 'processing' AND ${pgKeyed("r")}
                                   AND ${pgKeyOf("r")} = walk.k) < c.lim)
          AND (c.rate_lim IS NULL OR (SELECT count(*) FROM ${starts} AS st
                                      WHERE st.key = walk.k
                                        AND st.expires_at > statement_timestamp()) < c.rate_lim)
          AND NOT EXISTS (SELECT 1 FROM ${pauses} AS p
                          WHERE p.key = walk.k AND p.until > statement_timestamp())
        LIMIT $2
      ${claimTail("heads")}
      ), last AS (
        SELECT CASE WHEN bool_or(part = 2) THEN max(k) FILTER (WHERE part = 2)
                    ELSE max(k) END AS k
        FROM heads
      )
      SELECT ${CLAIMED_COLUMNS}, (SELECT k FROM last) AS last_key FROM claimed
      ORDER BY priority, scheduled_at, created_at, claimed.id`;
  return {
    /**
     * The whole keyed claim in one statement (migration 020's `soniq_keyed_claim`: the lock, the
     * rotating pass, the full pass when short, each pass a statement of its own after the lock):
     * `$1`–`$6` as {@link claim}'s (`$7` restricted is always true), `$7` the cursor (NULL: none),
     * `$8` the lock's name. Outside a transaction its lock is held until the statement's implicit
     * transaction commits. → claimed jobs (`CLAIMED_COLUMNS`) in claim order, each with
     * `last_key`: the key the rotating pass took its last head from ('' when it took none).
     */
    claimFunction: `SELECT ${CLAIMED_COLUMNS},
        current_setting('soniq.keyed_cursor', true) AS last_key
      FROM ${s}.soniq_keyed_claim($1::text, $2::int, $3::text[], $4::boolean, $5::text[],
                                  $6::int[], $7::text, $8::text) AS claimed
      ORDER BY priority, scheduled_at, created_at, claimed.id`,

    /** `$1` lock name → takes the schema's keyed-claim lock until the transaction ends. */
    lock: "SELECT pg_advisory_xact_lock(hashtext($1::text))",

    /**
     * Opens the keyed claim's own transaction and takes the lock (as {@link lock}) in one round
     * trip: two statements of one simple query, the lock's name a literal.
     */
    beginLocked: `BEGIN; SELECT pg_advisory_xact_lock(hashtext('${lockNameOf(schema).replaceAll("'", "''")}'))`,

    /** → `any`: whether any keyed job is queued (one probe of the keyed index). */
    anyQueued: `SELECT EXISTS (SELECT 1 FROM ${jobs} AS k
      WHERE k.status = 'queued' AND ${pgKeyed("k")}) AS any`,

    /**
     * The rotating pass (see the module comment): parameters `$1`–`$7` as {@link claim}'s, `$8`
     * the key the last pass of this process ended at (not NULL: see `rotateFromStart`). Walks the
     * keys with queued jobs in key order from just after `$8`, wrapping round to the first, and
     * takes each key's head (its first due job in claim order that passes the filters) while the
     * key has room (running below the head's limit, starts in its window below its rate limit,
     * not paused), until `$2` heads are taken: the walk is lazy, so a claim of `n` reads about `n`
     * keys (plus the full ones it passes), not all of them. → claimed jobs (`CLAIMED_COLUMNS`),
     * each with `last_key`: the key the walk took its last head from (the next pass's `$8`).
     */
    rotate: rotate(`AND ${pgKeyOf("f")} > $8::text`),

    /**
     * {@link rotate} from the first key, `$8` NULL: the pass of a process that has no cursor yet.
     */
    rotateFromStart: rotate(""),

    /**
     * `$1` worker id, `$2` limit, `$3` queues text[] (NULL: every queue), `$4` start known, `$5`
     * names text[] (NULL: any), `$6` versions int[] (NULL: any), `$7` true to skip queues that
     * are paused or have a `max_running` (false: the caller holds the one limited queue's row
     * lock, limited-claim.ts) → claimed jobs (`CLAIMED_COLUMNS`), in claim order.
     *
     * Rate limits: a job with `meta.rate` is taken only while its key's starts in the window
     * (`soniq_rate_starts` rows not expired at the statement's time) plus the jobs taken before it
     * of that key stay within its rate limit; each rate-limited job taken records a start that
     * expires a window later, and expired starts are deleted, in the same statement. A job's
     * `started_at` is that instant (`statement_timestamp()`, after the lock wait; `now()` is the
     * transaction's start, before it), so the stored starts show the windows as they were kept.
     * A job with a rate limit only has no concurrency limit (NULL). No job of a key paused in
     * `soniq_rate_pauses` is taken; pauses that have passed are deleted.
     */
    claim: `WITH RECURSIVE keys(k) AS (
        (SELECT ${pgKeyOf("f")} FROM ${jobs} AS f
         WHERE f.status = 'queued' AND ${pgKeyed("f")} ORDER BY 1 LIMIT 1)
        UNION ALL
        SELECT (SELECT ${pgKeyOf("n")} FROM ${jobs} AS n
                WHERE n.status = 'queued' AND ${pgKeyed("n")} AND ${pgKeyOf("n")} > keys.k
                ORDER BY 1 LIMIT 1)
        FROM keys WHERE keys.k IS NOT NULL
      ), candidates AS (
        SELECT c.id, c.priority, c.scheduled_at, c.created_at, c.rn
        FROM keys
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM ${jobs} AS r
                            WHERE r.status = 'processing' AND ${pgKeyed("r")}
                              AND ${pgKeyOf("r")} = keys.k) AS running
        CROSS JOIN LATERAL (SELECT count(*) AS n FROM ${starts} AS st
                            WHERE st.key = keys.k
                              AND st.expires_at > statement_timestamp()) AS started
        CROSS JOIN LATERAL (
          SELECT q.id, q.priority, q.scheduled_at, q.created_at, ${pgLimitOf("q")} AS lim,
                 ${pgRateLimitOf("q")} AS rate_lim,
                 row_number() OVER (ORDER BY q.priority, q.scheduled_at, q.created_at, q.id) AS rn
          FROM ${jobs} AS q
          WHERE q.status = 'queued' AND ${pgKeyed("q")} AND ${pgKeyOf("q")} = keys.k
            AND q.scheduled_at <= now()
            AND ($3::text[] IS NULL OR q.queue = ANY($3::text[]))
            AND ($5::text[] IS NULL OR q.name = ANY($5::text[]))
            AND (q.version = 1 OR $6::int[] IS NULL
                 OR q.version <= ($6::int[])[array_position($5::text[], q.name)])
            AND (NOT $7::boolean OR q.queue NOT IN (SELECT qs.name FROM ${queues} AS qs
                                   WHERE ${pgQueuePaused("qs")} OR qs.max_running IS NOT NULL))
          ORDER BY q.priority, q.scheduled_at, q.created_at, q.id
          LIMIT $2
        ) AS c
        WHERE keys.k IS NOT NULL AND (c.lim IS NULL OR running.n + c.rn <= c.lim)
          AND NOT EXISTS (SELECT 1 FROM ${pauses} AS p
                          WHERE p.key = keys.k AND p.until > statement_timestamp())
          AND (c.rate_lim IS NULL OR started.n + c.rn <= c.rate_lim)
      ), picked AS (
        SELECT id FROM candidates ORDER BY rn, priority, scheduled_at, created_at, id LIMIT $2
      ${claimTail("picked")}
      )
      SELECT ${CLAIMED_COLUMNS} FROM claimed
      ORDER BY priority, scheduled_at, created_at, claimed.id`,

    /**
     * → `ms`: milliseconds until the earliest start expires among keys with a due queued
     * rate-limited job (when the first of their windows frees a start; 0 when it has passed
     * already; NULL: none). Read in the claim's transaction, after the claim statement deleted
     * the starts that had passed, for the wake-up (shared/rate-window-wake.ts).
     */
    nextWindow: `SELECT greatest(0,
          ceil(extract(epoch FROM min(st.expires_at) - clock_timestamp()) * 1000)) AS ms
      FROM ${starts} AS st
      WHERE EXISTS (SELECT 1 FROM ${jobs} AS w
                    WHERE w.status = 'queued' AND ${pgKeyed("w")} AND ${pgKeyOf("w")} = st.key
                      AND (w.meta -> 'rate') IS NOT NULL AND w.scheduled_at <= now())`,

    /**
     * `$1` queue, `$2` seconds → pauses the queue until now + `$2` (a later timed pause is kept;
     * an operator's pause, without `paused_until`, is left alone).
     */
    pauseQueue: `INSERT INTO ${queues} AS q (name, paused, paused_until, updated_at)
      VALUES ($1::text, true, now() + make_interval(secs => $2::float8), now())
      ON CONFLICT (name) DO UPDATE SET paused = true,
        paused_until = CASE WHEN ${pgQueuePaused("q")} THEN greatest(q.paused_until, excluded.paused_until)
                            ELSE excluded.paused_until END,
        updated_at = now()
      WHERE NOT q.paused OR q.paused_until IS NOT NULL`,

    /** `$1` key, `$2` seconds → pauses the key until now + `$2` (a later pause is kept). */
    pauseKey: `INSERT INTO ${pauses} AS p (key, until)
      VALUES ($1::text, now() + make_interval(secs => $2::float8))
      ON CONFLICT (key) DO UPDATE SET until = greatest(p.until, excluded.until)`,
  };
}

/** What one keyed claim asks for (see `JobClaimParams`). */
export interface KeyedClaimRequest {
  workerId: string;
  limit: number;
  /** Only these queues; null: every queue. */
  queues: readonly string[] | null;
  /** Stored in `start_known` (see `JobClaimParams.deferStart`). */
  startKnown: boolean;
  /** Only jobs of these names; null: any name. */
  names: readonly string[] | null;
  /** Their highest versions, in the same order; null: any. */
  versions: readonly number[] | null;
}

/** A query runner: the pool's client inside a transaction (`PgConnection.transaction`). */
interface Queryable {
  query<R extends object>(config: pg.QueryConfig): Promise<{ rows: R[] }>;
}

/** The keyed claim of one schema (see the module comment). */
export class KeyedClaim {
  private readonly sql: ReturnType<typeof keyedClaimStatements>;
  private readonly lockName: string;
  private noneQueuedAt = Number.NEGATIVE_INFINITY;
  private round = 0;
  /** Set once a claim of this store took a rate-limited job: from then on, a short claim asks
   * when the next window opens. */
  private rateSeen = false;
  private readonly windowWake: RateWindowWake | undefined;
  /** The key this process's last rotating pass took its last head from (null: none yet). */
  private cursor: string | null = null;
  /** Whether this store's last keyed claim ({@link claim}) took jobs: then the next one runs
   * without the "any keyed job queued?" probe. */
  private tookLast = false;

  /**
   * @param conn The pool. @param schema The schema (names the lock and the tables).
   * @param wake Wakes this process's claimers of a queue (`"*"`: all), at the next rate-limit
   * window; omitted: none (the polls find it).
   */
  constructor(
    private readonly conn: PgConnection,
    schema: string,
    wake?: (queue: string) => void,
  ) {
    this.sql = keyedClaimStatements(schema);
    this.lockName = lockNameOf(schema);
    this.windowWake = wake === undefined ? undefined : new RateWindowWake(wake);
  }

  /**
   * Whether this claim should run the keyed claim before the ordinary one: every other claim
   * while keyed jobs were seen queued lately, so a steady backlog of jobs without a key never
   * starves the keyed ones (and the reverse).
   */
  keyedFirst(): boolean {
    if (Date.now() - this.noneQueuedAt <= NONE_QUEUED_TTL_MS) return false;
    this.round += 1;
    return this.round % 2 === 0;
  }

  /**
   * False while a probe found no keyed job queued within the last second (then a limited queue's
   * claim skips its keyed part, limited-claim.ts); true otherwise.
   */
  mayHaveQueued(): boolean {
    return Date.now() - this.noneQueuedAt > NONE_QUEUED_TTL_MS;
  }

  /**
   * Pauses `key` for `delaySeconds` on every worker (`JobStore.jobPauseKey`), and wakes this
   * process's claimers when the pause ends.
   */
  async pauseKey(key: string, delaySeconds: number): Promise<void> {
    await this.conn.run(this.sql.pauseKey, [key, delaySeconds]);
    this.windowWake?.in(delaySeconds * 1000);
  }

  /**
   * Pauses `queue` for `delaySeconds` on every worker (`JobStore.jobPauseQueue`), and wakes this
   * process's claimers when the pause ends.
   */
  async pauseQueue(queue: string, delaySeconds: number): Promise<void> {
    await this.conn.run(this.sql.pauseQueue, [queue, delaySeconds]);
    this.windowWake?.in(delaySeconds * 1000);
  }

  /**
   * Claims up to `request.limit` keyed jobs, in its own transaction. `tookSome`: the claim got
   * jobs already; then a recent "none queued" answer is believed instead of asking again (an
   * application without keys pays one probe a second on a busy worker, one per empty claim).
   * After a keyed claim that took jobs the probe is not sent (in a keyed drain it would answer
   * yes every time): the transaction runs at once, and finds nothing at worst.
   */
  async claim(request: KeyedClaimRequest, tookSome: boolean): Promise<RawClaimedRow[]> {
    if (request.limit < 1) return [];
    if (tookSome && Date.now() - this.noneQueuedAt <= NONE_QUEUED_TTL_MS) return [];
    if (!this.tookLast) {
      const probe = await this.conn.run<{ any: boolean }>(this.sql.anyQueued, []);
      if (probe.rows[0]?.any !== true) {
        this.noneQueuedAt = Date.now();
        return [];
      }
    }
    this.noneQueuedAt = Number.NEGATIVE_INFINITY;
    if (!this.rateSeen || this.windowWake === undefined) {
      // One round trip: the lock and both passes in one statement (migration 020). A store that
      // has seen rate-limited jobs takes the transaction below, which asks for the next window.
      const rows = await this.claimOnce(request);
      this.tookLast = rows.length > 0;
      if (rows.some((row) => hasRateLimit(row.meta))) {
        this.rateSeen = true;
        if (rows.length < request.limit && this.windowWake !== undefined) {
          // The first claim that took rate-limited jobs came back short: when the next window
          // opens (read after its commit; later claims read it in their transaction).
          const next = await this.conn.run<{ ms: string | number | null }>(this.sql.nextWindow, []);
          const ms = next.rows[0]?.ms;
          if (ms !== null && ms !== undefined) this.windowWake.in(Number(ms));
        }
      }
      return rows;
    }
    let nextMs: number | null = null;
    const rows = await this.conn.transaction(async (client) => {
      const got = await this.claimIn(client, request, true, true);
      if (got.length < request.limit) {
        // Rate-limited jobs may be held by full windows: when the first opens, read in this
        // transaction (the starts the claim saw live; a passed one answers 0).
        const next = await client.query<{ ms: string | number | null }>(
          this.conn.statement(this.sql.nextWindow, []),
        );
        const ms = next.rows[0]?.ms;
        nextMs = ms === null || ms === undefined ? null : Number(ms);
      }
      return got;
    }, this.sql.beginLocked);
    if (nextMs !== null) this.windowWake?.in(nextMs);
    this.tookLast = rows.length > 0;
    return rows;
  }

  /**
   * The keyed claim as one statement outside a transaction (`claimFunction`): the lock and both
   * passes in one round trip. Moves the cursor to the rotating pass's last key.
   */
  private async claimOnce(request: KeyedClaimRequest): Promise<RawClaimedRow[]> {
    const result = await this.conn.run<RawClaimedRow & { last_key: string | null }>(
      this.sql.claimFunction,
      [
        request.workerId,
        request.limit,
        request.queues,
        request.startKnown,
        request.names,
        request.versions,
        this.cursor,
        this.lockName,
      ],
    );
    const rows = result.rows;
    const lastKey = rows[0]?.last_key;
    if (lastKey !== undefined && lastKey !== null && lastKey !== "") this.cursor = lastKey;
    for (const row of rows) delete (row as { last_key?: unknown }).last_key;
    return rows;
  }

  /**
   * The keyed claim inside the caller's transaction: takes the keyed-claim lock, then claims.
   * `restricted` false: the caller holds the row lock of the one limited queue in
   * `request.queues` and passes its room as the limit (limited-claim.ts). `locked`: the
   * transaction took the keyed-claim lock already (`beginLocked`).
   */
  async claimIn(
    client: Queryable,
    request: KeyedClaimRequest,
    restricted: boolean,
    locked = false,
  ): Promise<RawClaimedRow[]> {
    // Named statements (parsed and planned once per connection; plain behind a pooler).
    const run = <R extends object>(text: string, values: unknown[]) =>
      client.query<R>(this.conn.statement(text, values));
    if (!locked) await run(this.sql.lock, [this.lockName]);
    const values = (limit: number) => [
      request.workerId,
      limit,
      request.queues,
      request.startKnown,
      request.names,
      request.versions,
      restricted,
    ];
    const rotated = (
      await run<RawClaimedRow & { last_key: string | null }>(
        this.cursor === null ? this.sql.rotateFromStart : this.sql.rotate,
        [...values(request.limit), this.cursor],
      )
    ).rows;
    const lastKey = rotated[0]?.last_key;
    if (lastKey !== undefined && lastKey !== null) this.cursor = lastKey;
    for (const row of rotated) delete (row as { last_key?: unknown }).last_key;
    if (rotated.length >= request.limit) return rotated;
    // Fewer heads than asked: every key was passed. Keys with room for more than their head
    // (fewer keys than the claim's size) fill the rest, by rank within key (the full pass).
    const rest = await run<RawClaimedRow>(this.sql.claim, values(request.limit - rotated.length));
    return [...rotated, ...rest.rows];
  }
}
