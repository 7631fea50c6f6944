import { createHash } from "node:crypto";
/**
 * The PostgreSQL backend: the production engine (DESIGN.md §1). Claims with
 * `FOR UPDATE SKIP LOCKED`, wakes workers with LISTEN/NOTIFY, enqueues a batch in one round
 * trip (optionally inside the caller's transaction) and decides every time by the database
 * clock. Tables live in one configurable schema, created by versioned migrations (`setup()`).
 */
import pg from "pg";
import { SoniqError } from "../../errors.js";
import type {
  Backend,
  ClaimedJob,
  ClaimRequest,
  CompletionItem,
  DeadLetterRow,
  EnqueueResult,
  EnqueueWriteOptions,
  JobRow,
  NewJob,
  Owner,
  PgQueryable,
  QueueStats,
  RecoveryResult,
  WorkerInfo,
  WorkerRow,
  WorkerStatus,
} from "../backend.js";
import { type CrashLoopRule, INTERRUPTIONS_PLACEHOLDER } from "../backend.js";
import { isUuid, notifyChannel, validateSchemaName } from "./identifiers.js";
import { PgListener } from "./listener.js";
import { migrate } from "./migrate.js";
import {
  type RawClaimedRow,
  type RawDeadLetterRow,
  type RawJobRow,
  type RawWorkerRow,
  toClaimedJob,
  toDeadLetterRow,
  toJobRow,
  toWorkerRow,
} from "./rows.js";
import { buildStatements, SESSION_SETUP, type Statements } from "./sql.js";

/** Where a connection error came from, for {@link PostgresBackendOptions.onError}. */
export type PostgresErrorSource = "pool" | "listener";

/** Options of {@link PostgresBackend}. */
export interface PostgresBackendOptions {
  /** `postgres://…` connection string. */
  connectionString: string;
  /**
   * Schema holding Soniq's tables; must match `/^[a-z_][a-z0-9_]{0,62}$/`. Created by
   * `setup()` when missing.
   */
  schema: string;
  /** Most connections the pool opens at once (an integer >= 1); the LISTEN connection is extra. */
  poolSize: number;
  /**
   * Called with connection errors the backend recovers from by itself: an idle pool connection
   * that died, or the LISTEN connection failing (it re-connects). Defaults to ignoring them.
   */
  onError?: (error: unknown, source: PostgresErrorSource) => void;
  /**
   * Called with the channel when the LISTEN connection drops (`"lost"`, with the error that ended
   * it, if any) and when it is back and re-LISTENed (`"restored"`). Defaults to ignoring them.
   */
  onListenChange?: (change: "lost" | "restored", channel: string, error?: unknown) => void;
}

/** How long close() waits for calls in flight before it cancels them, in milliseconds. */
const CLOSE_CANCEL_AFTER_MS = 1000;

/** SQLSTATEs meaning the schema or a table is missing: undefined_table, invalid_schema_name. */
const MISSING_SCHEMA_CODES = new Set(["42P01", "3F000"]);

/** SQLSTATE unique_violation. */
const UNIQUE_VIOLATION = "23505";

/** The unique index that holds dedup keys (migrations/001_initial.sql). */
const DEDUP_INDEX = "soniq_jobs_dedup_key_idx";

/** How often enqueue re-tries jobs whose dedup holder vanished under it (pruned, rolled back). */
const ENQUEUE_ATTEMPTS = 3;

/** PostgreSQL text cannot hold NUL: error messages and reasons get U+FFFD in its place. */
function storableText(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

/** A `bool` column read through a client that may use non-default type parsers. */
function truthy(value: unknown): boolean {
  return value === true || value === "t" || value === "true";
}

/**
 * PostgreSQL implementation of the {@link Backend} contract (see backend.ts for each method's
 * semantics). Conventions specific to this backend:
 * - All tables are in {@link PostgresBackendOptions.schema}; runtime SQL is schema-qualified.
 * - Durations are seconds; `now()` of the database decides every time.
 * - Wake-ups travel on the channel `soniq_<schema>` (or `soniq_<md5(schema)>` for long names),
 *   payload = the queue name: an insert trigger NOTIFYs for due jobs (also at the commit of a
 *   transactional enqueue); nack, retry/snooze with delay <= 0 and replay NOTIFY as well.
 *   The pool's own such writes also wake this process's subscribers directly (no NOTIFY round
 *   trip), and the listener skips notifications sent by the pool's connections, so one write
 *   wakes a local worker once.
 * - After {@link close}, every call rejects at once with `SoniqError("CLOSED")`.
 * - A missing schema or table rejects with `SoniqError("SCHEMA_NOT_READY")`: run `soniq setup`.
 */
export class PostgresBackend implements Backend {
  readonly kind = "postgres" as const;
  /** The validated schema name. */
  readonly schema: string;
  /** The NOTIFY/LISTEN channel of {@link schema}. */
  readonly channel: string;
  private readonly connectionString: string;
  private readonly pool: pg.Pool;
  private readonly sql: Statements;
  private readonly onError: (error: unknown, source: PostgresErrorSource) => void;
  private readonly onListenChange: (
    change: "lost" | "restored",
    channel: string,
    error?: unknown,
  ) => void;
  private readonly listeners = new Set<(queue: string) => void>();
  private listener: PgListener | null = null;
  /**
   * Server process ids of this pool's connections. A NOTIFY sent from one of them was caused by
   * this backend's own write, which already woke this process's subscribers directly (see
   * {@link wake}, right after the write returned); the listener skips it, so one write wakes a
   * local worker once. Every pool statement that NOTIFYs therefore wakes locally as well.
   */
  private readonly poolPids = new Set<number>();
  private readonly clientPids = new WeakMap<object, number>();
  private closed = false;
  private closing: Promise<void> | null = null;
  /** Calls using the pool right now; close() waits for them before ending the pool. */
  private inflight = 0;
  private idle: (() => void) | null = null;

  /**
   * Creates the backend; opens no connection until the first call.
   * @throws SoniqError `INVALID_OPTION` when the connection string is empty, the schema name
   * does not match `/^[a-z_][a-z0-9_]{0,62}$/` or `poolSize` is not an integer >= 1.
   */
  constructor(options: PostgresBackendOptions) {
    if (typeof options.connectionString !== "string" || options.connectionString.length === 0) {
      throw new SoniqError("INVALID_OPTION", "the PostgreSQL connection string is empty", {
        details: { option: "connectionString" },
      });
    }
    if (!Number.isInteger(options.poolSize) || options.poolSize < 1) {
      throw new SoniqError(
        "INVALID_OPTION",
        `poolSize must be an integer >= 1, got ${String(options.poolSize)}`,
        { details: { option: "poolSize" } },
      );
    }
    this.schema = validateSchemaName(options.schema);
    this.channel = notifyChannel(this.schema);
    this.connectionString = options.connectionString;
    this.sql = buildStatements(this.schema);
    this.onError = options.onError ?? (() => undefined);
    this.onListenChange = options.onListenChange ?? (() => undefined);
    this.pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.poolSize,
      keepAlive: true,
      // Probe an idle connection after 10 s, so a peer that vanished is noticed.
      keepAliveInitialDelayMillis: 10_000,
      // Keep idle connections for a minute (pg's default is 10 s): a worker's next burst after a
      // quiet spell should not pay for new connections.
      idleTimeoutMillis: 60_000,
      // A server that does not answer must not hang a call forever: fail, and let callers retry.
      connectionTimeoutMillis: 10_000,
      // Awaited by pg-pool before the connection is used: runs SESSION_SETUP (session settings,
      // and the server process id — pg_backend_pid(), the id a NOTIFY carries; through a pooler
      // the startup handshake's id is not the server's). A failure fails the caller's connect.
      onConnect: async (client) => {
        const { rows } = await client.query<{ pid: number }>(SESSION_SETUP);
        const pid = rows[0]?.pid;
        if (typeof pid === "number") {
          this.clientPids.set(client, pid);
          this.poolPids.add(pid);
        }
      },
    });
    // An idle connection that dies (server restart, admin kill) must not crash the process.
    this.pool.on("error", (err) => this.onError(err, "pool"));
    this.pool.on("remove", (client) => {
      const pid = this.clientPids.get(client);
      if (pid !== undefined) this.poolPids.delete(pid);
    });
  }

  /** @throws SoniqError `CLOSED` after {@link close}. */
  private assertOpen(): void {
    if (this.closed) throw new SoniqError("CLOSED", "the PostgreSQL backend is closed");
  }

  /** Maps driver errors to Soniq's codes (CLOSED, SCHEMA_NOT_READY); others pass through. */
  private translate(err: unknown): unknown {
    if (this.closed) {
      return new SoniqError("CLOSED", "the PostgreSQL backend was closed during the call", {
        cause: err,
      });
    }
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === "string" && MISSING_SCHEMA_CODES.has(code)) {
      return new SoniqError(
        "SCHEMA_NOT_READY",
        `Soniq's tables are missing in schema "${this.schema}": run \`soniq setup\``,
        { cause: err },
      );
    }
    return err;
  }

  /** Runs one statement on `via` (a caller's client) or the pool. */
  private async run<R>(
    text: string,
    values: unknown[],
    via?: PgQueryable,
  ): Promise<{ rows: R[]; rowCount: number }> {
    return this.track(async () => {
      // Soniq's own connections use named (server-side prepared) statements: parsed and planned
      // once per connection. A caller's client (transactional enqueue) gets plain queries.
      const result = via
        ? await via.query(text, values)
        : await this.pool.query({ name: this.statementName(text), text, values });
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    });
  }

  private readonly statementNames = new Map<string, string>();

  /** A stable prepared-statement name per SQL text (per backend; the schema is in the text). */
  private statementName(text: string): string {
    let name = this.statementNames.get(text);
    if (name === undefined) {
      name = `soniq_${this.statementNames.size}_${createHash("sha1").update(text).digest("hex").slice(0, 12)}`;
      this.statementNames.set(text, name);
    }
    return name;
  }

  /**
   * Runs `work` as an in-flight call: rejects with CLOSED at once after close, translates
   * driver errors, and lets close() wait for it. (pg-pool's `end()` silently drops requests
   * still waiting for a connection, which would leave them pending forever.)
   */
  private async track<T>(work: () => Promise<T>): Promise<T> {
    this.assertOpen();
    this.inflight += 1;
    try {
      return await work();
    } catch (err) {
      throw this.translate(err);
    } finally {
      this.inflight -= 1;
      if (this.inflight === 0 && this.idle) this.idle();
    }
  }

  /**
   * Creates the schema if needed and applies pending migrations (migrate.ts), serialised across
   * processes by an advisory lock. Idempotent.
   * @throws SoniqError `CLOSED` after close; driver errors (e.g. missing privileges) as thrown.
   */
  async setup(): Promise<void> {
    await this.track(() => migrate(this.pool, this.schema));
  }

  /**
   * Stops the LISTEN connection, waits for the calls already in flight to settle, then ends the
   * pool. Calls still running {@link CLOSE_CANCEL_AFTER_MS} ms after close began (a statement
   * waiting for a lock another session holds) are cancelled (`pg_cancel_backend`, on a connection
   * of its own), so a lock cannot hold a closing process. Idempotent. Every later call rejects at
   * once with `SoniqError("CLOSED")`.
   */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closed = true;
      this.listeners.clear();
      const listener = this.listener;
      this.listener = null;
      const settled =
        this.inflight === 0
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              this.idle = resolve;
            });
      this.closing = (async () => {
        await listener?.stop();
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<"late">((resolve) => {
          timer = setTimeout(() => resolve("late"), CLOSE_CANCEL_AFTER_MS);
        });
        if ((await Promise.race([settled, late])) === "late") {
          await this.cancelRunning();
          await settled;
        }
        clearTimeout(timer);
        await this.pool.end();
      })();
    }
    return this.closing;
  }

  /** Cancels the statements this pool's connections are running (best effort). */
  private async cancelRunning(): Promise<void> {
    const pids = [...this.poolPids];
    if (pids.length === 0) return;
    const client = new pg.Client({
      connectionString: this.connectionString,
      connectionTimeoutMillis: 2000,
    });
    try {
      await client.connect();
      await client.query(
        "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND state = 'active'",
        [pids],
      );
    } catch (err) {
      this.onError(err, "pool");
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  /** The database's `now()`. */
  async now(): Promise<Date> {
    const { rows } = await this.run<{ now: Date }>(this.sql.now, []);
    const row = rows[0];
    if (!row) throw new Error("SELECT now() returned no row");
    return row.now;
  }

  /**
   * Inserts the batch in one statement (one round trip) on `options.connection` when given —
   * inside the caller's transaction, so the jobs exist iff the caller commits — else on the
   * pool. Dedup (backend.ts): a held key returns the holder's id with `inserted: false`; a key
   * repeated within the batch maps to the first job carrying it. A second query runs only when
   * a holder committed concurrently and is not yet visible to the insert's snapshot.
   * Due jobs NOTIFY their queue (insert trigger; at commit for a caller's transaction).
   * @returns One result per input job, in input order.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`; driver errors (e.g. a duplicate job id).
   */
  async enqueue(jobs: readonly NewJob[], options?: EnqueueWriteOptions): Promise<EnqueueResult[]> {
    this.assertOpen();
    if (jobs.length === 0) return [];
    const via = options?.connection;
    const unique: NewJob[] = [];
    const slotOf: number[] = [];
    const isFirst: boolean[] = [];
    const slotByKey = new Map<string, number>();
    for (const job of jobs) {
      const seen = job.dedupKey === null ? undefined : slotByKey.get(job.dedupKey);
      if (seen !== undefined) {
        slotOf.push(seen);
        isFirst.push(false);
        continue;
      }
      if (job.dedupKey !== null) slotByKey.set(job.dedupKey, unique.length);
      slotOf.push(unique.length);
      isFirst.push(true);
      unique.push(job);
    }
    const results = await this.insertUnique(unique, via);
    return slotOf.map((slot, i) => {
      const result = results[slot];
      if (!result) throw new Error(`enqueue lost the result of job ${i}`);
      return isFirst[i] ? result : { id: result.id, inserted: false };
    });
  }

  /** Inserts jobs whose dedup keys are distinct; results aligned with `jobs`. */
  private async insertUnique(
    jobs: readonly NewJob[],
    via: PgQueryable | undefined,
  ): Promise<EnqueueResult[]> {
    const results: Array<EnqueueResult | undefined> = new Array(jobs.length);
    let pending = jobs.map((_, i) => i);
    for (let attempt = 0; attempt < ENQUEUE_ATTEMPTS && pending.length > 0; attempt += 1) {
      const batch = pending.map((i) => jobs[i] as NewJob);
      const { rows } = await this.run<{
        id: string;
        inserted: unknown;
        due: unknown;
        holder_id: string | null;
      }>(
        this.sql.enqueue,
        [
          batch.map((j) => j.id),
          batch.map((j) => j.name),
          batch.map((j) => j.queue),
          batch.map((j) => j.args),
          batch.map((j) => j.priority),
          batch.map((j) => j.maxAttempts),
          batch.map((j) => (j.runAt ? j.runAt.toISOString() : null)),
          batch.map((j) => j.delaySeconds),
          batch.map((j) => j.dedupKey),
        ],
        via,
      );
      const unresolved: number[] = [];
      const woken = new Set<string>();
      rows.forEach((row, k) => {
        const index = pending[k] as number;
        // On the pool the row is committed now: wake this process's workers without waiting for
        // the NOTIFY round trip (in a caller's transaction the NOTIFY at its commit does it).
        const queue = jobs[index]?.queue;
        if (!via && truthy(row.due) && queue !== undefined && !woken.has(queue)) {
          woken.add(queue);
          this.wake(queue);
        }
        if (truthy(row.inserted)) results[index] = { id: row.id, inserted: true };
        else if (row.holder_id !== null) results[index] = { id: row.holder_id, inserted: false };
        else unresolved.push(index);
      });
      if (unresolved.length === 0) break;
      // The holder committed after this statement's snapshot: look it up with a fresh one.
      const keys = unresolved.map((i) => jobs[i]?.dedupKey);
      const found = await this.run<{ id: string; dedup_key: string }>(
        this.sql.holders,
        [keys],
        via,
      );
      const holderByKey = new Map(found.rows.map((row) => [row.dedup_key, row.id]));
      pending = [];
      for (const index of unresolved) {
        const holder = holderByKey.get(jobs[index]?.dedupKey ?? "");
        if (holder !== undefined) results[index] = { id: holder, inserted: false };
        else pending.push(index); // The holder is gone meanwhile: try the insert again.
      }
    }
    return results.map((result, i) => {
      if (!result) {
        throw new Error(`enqueue of job ${jobs[i]?.id} kept racing a changing dedup holder`);
      }
      return result;
    });
  }

  /**
   * One statement: picks up to `limit` due queued jobs (`FOR UPDATE SKIP LOCKED`, so concurrent
   * claimers never wait for or share a row), marks them processing with a fresh
   * `gen_random_uuid()` claim token each, and returns them ordered priority, scheduled_at,
   * created_at, id. `queues: []` claims nothing; one queue uses `claimQueue` (its own index),
   * several `claimQueues`.
   */
  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    this.assertOpen();
    const limit = Math.floor(request.limit);
    const queues = request.queues === null ? null : [...new Set(request.queues)];
    if (!(limit >= 1) || (queues !== null && queues.length === 0)) return [];
    const startKnown = request.deferStart !== true;
    const [text, values] =
      queues === null
        ? [this.sql.claimAll, [request.workerId, limit, startKnown]]
        : queues.length === 1
          ? [this.sql.claimQueue, [request.workerId, limit, queues[0], startKnown]]
          : [this.sql.claimQueues, [request.workerId, limit, queues, startKnown]];
    const { rows } = request.signal
      ? await this.runCancellable<RawClaimedRow>(text, values, request.signal)
      : await this.run<RawClaimedRow>(text, values);
    return rows.map(toClaimedJob);
  }

  /**
   * Runs one statement on a connection of its own that `signal` can cancel: on abort, a
   * `pg_cancel_backend` for that connection's server process (sent on another connection; the
   * statement is rolled back unless it had finished). The connection goes back to the pool only
   * after the cancel was answered, so the cancel can never reach a later caller's statement.
   * @throws the signal's reason when aborted before the statement ran; the driver's error (query
   * canceled, 57014) when the cancel stopped it.
   */
  private async runCancellable<R>(
    text: string,
    values: unknown[],
    signal: AbortSignal,
  ): Promise<{ rows: R[]; rowCount: number }> {
    return this.track(async () => {
      if (signal.aborted) throw signal.reason;
      const client = await this.pool.connect();
      let cancelled: Promise<unknown> = Promise.resolve();
      const cancel = () => {
        const pid = this.clientPids.get(client);
        if (pid === undefined) return;
        cancelled = this.pool.query("SELECT pg_cancel_backend($1)", [pid]).catch(() => undefined);
      };
      try {
        if (signal.aborted) throw signal.reason;
        signal.addEventListener("abort", cancel, { once: true });
        const result = await client.query({ name: this.statementName(text), text, values });
        return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
      } finally {
        signal.removeEventListener("abort", cancel);
        await cancelled;
        client.release();
      }
    });
  }

  /** Runs a fenced write; `false` at once when the ids cannot match (not UUIDs). */
  private async fenced(text: string, id: string, owner: Owner, rest: unknown[]): Promise<boolean> {
    return ((await this.runFenced(text, id, owner, rest))?.rowCount ?? 0) > 0;
  }

  /** As {@link fenced} for a statement built by `notifying()` (sql.ts): also wakes locally. */
  private async fencedNotify(
    text: string,
    id: string,
    owner: Owner,
    rest: unknown[],
  ): Promise<boolean> {
    const rows = (await this.runFenced<{ queue: string }>(text, id, owner, rest))?.rows ?? [];
    for (const row of rows) this.wake(row.queue);
    return rows.length > 0;
  }

  /** Runs a fenced write (`$1` id, `$2` worker, `$3` token, then `rest`); null when the ids
   * cannot match (not UUIDs). */
  private async runFenced<R>(
    text: string,
    id: string,
    owner: Owner,
    rest: unknown[],
  ): Promise<{ rows: R[]; rowCount: number } | null> {
    this.assertOpen();
    if (!isUuid(id) || !isUuid(owner.claimToken)) return null;
    return this.run<R>(text, [id, owner.workerId, owner.claimToken, ...rest]);
  }

  /** See {@link Backend.complete}; `resultRetentionSeconds` in seconds. Fenced. */
  complete(
    id: string,
    owner: Owner,
    result: string | null,
    resultRetentionSeconds: number,
  ): Promise<boolean> {
    return this.fenced(this.sql.complete, id, owner, [result, resultRetentionSeconds]);
  }

  /** See {@link Backend.completeMany}: one UPDATE over unnest()ed arrays. Each row fenced. */
  async completeMany(
    items: readonly CompletionItem[],
    resultRetentionSeconds: number,
  ): Promise<boolean[]> {
    const valid = items.filter((i) => isUuid(i.id) && isUuid(i.owner.claimToken));
    if (valid.length === 0) {
      this.assertOpen();
      return items.map(() => false);
    }
    const { rows } = await this.run<{ id: string }>(this.sql.completeMany, [
      valid.map((i) => i.id),
      valid.map((i) => i.owner.workerId),
      valid.map((i) => i.owner.claimToken),
      valid.map((i) => i.result),
      resultRetentionSeconds,
    ]);
    const changed = new Set(rows.map((r) => r.id));
    return items.map((i) => changed.has(i.id));
  }

  /** See {@link Backend.retry}; `delaySeconds` in seconds (<= 0 also NOTIFYs). Fenced. */
  retry(id: string, owner: Owner, error: string, delaySeconds: number): Promise<boolean> {
    const message = storableText(error);
    return delaySeconds <= 0
      ? this.fencedNotify(this.sql.retryNotify, id, owner, [message, delaySeconds, this.channel])
      : this.fenced(this.sql.retry, id, owner, [message, delaySeconds]);
  }

  /** See {@link Backend.deadLetter}: one atomic DELETE … INSERT statement. Fenced. */
  deadLetter(
    id: string,
    owner: Owner,
    error: string,
    reason: string,
    countAttempt: boolean,
  ): Promise<boolean> {
    return this.fenced(this.sql.deadLetter, id, owner, [
      storableText(error),
      storableText(reason),
      countAttempt,
    ]);
  }

  /** See {@link Backend.snooze}; `delaySeconds` in seconds (<= 0 also NOTIFYs). Fenced. */
  snooze(id: string, owner: Owner, delaySeconds: number): Promise<boolean> {
    return delaySeconds <= 0
      ? this.fencedNotify(this.sql.snoozeNotify, id, owner, [delaySeconds, this.channel])
      : this.fenced(this.sql.snooze, id, owner, [delaySeconds]);
  }

  /** See {@link Backend.markStarted}: one fenced UPDATE. */
  markStarted(id: string, owner: Owner): Promise<boolean> {
    return this.fenced(this.sql.markStarted, id, owner, []);
  }

  /** See {@link Backend.nack}: the seed's nack_job field contract plus the owner; NOTIFYs. */
  nack(id: string, owner: Owner): Promise<boolean> {
    return this.fencedNotify(this.sql.nack, id, owner, [this.channel]);
  }

  /**
   * See {@link Backend.replay}: one statement moves the entry back (the insert trigger
   * NOTIFYs).
   * @throws SoniqError `DEDUP_CONFLICT` when a job holds its dedup key (nothing changes).
   */
  async replay(id: string): Promise<boolean> {
    this.assertOpen();
    if (!isUuid(id)) return false;
    try {
      const { rows } = await this.run<{ queue: string }>(this.sql.replay, [id]);
      for (const row of rows) this.wake(row.queue);
      return rows.length > 0;
    } catch (err) {
      const e = err as { code?: unknown; constraint?: unknown };
      if (e.code !== UNIQUE_VIOLATION || e.constraint !== DEDUP_INDEX) throw err;
      const holder = await this.run<{ id: string }>(this.sql.replayHolder, [id]).catch(() => ({
        rows: [] as Array<{ id: string }>,
      }));
      const by = holder.rows[0] ? `job ${holder.rows[0].id}` : "a live job";
      throw new SoniqError("DEDUP_CONFLICT", `${by} already holds the dedup key of ${id}`, {
        cause: err,
        details: { id, holderId: holder.rows[0]?.id },
      });
    }
  }

  /** See {@link Backend.cancel}; `retentionSeconds` in seconds. */
  async cancel(id: string, retentionSeconds: number): Promise<boolean> {
    this.assertOpen();
    if (!isUuid(id)) return false;
    const { rowCount } = await this.run(this.sql.cancel, [id, retentionSeconds]);
    return rowCount > 0;
  }

  /** The job row, or `null` (also for an id that is not a UUID). */
  async getJob(id: string): Promise<JobRow | null> {
    this.assertOpen();
    if (!isUuid(id)) return null;
    const { rows } = await this.run<RawJobRow>(this.sql.getJob, [id]);
    return rows[0] ? toJobRow(rows[0]) : null;
  }

  /** The dead-letter entry, or `null` (also for an id that is not a UUID). */
  async getDeadLetter(id: string): Promise<DeadLetterRow | null> {
    this.assertOpen();
    if (!isUuid(id)) return null;
    const { rows } = await this.run<RawDeadLetterRow>(this.sql.getDeadLetter, [id]);
    return rows[0] ? toDeadLetterRow(rows[0]) : null;
  }

  /** Counts by status plus the DLQ; `total` = jobs + DLQ entries. One statement. */
  async stats(): Promise<QueueStats> {
    const { rows } = await this.run<{ status: string; n: string }>(this.sql.stats, []);
    const stats: QueueStats = {
      total: 0,
      queued: 0,
      processing: 0,
      done: 0,
      dead_letter: 0,
      cancelled: 0,
    };
    for (const row of rows) {
      const n = Number(row.n);
      if (row.status in stats) stats[row.status as keyof QueueStats] += n;
      stats.total += n;
    }
    return stats;
  }

  /** See {@link Backend.registerWorker}; re-registering an id resets its row. */
  async registerWorker(worker: WorkerInfo): Promise<void> {
    await this.run(this.sql.registerWorker, [
      worker.id,
      worker.hostname,
      worker.pid,
      worker.queues === null ? null : [...worker.queues],
      worker.concurrency,
    ]);
  }

  /** See {@link Backend.heartbeat}. */
  async heartbeat(workerId: string, status: WorkerStatus): Promise<void> {
    await this.run(this.sql.heartbeat, [workerId, status]);
  }

  /** See {@link Backend.markWorkerStopped}. */
  async markWorkerStopped(workerId: string): Promise<void> {
    await this.run(this.sql.markWorkerStopped, [workerId]);
  }

  /** See {@link Backend.listWorkers}; `live` is computed by the database clock. */
  async listWorkers(
    heartbeatTimeoutSeconds: number,
  ): Promise<Array<WorkerRow & { live: boolean }>> {
    const { rows } = await this.run<RawWorkerRow & { live: boolean }>(this.sql.listWorkers, [
      heartbeatTimeoutSeconds,
    ]);
    return rows.map((row) => ({ ...toWorkerRow(row), live: row.live }));
  }

  /** See {@link Backend.recoverStale}: one statement; requeued rows NOTIFY their queues. */
  async recoverStale(
    heartbeatTimeoutSeconds: number | null,
    crashLoop: CrashLoopRule,
  ): Promise<RecoveryResult> {
    const { rows } = await this.run<{
      kind: string;
      id: string;
      name: string;
      queue: string;
      previous_owner: string | null;
      interruptions: number;
      charged: boolean;
    }>(this.sql.recoverStale, [
      heartbeatTimeoutSeconds,
      crashLoop.maxInterruptions,
      this.channel,
      crashLoop.reason,
      crashLoop.message,
      INTERRUPTIONS_PLACEHOLDER,
    ]);
    const result: RecoveryResult = { requeued: [], deadLettered: [] };
    for (const row of rows) {
      const job = {
        id: row.id,
        name: row.name,
        queue: row.queue,
        previousOwner: row.previous_owner,
        interruptions: row.interruptions,
        charged: row.charged,
      };
      (row.kind === "dead" ? result.deadLettered : result.requeued).push(job);
    }
    for (const queue of new Set(result.requeued.map((job) => job.queue))) this.wake(queue);
    return result;
  }

  /** See {@link Backend.ownedBy}. */
  async ownedBy(workerId: string): Promise<Array<Owner & { id: string }>> {
    const { rows } = await this.run<{ id: string; claim_token: string }>(this.sql.ownedBy, [
      workerId,
    ]);
    return rows.map((r) => ({ id: r.id, workerId, claimToken: r.claim_token }));
  }

  /** See {@link Backend.forgetWorkers}. */
  async forgetWorkers(notSeenForSeconds: number, limit?: number): Promise<number> {
    const { rowCount } = await this.run(this.sql.forgetWorkers, [notSeenForSeconds, limit ?? null]);
    return rowCount;
  }

  /** See {@link Backend.tryLead}: one upsert that only takes a free or expired lease. */
  async tryLead(name: string, holder: string, ttlSeconds: number): Promise<boolean> {
    const { rowCount } = await this.run(this.sql.tryLead, [name, holder, ttlSeconds]);
    return rowCount > 0;
  }

  /** See {@link Backend.resign}. */
  async resign(name: string, holder: string): Promise<void> {
    await this.run(this.sql.resign, [name, holder]);
  }

  /** See {@link Backend.pruneFinished}: one DELETE; returns how many rows went. */
  async pruneFinished(limit?: number): Promise<number> {
    const { rowCount } = await this.run(this.sql.pruneFinished, [limit ?? null]);
    return rowCount;
  }

  /**
   * See {@link Backend.subscribe}. The first subscription opens the dedicated LISTEN
   * connection (kept until {@link close}); it re-connects by itself, then calls every listener
   * with `"*"`. Listeners run in a microtask, like the memory backend's. After close, returns a
   * no-op unsubscribe.
   */
  subscribe(listener: (queue: string) => void): () => void {
    if (this.closed) return () => undefined;
    this.listeners.add(listener);
    if (!this.listener) {
      this.listener = new PgListener({
        connectionString: this.connectionString,
        channel: this.channel,
        onNotify: (queue, senderPid) => {
          if (!this.poolPids.has(senderPid)) this.wake(queue);
        },
        onReconnect: () => {
          this.onListenChange("restored", this.channel);
          this.wake("*");
        },
        onLost: (err) => this.onListenChange("lost", this.channel, err),
        onError: (err) => this.onError(err, "listener"),
      });
      void this.listener.start();
    }
    return () => {
      this.listeners.delete(listener);
    };
  }

  private wake(queue: string): void {
    for (const listener of this.listeners) queueMicrotask(() => listener(queue));
  }
}
