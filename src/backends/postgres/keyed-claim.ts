/**
 * The claim of jobs with a concurrency key (docs/flow-control.md), after the ordinary and the
 * limited claims (job-store.ts), which skip keyed rows. Every keyed claim is one statement, the
 * database function `soniq_keyed_claim` (migration 028, which replaced 020's): it takes a
 * transaction-scoped advisory lock of the schema's keyed claims (keyed claims of every process
 * take turns; nothing else waits for it), then runs up to two passes, each a statement of its own
 * with a snapshot taken after the lock, so it sees every keyed claim committed before (and the
 * first pass's claims):
 *
 * - the **rotating pass**: walks the keys with queued jobs (`soniq_jobs_keyed_claim_idx`, one
 *   probe per key) in key order from just after the key where this process's last pass stopped
 *   (the cursor), wrapping round, and takes each key's head while the key has room
 *   (`soniq_jobs_keyed_running_idx` counts its processing rows; its rate starts in the window
 *   and its pause are checked too), lazily: it stops once it has the claim's size, so a claim of
 *   `n` reads about `n` keys, not every key;
 * - when that pass came back short (it passed every key), the **full pass**: every key's due
 *   candidates, ranked within their key first (every key's first due job, then every key's
 *   second…), then in claim order; a job is taken only while its key's running count plus the
 *   jobs taken before it of that key stays within the job's limit (and its rate limit likewise).
 *
 * Outside a transaction (`KeyedClaim.claim`) the statement is its own transaction: one round trip,
 * also behind a transaction-mode pooler. The keyed part of a limited queue's claim (`claimIn`)
 * sends the same statement inside that queue's transaction, unrestricted to its queue. A store
 * that has taken rate-limited jobs has the function read, after a short claim, when the next
 * rate window opens, and wakes its claimers then.
 *
 * Fairness: a claim of `n` jobs serves `n` different keys before a second job of any key. The
 * bound: a due keyed job at the head of a key with room is taken within one rotation of the key
 * walk of a process that keeps claiming (⌈keys ÷ claim size⌉ claims) — never behind another key's
 * backlog, which gives one head per rotation.
 */

import type pg from "pg";
import { pgKeyed, pgUnkeyed } from "../shared/concurrency-meta.js";
import { pgQueuePaused } from "../shared/queue-pause.js";
import { hasRateLimit, RateWindowWake } from "../shared/rate-window-wake.js";
import type { PgConnection } from "./connection.js";
import { quoteIdent } from "./identifiers.js";
import { claimedColumns, type RawClaimedRow } from "./rows.js";

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
  const pauses = `${s}.${quoteIdent("soniq_rate_pauses")}`;
  return {
    /**
     * The keyed claim (migration 028's `soniq_keyed_claim`: the lock, the rotating pass, the full
     * pass when short, the next-window read when asked; see the module comment): `$1` worker id,
     * `$2` limit, `$3` queues text[] (NULL: every queue), `$4` start known, `$5` names text[]
     * (NULL: any), `$6` versions int[] (NULL: any), `$7` the cursor (NULL: none), `$8` the lock's
     * name, `$9` restricted (true: skip queues that are paused or have a `max_running`; false:
     * the caller holds the one limited queue's row lock, limited-claim.ts), `$10` true to read
     * when the next rate window opens if the claim comes back short (read also when the claim
     * took rate-limited jobs and came back short), `$11` true to ask whether a due job without a
     * key is queued. Its lock is held until the caller's
     * transaction ends (outside one: the statement's). → the claimed jobs in claim order
     * (`CLAIMED_COLUMNS`; none taken: one row whose `id` is NULL), each with `last_key` (the key
     * the rotating pass took its last head from, '' when none) and `next_window_ms` (ms until
     * that window, 0 when it has passed; '' when none or not read) and `unkeyed_due` (NULL unless
     * `$11`; whether a due job without a key was queued at the statement's start: the first due entry of
     * `soniq_jobs_claim_idx` in its order, which holds queued jobs without a key only (migration
     * 027), so a backlog of keyed jobs costs it one index page (written with the claim's order
     * so that stale statistics cannot turn it into a scan of the table); it
     * ignores the claim's filters, so it is true whenever the ordinary claim statement, run at
     * that instant, could have found a job, and false only when that statement would have found
     * none).
     *
     * Rate limits: a job with `meta.rate` is taken only while its key's starts in the window
     * (`soniq_rate_starts` rows not expired at the pass's instant) plus the jobs taken before it
     * of that key stay within its rate limit; each rate-limited job taken records a start that
     * expires a window later, and expired starts are deleted, in the same statement. A job's
     * `started_at` is that instant (read after the lock wait), so the stored starts show the
     * windows as they were kept. No job of a key paused in `soniq_rate_pauses` is taken; pauses
     * that have passed are deleted.
     */
    claimFunction: `SELECT ${claimedColumns("claimed")},
        current_setting('soniq.keyed_cursor', true) AS last_key,
        current_setting('soniq.keyed_next_window', true) AS next_window_ms,
        CASE WHEN $11::boolean THEN
          (SELECT u.id FROM ${jobs} AS u
           WHERE u.status = 'queued' AND ${pgUnkeyed("u")} AND u.scheduled_at <= now()
           ORDER BY u.priority, u.scheduled_at, u.created_at, u.id LIMIT 1) IS NOT NULL
        END AS unkeyed_due
      FROM (VALUES (1)) AS one
      LEFT JOIN LATERAL ${s}.soniq_keyed_claim($1::text, $2::int, $3::text[], $4::boolean,
          $5::text[], $6::int[], $7::text, $8::text, $9::boolean, $10::boolean) AS claimed
        ON true
      ORDER BY claimed.priority, claimed.scheduled_at, claimed.created_at, claimed.id`,

    /** → `any`: whether any keyed job is queued (one probe of the keyed index). */
    anyQueued: `SELECT EXISTS (SELECT 1 FROM ${jobs} AS k
      WHERE k.status = 'queued' AND ${pgKeyed("k")}) AS any`,

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

/** What {@link KeyedClaim.claim} returns. */
export interface KeyedClaimResult {
  /** The claimed jobs, in claim order. */
  rows: RawClaimedRow[];
  /**
   * From the claim statement (`unkeyed_due` of `claimFunction`), when asked: false when no due
   * job without a key was queued at its start, so the ordinary claim statement, run then, would
   * have found none; true when one was; null when not asked or no statement was sent.
   */
  unkeyedDue: boolean | null;
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
   * Claims up to `request.limit` keyed jobs, in one statement of its own. `tookSome`: the claim
   * got jobs already; then a recent "none queued" answer is believed instead of asking again (an
   * application without keys pays one probe a second on a busy worker, one per empty claim).
   * After a keyed claim that took jobs the probe is not sent (in a keyed drain it would answer
   * yes every time): the claim runs at once, and finds nothing at worst. `askUnkeyed`: the
   * statement also asks whether a due job without a key is queued (one walk of the claim index,
   * which, like the ordinary claim statement, goes past that index's dead entries until a vacuum:
   * asked only when the answer replaces that statement). → the claimed rows and that answer (null:
   * not asked, or no claim statement was sent).
   */
  async claim(
    request: KeyedClaimRequest,
    tookSome: boolean,
    askUnkeyed = false,
  ): Promise<KeyedClaimResult> {
    const nothing: KeyedClaimResult = { rows: [], unkeyedDue: null };
    if (request.limit < 1) return nothing;
    if (tookSome && Date.now() - this.noneQueuedAt <= NONE_QUEUED_TTL_MS) return nothing;
    if (!this.tookLast) {
      const probe = await this.conn.run<{ any: boolean }>(this.sql.anyQueued, []);
      if (probe.rows[0]?.any !== true) {
        this.noneQueuedAt = Date.now();
        return nothing;
      }
    }
    this.noneQueuedAt = Number.NEGATIVE_INFINITY;
    const result = await this.claimWith(
      (text, values) => this.conn.run<ClaimFunctionRow>(text, values),
      request,
      true,
      askUnkeyed,
    );
    this.tookLast = result.rows.length > 0;
    return result;
  }

  /**
   * The keyed claim inside the caller's transaction (the same statement as {@link claim}): its
   * lock is held until that transaction ends. `restricted` false: the caller holds the row lock
   * of the one limited queue in `request.queues` and passes its room as the limit
   * (limited-claim.ts).
   */
  async claimIn(
    client: Queryable,
    request: KeyedClaimRequest,
    restricted: boolean,
  ): Promise<RawClaimedRow[]> {
    // A named statement (parsed and planned once per connection; plain behind a pooler).
    const result = await this.claimWith(
      (text, values) => client.query<ClaimFunctionRow>(this.conn.statement(text, values)),
      request,
      restricted,
      false,
    );
    return result.rows;
  }

  /**
   * Sends `claimFunction` through `run`; moves the cursor to the rotating pass's last key, notes
   * a store that has taken rate-limited jobs (its later short claims read the next window) and
   * sets the wake-up at the next window when the function read one. → the claimed rows and the
   * statement's `unkeyed_due`.
   */
  private async claimWith(
    run: (text: string, values: unknown[]) => Promise<{ rows: ClaimFunctionRow[] }>,
    request: KeyedClaimRequest,
    restricted: boolean,
    askUnkeyed: boolean,
  ): Promise<KeyedClaimResult> {
    if (request.limit < 1) return { rows: [], unkeyedDue: null };
    const result = await run(this.sql.claimFunction, [
      request.workerId,
      request.limit,
      request.queues,
      request.startKnown,
      request.names,
      request.versions,
      this.cursor,
      this.lockName,
      restricted,
      this.rateSeen && this.windowWake !== undefined,
      askUnkeyed,
    ]);
    const first = result.rows[0];
    if (first?.last_key) this.cursor = first.last_key;
    const next = first?.next_window_ms;
    if (next !== undefined && next !== null && next !== "") this.windowWake?.in(Number(next));
    const rows: RawClaimedRow[] = [];
    for (const row of result.rows) {
      const { id, last_key: _key, next_window_ms: _next, unkeyed_due: _due, ...claimed } = row;
      if (id === null) continue;
      if (!this.rateSeen && hasRateLimit(claimed.meta)) this.rateSeen = true;
      rows.push({ ...claimed, id });
    }
    const due = first?.unkeyed_due;
    return { rows, unkeyedDue: typeof due === "boolean" ? due : null };
  }
}

/** A row of `claimFunction`: a claimed job (`id` NULL: none taken) and the claim's answers. */
type ClaimFunctionRow = Omit<RawClaimedRow, "id"> & {
  id: string | null;
  last_key: string | null;
  next_window_ms: string | null;
  unkeyed_due: boolean | null;
};
