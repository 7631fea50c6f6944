import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
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
  QueueStats,
  RecoveryResult,
  WorkerInfo,
  WorkerRow,
  WorkerStatus,
} from "../backend.js";
import { claimedJobOf } from "../claimed-job.js";
import type { ScheduleStore } from "../schedule-store.js";
import { NOW_MS, secondsToMs } from "./clock.js";
import { loadMigrations, migrate } from "./migrate.js";
import {
  type DeadLetterRecord,
  type JobRecord,
  toDeadLetterRow,
  toJobRow,
  toWorkerRow,
  type WorkerRecord,
} from "./rows.js";
import { SqliteScheduleStore } from "./schedule-store.js";

/** Milliseconds one statement may wait inside SQLite for a lock before yielding to the event loop. */
const BUSY_SLICE_MS = 20;

/** SQLITE_BUSY / SQLITE_LOCKED (and their extended codes): another connection holds the lock. */
function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return (
    typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"))
  );
}

/** Options of {@link SqliteBackend}. */
export interface SqliteBackendOptions {
  /**
   * Path of the database file, relative to the working directory or absolute. Missing parent
   * directories are created. `":memory:"` opens a private in-memory database (one connection,
   * so nothing is shared with other backends or processes).
   */
  path: string;
  /**
   * How long, in **milliseconds**, a call waits for another connection's lock before it fails
   * with `SQLITE_BUSY`. Default 5000. A non-negative integer. The wait happens in short slices
   * with the event loop free in between (see `use`), so signals and timers still run.
   */
  busyTimeoutMs?: number;
}

/** The default {@link SqliteBackendOptions.busyTimeoutMs}: 5000 ms. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000;

/** Columns of `soniq_jobs`, in table order. */
const JOB_COLUMNS =
  "id, name, queue, args, status, priority, attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id, claim_token, last_error, result, result_expires_at, dedup_key, meta";

/** The fence of every finishing write (DESIGN.md §3.1). Binds `@id`, `@workerId`, `@claimToken`. */
const OWNED =
  "id = @id AND status = 'processing' AND worker_id = @workerId AND claim_token = @claimToken";

/** Success, fenced: `@id`, the owner, `@result` (JSON text or NULL), `@retentionMs`. */
const COMPLETE = `UPDATE soniq_jobs
  SET status = 'done', attempts = attempts + 1, result = @result,
      finished_at = ${NOW_MS}, updated_at = ${NOW_MS},
      result_expires_at = ${NOW_MS} + @retentionMs
  WHERE ${OWNED}`;

/** The owner's fields as named parameters of {@link OWNED} (nothing else from the object). */
function fence(owner: Owner): { workerId: string; claimToken: string } {
  return { workerId: owner.workerId, claimToken: owner.claimToken };
}

/** The order claims take jobs in (backend.ts `Backend.claim`), `id` last as a stable tie-break. */
const CLAIM_ORDER = "priority, scheduled_at, created_at, id";

/**
 * The SQLite backend: one database file shared by every process that opens it, through
 * better-sqlite3 (synchronous; each method still returns a promise, as the {@link Backend}
 * contract asks).
 *
 * Storage (migration `001_initial.sql`): tables `soniq_jobs`, `soniq_dead_letter_jobs`,
 * `soniq_workers`, `soniq_migrations`. Times are INTEGER **milliseconds** since the epoch taken
 * from SQLite's clock (DESIGN.md §3.5) and read back as `Date`; durations passed in are
 * **seconds**. Arguments and results are stored as the given JSON text, byte for byte.
 *
 * Connection settings: `journal_mode=WAL` (readers never block the writer),
 * `synchronous=NORMAL`, a 20 ms `busy_timeout` per statement retried up to
 * {@link SqliteBackendOptions.busyTimeoutMs}. Every
 * write that reads before it writes runs in a `BEGIN IMMEDIATE` transaction, so several worker
 * processes on one file claim each job exactly once; a lock not obtained within the busy
 * timeout surfaces as the driver's `SQLITE_BUSY` error (never swallowed).
 *
 * Errors common to every method: `SoniqError("CLOSED")` after {@link SqliteBackend.close};
 * `SoniqError("SCHEMA_NOT_READY")` when the tables are missing (run `soniq setup`, i.e.
 * {@link SqliteBackend.setup}); otherwise the driver's `SqliteError`.
 */
export class SqliteBackend implements Backend {
  /** Always `"sqlite"`. */
  readonly kind = "sqlite" as const;
  /** The database path exactly as given in {@link SqliteBackendOptions.path}. */
  readonly path: string;
  /** The busy timeout in milliseconds this connection uses. */
  readonly busyTimeoutMs: number;

  private db: Database.Database | null = null;
  private closed = false;
  /** Schedules and their history (schedule-store.ts). */
  readonly schedules: ScheduleStore;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly listeners = new Set<(queue: string) => void>();

  /**
   * Opens (creating when missing) the database file and its parent directories, and sets the
   * connection pragmas. Does not create the schema: call {@link SqliteBackend.setup}.
   * @throws SoniqError `INVALID_OPTION` for an empty path or a busy timeout that is not a
   * non-negative integer; the file system's or driver's error when the file cannot be opened
   * (e.g. `EACCES`, `SQLITE_NOTADB`) or the WAL switch waits past the busy timeout.
   */
  constructor(options: SqliteBackendOptions) {
    const { path } = options;
    if (typeof path !== "string" || path.trim().length === 0) {
      throw new SoniqError("INVALID_OPTION", "the SQLite backend needs a database file path", {
        details: { option: "path" },
      });
    }
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
    if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new SoniqError(
        "INVALID_OPTION",
        `busyTimeoutMs must be a non-negative integer (milliseconds), got ${String(busyTimeoutMs)}`,
        { details: { option: "busyTimeoutMs" } },
      );
    }
    this.path = path;
    this.busyTimeoutMs = busyTimeoutMs;
    this.schedules = new SqliteScheduleStore({
      use: (fn) => this.use(fn),
      stmt: (db, sql) => this.stmt(db, sql),
      nowMs: (db) => this.nowMs(db),
      insertJobs: (db, jobs, queues) => this.insertJobs(db, jobs, queues),
      wake: (queue) => this.wake(queue),
    });
  }

  /**
   * The connection, opened on first use. Only {@link SqliteBackend.setup} creates a missing file
   * (and its parent directories); anything else on a missing file is `SCHEMA_NOT_READY`, so a
   * typo in a path never leaves empty databases behind.
   */
  private connection(create: boolean): Database.Database {
    if (this.closed) throw new SoniqError("CLOSED", `the SQLite backend (${this.path}) is closed`);
    if (this.db) return this.db;
    const inMemory = this.path === ":memory:";
    if (!inMemory && !create && !existsSync(this.path)) {
      throw new SoniqError(
        "SCHEMA_NOT_READY",
        `there is no SQLite database at ${resolve(this.path)}: run \`soniq setup\` to create it`,
      );
    }
    if (!inMemory) mkdirSync(dirname(resolve(this.path)), { recursive: true });
    const db = new Database(this.path, { timeout: BUSY_SLICE_MS });
    try {
      db.pragma(`busy_timeout = ${BUSY_SLICE_MS}`);
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
    } catch (err) {
      db.close();
      throw err;
    }
    this.db = db;
    return db;
  }

  /**
   * Runs `fn` on the connection. better-sqlite3 is synchronous, so a lock held by another process
   * must not block this one's event loop (signals, timers, heartbeats): each statement waits at
   * most {@link BUSY_SLICE_MS} inside SQLite, and a busy database is retried here, asynchronously,
   * until `busyTimeoutMs` has passed. `fn` must be all-or-nothing (one statement or one
   * transaction), which makes the retry safe.
   * @throws SoniqError `CLOSED` after close; `SCHEMA_NOT_READY` for a missing table or file;
   * `SQLITE_BUSY` from the driver once `busyTimeoutMs` is spent.
   */
  private async use<T>(fn: (db: Database.Database) => T, create = false): Promise<T> {
    const giveUpAt = Date.now() + this.busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return fn(this.connection(create));
      } catch (err) {
        if (isBusy(err) && Date.now() < giveUpAt) {
          const wait = Math.min(50, 2 ** attempt) + Math.random() * 5;
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        if (err instanceof Database.SqliteError && /no such table/i.test(err.message)) {
          throw new SoniqError(
            "SCHEMA_NOT_READY",
            `the Soniq schema is missing in ${this.path} (${err.message}): run \`soniq setup\``,
            { cause: err },
          );
        }
        throw err;
      }
    }
  }

  /** A prepared statement, cached per connection. */
  private stmt(db: Database.Database, sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** The database clock, in milliseconds since the epoch. */
  private nowMs(db: Database.Database): number {
    return (this.stmt(db, `SELECT ${NOW_MS} AS now`).get() as { now: number }).now;
  }

  private wake(queue: string): void {
    for (const listener of this.listeners) queueMicrotask(() => listener(queue));
  }

  /**
   * Creates or migrates the schema: applies each `migrations/NNN_*.sql` not yet recorded in
   * `soniq_migrations`, in order, inside one `BEGIN IMMEDIATE` transaction. Idempotent; two
   * processes running it at once are safe (the second waits for the lock, then finds nothing to
   * do). Contract: `Backend.setup`.
   * @throws SoniqError `CLOSED`; the driver's error when a migration fails (nothing is applied)
   * or the lock is not obtained within the busy timeout.
   */
  async setup(): Promise<void> {
    await this.use((db) => migrate(db, loadMigrations()), true);
  }

  /**
   * Closes the database connection and drops every subscriber. Idempotent. Every later call
   * rejects at once with `SoniqError("CLOSED")`. Contract: `Backend.close`.
   */
  async close(): Promise<void> {
    const db = this.db;
    this.db = null;
    this.closed = true;
    this.statements.clear();
    this.listeners.clear();
    db?.close();
  }

  /** The database's current time (millisecond precision). Contract: `Backend.now`. */
  async now(): Promise<Date> {
    return this.use((db) => new Date(this.nowMs(db)));
  }

  /**
   * Inserts the jobs in one immediate transaction (all or nothing). `scheduled_at` is
   * `runAt`'s epoch milliseconds, or the database's now plus `delaySeconds` (seconds).
   * Dedup: a job whose `dedupKey` is held by any row of `soniq_jobs` (including one inserted
   * earlier in the same batch) returns the holder's id with `inserted: false`. Wakes this
   * process's subscribers for each queue that received a job. Contract: `Backend.enqueue`.
   * @returns One result per job, in input order.
   * @throws SoniqError `UNSUPPORTED` when `options.connection` is given (PostgreSQL only);
   * `CLOSED`; `SCHEMA_NOT_READY`; the driver's error (e.g. an id that already exists).
   */
  async enqueue(jobs: readonly NewJob[], options?: EnqueueWriteOptions): Promise<EnqueueResult[]> {
    const queues = new Set<string>();
    const results = await this.use((db) => {
      if (options?.connection) {
        throw new SoniqError(
          "UNSUPPORTED",
          "`connection` (transactional enqueue) needs PostgreSQL",
        );
      }
      return db.transaction(() => this.insertJobs(db, jobs, queues)).immediate();
    });
    for (const queue of queues) this.wake(queue);
    return results;
  }

  /**
   * The body of {@link enqueue}: inserts `jobs` on `db`, inside the caller's transaction (the
   * schedule store's compare-and-set runs it in its own), adding each queue that received a job
   * to `queues`.
   */
  private insertJobs(
    db: Database.Database,
    jobs: readonly NewJob[],
    queues: Set<string>,
  ): EnqueueResult[] {
    const holderOf = this.stmt(db, "SELECT id FROM soniq_jobs WHERE dedup_key = ?");
    const insert = this.stmt(
      db,
      `INSERT INTO soniq_jobs (id, name, queue, args, status, priority, max_attempts,
         scheduled_at, created_at, updated_at, dedup_key, meta)
       VALUES (@id, @name, @queue, @args, 'queued', @priority, @maxAttempts,
         @scheduledAt, @now, @now, @dedupKey, @meta)`,
    );
    const now = this.nowMs(db);
    const out: EnqueueResult[] = [];
    for (const job of jobs) {
      if (job.dedupKey !== null) {
        const holder = holderOf.get(job.dedupKey) as { id: string } | undefined;
        if (holder) {
          out.push({ id: holder.id, inserted: false });
          continue;
        }
      }
      insert.run({
        id: job.id,
        name: job.name,
        queue: job.queue,
        args: job.args,
        priority: job.priority,
        maxAttempts: job.maxAttempts,
        scheduledAt: job.runAt ? job.runAt.getTime() : now + secondsToMs(job.delaySeconds),
        now,
        dedupKey: job.dedupKey,
        meta: job.meta ?? null,
      });
      queues.add(job.queue);
      out.push({ id: job.id, inserted: true });
    }
    return out;
  }

  /**
   * Claims up to `limit` due (`scheduled_at <= now`) queued jobs of the given queues, in
   * priority, `scheduled_at`, `created_at`, `id` order, inside one immediate transaction, so
   * each job is claimed exactly once across every process sharing the file. Each claimed row
   * gets `status='processing'`, the `workerId`, a fresh random UUID `claim_token`, and
   * `started_at = updated_at = now`; `attempts` is unchanged. Contract: `Backend.claim`.
   * @returns The claimed jobs ({@link ClaimedJob}), in claim order (empty when `limit`
   * is below 1 or nothing is due).
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`; `SQLITE_BUSY` past the busy timeout.
   */
  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    return this.use((db) => {
      const limit = Math.floor(request.limit);
      if (!(limit >= 1)) return [];
      const filter =
        request.queues === null ? "" : "AND queue IN (SELECT value FROM json_each(@queues))";
      const due = this.stmt(
        db,
        `SELECT id FROM soniq_jobs
         WHERE status = 'queued' AND scheduled_at <= @now ${filter}
         ORDER BY ${CLAIM_ORDER} LIMIT @limit`,
      );
      const take = this.stmt(
        db,
        `UPDATE soniq_jobs
         SET status = 'processing', worker_id = @workerId, claim_token = @claimToken,
             started_at = @now, updated_at = @now
         WHERE id = @id AND status = 'queued'
         RETURNING ${JOB_COLUMNS}`,
      );
      return db
        .transaction(() => {
          const now = this.nowMs(db);
          const params: Record<string, unknown> = { now, limit };
          if (request.queues !== null) params.queues = JSON.stringify(request.queues);
          const ids = due.all(params) as Array<{ id: string }>;
          const claimed: ClaimedJob[] = [];
          for (const { id } of ids) {
            const row = take.get({
              id,
              now,
              workerId: request.workerId,
              claimToken: randomUUID(),
            }) as JobRecord | undefined;
            if (row) claimed.push(claimedJobOf(toJobRow(row)));
          }
          return claimed;
        })
        .immediate();
    });
  }

  /**
   * Success, fenced by `owner`: `status='done'`, `attempts+1`, `result` (JSON text or null),
   * `finished_at = updated_at = now`, `result_expires_at = now + resultRetentionSeconds`
   * (seconds). Contract: `Backend.complete`, DESIGN.md §3.1–3.2.
   * @returns `false` (nothing changed) when `owner` does not hold the claim.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async complete(
    id: string,
    owner: Owner,
    result: string | null,
    resultRetentionSeconds: number,
  ): Promise<boolean> {
    return this.use((db) => {
      const info = this.stmt(db, COMPLETE).run({
        id,
        ...fence(owner),
        result,
        retentionMs: secondsToMs(resultRetentionSeconds),
      });
      return info.changes > 0;
    });
  }

  /**
   * {@link SqliteBackend.complete} for many jobs in one immediate transaction, each fenced on its
   * own. Contract: `Backend.completeMany`.
   * @returns Per item, in input order, whether its row changed.
   */
  async completeMany(
    items: readonly CompletionItem[],
    resultRetentionSeconds: number,
  ): Promise<boolean[]> {
    return this.use((db) => {
      const update = this.stmt(db, COMPLETE);
      const retentionMs = secondsToMs(resultRetentionSeconds);
      return db
        .transaction(() =>
          items.map(
            (item) =>
              update.run({ id: item.id, ...fence(item.owner), result: item.result, retentionMs })
                .changes > 0,
          ),
        )
        .immediate();
    });
  }

  /**
   * Failure with attempts left, fenced by `owner`: `status='queued'`, `attempts+1`,
   * `last_error = error`, `scheduled_at = now + delaySeconds` (seconds), `updated_at = now`,
   * owner cleared. Wakes this process's subscribers when `delaySeconds <= 0`.
   * Contract: `Backend.retry`.
   * @returns `false` (nothing changed) when `owner` does not hold the claim.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async retry(id: string, owner: Owner, error: string, delaySeconds: number): Promise<boolean> {
    const queue = await this.use((db) => {
      const row = this.stmt(
        db,
        `UPDATE soniq_jobs
         SET status = 'queued', attempts = attempts + 1, last_error = @error,
             scheduled_at = ${NOW_MS} + @delayMs, updated_at = ${NOW_MS},
             worker_id = NULL, claim_token = NULL
         WHERE ${OWNED}
         RETURNING queue`,
      ).get({ id, ...fence(owner), error, delayMs: secondsToMs(delaySeconds) }) as
        | { queue: string }
        | undefined;
      return row?.queue;
    });
    if (queue === undefined) return false;
    if (delaySeconds <= 0) this.wake(queue);
    return true;
  }

  /**
   * Moves the job to `soniq_dead_letter_jobs` in one immediate transaction (same id; the row is
   * in exactly one table), fenced by `owner`: `attempts+1` when `countAttempt`,
   * `last_error = error`, `reason`, `dead_at = updated_at = now`; the other fields as they were.
   * Contract: `Backend.deadLetter`.
   * @returns `false` (nothing changed) when `owner` does not hold the claim.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async deadLetter(
    id: string,
    owner: Owner,
    error: string,
    reason: string,
    countAttempt: boolean,
  ): Promise<boolean> {
    return this.use((db) => {
      const move = this.stmt(
        db,
        `INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts,
           max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
           finished_at, worker_id, claim_token, last_error, dedup_key, reason, dead_at)
         SELECT id, name, queue, args, priority, attempts + @increment,
           max_attempts, interruptions, scheduled_at, created_at, @now, started_at,
           finished_at, worker_id, claim_token, @error, dedup_key, @reason, @now
         FROM soniq_jobs WHERE ${OWNED}`,
      );
      const remove = this.stmt(db, "DELETE FROM soniq_jobs WHERE id = ?");
      return db
        .transaction(() => {
          const now = this.nowMs(db);
          const info = move.run({
            id,
            ...fence(owner),
            error,
            reason,
            now,
            increment: countAttempt ? 1 : 0,
          });
          if (info.changes === 0) return false;
          remove.run(id);
          return true;
        })
        .immediate();
    });
  }

  /**
   * Snooze, fenced by `owner`: `status='queued'`, `scheduled_at = now + delaySeconds`
   * (seconds), `updated_at = now`, owner cleared, `attempts` unchanged. Wakes this process's
   * subscribers when `delaySeconds <= 0`. Contract: `Backend.snooze`.
   * @returns `false` (nothing changed) when `owner` does not hold the claim.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async snooze(id: string, owner: Owner, delaySeconds: number): Promise<boolean> {
    const queue = await this.use((db) => {
      const row = this.stmt(
        db,
        `UPDATE soniq_jobs
         SET status = 'queued', scheduled_at = ${NOW_MS} + @delayMs, updated_at = ${NOW_MS},
             worker_id = NULL, claim_token = NULL
         WHERE ${OWNED}
         RETURNING queue`,
      ).get({ id, ...fence(owner), delayMs: secondsToMs(delaySeconds) }) as
        | { queue: string }
        | undefined;
      return row?.queue;
    });
    if (queue === undefined) return false;
    if (delaySeconds <= 0) this.wake(queue);
    return true;
  }

  /**
   * NACK, the seed's `nack_job` field contract plus the owner match (DESIGN.md §2):
   * `status='queued'`, `worker_id = NULL`, `claim_token = NULL`, `updated_at = scheduled_at =
   * now`; `attempts` and `last_error` untouched. Wakes this process's subscribers.
   * Contract: `Backend.nack`.
   * @returns `false` (a no-op) when the row already moved on or `owner` does not hold it.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async nack(id: string, owner: Owner): Promise<boolean> {
    const queue = await this.use((db) => {
      const row = this.stmt(
        db,
        `UPDATE soniq_jobs
         SET status = 'queued', worker_id = NULL, claim_token = NULL,
             updated_at = ${NOW_MS}, scheduled_at = ${NOW_MS}
         WHERE ${OWNED}
         RETURNING queue`,
      ).get({ id, ...fence(owner) }) as { queue: string } | undefined;
      return row?.queue;
    });
    if (queue === undefined) return false;
    this.wake(queue);
    return true;
  }

  /**
   * Moves a dead-letter entry back to `soniq_jobs` in one immediate transaction: `queued`, due
   * now, `attempts = 0`, `interruptions = 0`, owner, `started_at`, `finished_at` and result
   * cleared, `last_error`, `created_at` and `dedup_key` kept. Wakes this process's subscribers.
   * Contract: `Backend.replay`.
   * @returns `false` when there is no such entry.
   * @throws SoniqError `DEDUP_CONFLICT` when a row of `soniq_jobs` holds the entry's dedup key
   * (nothing changes); `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async replay(id: string): Promise<boolean> {
    const queue = await this.use((db) => {
      const find = this.stmt(
        db,
        "SELECT queue, dedup_key FROM soniq_dead_letter_jobs WHERE id = ?",
      );
      const holderOf = this.stmt(db, "SELECT id FROM soniq_jobs WHERE dedup_key = ?");
      const restore = this.stmt(
        db,
        `INSERT INTO soniq_jobs (${JOB_COLUMNS})
         SELECT id, name, queue, args, 'queued', priority, 0, max_attempts, 0, @now,
           created_at, @now, NULL, NULL, NULL, NULL, last_error, NULL, NULL, dedup_key, NULL
         FROM soniq_dead_letter_jobs WHERE id = @id`,
      );
      const remove = this.stmt(db, "DELETE FROM soniq_dead_letter_jobs WHERE id = ?");
      return db
        .transaction(() => {
          const entry = find.get(id) as { queue: string; dedup_key: string | null } | undefined;
          if (!entry) return undefined;
          if (entry.dedup_key !== null) {
            const holder = holderOf.get(entry.dedup_key) as { id: string } | undefined;
            if (holder) {
              throw new SoniqError(
                "DEDUP_CONFLICT",
                `job ${holder.id} already holds dedup key ${JSON.stringify(entry.dedup_key)}`,
                { details: { id, holder: holder.id, dedupKey: entry.dedup_key } },
              );
            }
          }
          restore.run({ id, now: this.nowMs(db) });
          remove.run(id);
          return entry.queue;
        })
        .immediate();
    });
    if (queue === undefined) return false;
    this.wake(queue);
    return true;
  }

  /**
   * Cancels a queued job: `status='cancelled'`, `finished_at = updated_at = now`,
   * `result_expires_at = now + retentionSeconds` (seconds). Contract: `Backend.cancel`.
   * @returns `false` when the job does not exist or is not `queued`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async cancel(id: string, retentionSeconds: number): Promise<boolean> {
    return this.use((db) => {
      const info = this.stmt(
        db,
        `UPDATE soniq_jobs
         SET status = 'cancelled', finished_at = ${NOW_MS}, updated_at = ${NOW_MS},
             result_expires_at = ${NOW_MS} + @retentionMs
         WHERE id = @id AND status = 'queued'`,
      ).run({ id, retentionMs: secondsToMs(retentionSeconds) });
      return info.changes > 0;
    });
  }

  /**
   * A row of `soniq_jobs`, or `null`. Contract: `Backend.getJob`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async getJob(id: string): Promise<JobRow | null> {
    return this.use((db) => {
      const row = this.stmt(db, `SELECT ${JOB_COLUMNS} FROM soniq_jobs WHERE id = ?`).get(id) as
        | JobRecord
        | undefined;
      return row ? toJobRow(row) : null;
    });
  }

  /**
   * A row of `soniq_dead_letter_jobs`, or `null`. Contract: `Backend.getDeadLetter`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async getDeadLetter(id: string): Promise<DeadLetterRow | null> {
    return this.use((db) => {
      const row = this.stmt(db, "SELECT * FROM soniq_dead_letter_jobs WHERE id = ?").get(id) as
        | DeadLetterRecord
        | undefined;
      return row ? toDeadLetterRow(row) : null;
    });
  }

  /**
   * Counts by state from one snapshot; `total` includes dead-letter entries.
   * Contract: `Backend.stats`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async stats(): Promise<QueueStats> {
    return this.use((db) => {
      const row = this.stmt(
        db,
        `SELECT
           count(*) FILTER (WHERE status = 'queued') AS queued,
           count(*) FILTER (WHERE status = 'processing') AS processing,
           count(*) FILTER (WHERE status = 'done') AS done,
           count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
           count(*) AS live,
           (SELECT count(*) FROM soniq_dead_letter_jobs) AS dead_letter
         FROM soniq_jobs`,
      ).get() as Omit<QueueStats, "total"> & { live: number };
      const { live, ...counts } = row;
      return { total: live + counts.dead_letter, ...counts };
    });
  }

  /**
   * Inserts the worker row: `status='running'`, `started_at = last_heartbeat_at = now`,
   * `queues` as JSON text (NULL for every queue). Registering an id again replaces its row.
   * Contract: `Backend.registerWorker`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async registerWorker(worker: WorkerInfo): Promise<void> {
    await this.use((db) => {
      this.stmt(
        db,
        `INSERT INTO soniq_workers (id, hostname, pid, queues, concurrency, status, started_at,
           last_heartbeat_at, stopped_at)
         VALUES (@id, @hostname, @pid, @queues, @concurrency, 'running', ${NOW_MS}, ${NOW_MS}, NULL)
         ON CONFLICT (id) DO UPDATE SET
           hostname = excluded.hostname, pid = excluded.pid, queues = excluded.queues,
           concurrency = excluded.concurrency, status = excluded.status,
           started_at = excluded.started_at, last_heartbeat_at = excluded.last_heartbeat_at,
           stopped_at = NULL`,
      ).run({
        id: worker.id,
        hostname: worker.hostname,
        pid: worker.pid,
        queues: worker.queues === null ? null : JSON.stringify(worker.queues),
        concurrency: worker.concurrency,
      });
    });
  }

  /**
   * Sets `last_heartbeat_at = now` and `status`; an unknown id changes nothing.
   * Contract: `Backend.heartbeat`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async heartbeat(workerId: string, status: WorkerStatus): Promise<void> {
    await this.use((db) => {
      this.stmt(
        db,
        `UPDATE soniq_workers SET last_heartbeat_at = ${NOW_MS}, status = @status WHERE id = @id`,
      ).run({ id: workerId, status });
    });
  }

  /**
   * Sets `status='stopped'`, `stopped_at = now`; an unknown id changes nothing.
   * Contract: `Backend.markWorkerStopped`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async markWorkerStopped(workerId: string): Promise<void> {
    await this.use((db) => {
      this.stmt(
        db,
        `UPDATE soniq_workers SET status = 'stopped', stopped_at = ${NOW_MS} WHERE id = ?`,
      ).run(workerId);
    });
  }

  /**
   * Worker rows, newest `started_at` first. `live` is true when the worker is not stopped and
   * its last heartbeat is at most `heartbeatTimeoutSeconds` (seconds) before the database's
   * now. Contract: `Backend.listWorkers`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async listWorkers(
    heartbeatTimeoutSeconds: number,
  ): Promise<Array<WorkerRow & { live: boolean }>> {
    return this.use((db) => {
      const rows = this.stmt(
        db,
        `SELECT *, (status <> 'stopped' AND ${NOW_MS} - last_heartbeat_at <= @timeoutMs) AS live
         FROM soniq_workers ORDER BY started_at DESC, rowid DESC`,
      ).all({ timeoutMs: secondsToMs(heartbeatTimeoutSeconds) }) as Array<
        WorkerRecord & { live: number }
      >;
      return rows.map((row) => ({ ...toWorkerRow(row), live: row.live === 1 }));
    });
  }

  /**
   * Deletes `done` and `cancelled` rows whose `result_expires_at` is at or before the
   * database's now, freeing their dedup keys. Contract: `Backend.pruneFinished`.
   * @returns How many rows were deleted.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async pruneFinished(): Promise<number> {
    return this.use((db) => {
      const info = this.stmt(
        db,
        `DELETE FROM soniq_jobs
         WHERE status IN ('done', 'cancelled') AND result_expires_at <= ${NOW_MS}`,
      ).run();
      return info.changes;
    });
  }

  /**
   * Crash recovery in one immediate transaction (so it is exactly-once across processes sharing
   * the file): every `processing` row whose owner is not live by the database clock is requeued
   * (`interruptions + 1`, due now, owner cleared, attempts untouched) or, past
   * `maxInterruptions`, moved to the DLQ with reason `crash_loop`. Contract:
   * `Backend.recoverStale`.
   * @throws SoniqError `CLOSED`, `SCHEMA_NOT_READY`.
   */
  async recoverStale(
    heartbeatTimeoutSeconds: number | null,
    maxInterruptions: number,
  ): Promise<RecoveryResult> {
    return this.use((db) => {
      const find = this.stmt(
        db,
        `SELECT j.id, j.name, j.queue, j.worker_id, j.interruptions FROM soniq_jobs AS j
         WHERE j.status = 'processing'
           AND NOT EXISTS (
             SELECT 1 FROM soniq_workers AS w
             WHERE w.id = j.worker_id AND w.status <> 'stopped'
               AND (@timeoutMs IS NULL OR @now - w.last_heartbeat_at <= @timeoutMs))`,
      );
      const requeue = this.stmt(
        db,
        `UPDATE soniq_jobs
         SET status = 'queued', worker_id = NULL, claim_token = NULL,
             interruptions = interruptions + 1, scheduled_at = @now, updated_at = @now
         WHERE id = @id AND status = 'processing' AND worker_id IS @owner`,
      );
      const bury = this.stmt(
        db,
        `INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts,
           max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
           finished_at, worker_id, claim_token, last_error, dedup_key, reason, dead_at)
         SELECT id, name, queue, args, priority, attempts, max_attempts, interruptions + 1,
           scheduled_at, created_at, @now, started_at, finished_at, worker_id, claim_token,
           @error, dedup_key, 'crash_loop', @now
         FROM soniq_jobs WHERE id = @id AND status = 'processing' AND worker_id IS @owner`,
      );
      const remove = this.stmt(db, "DELETE FROM soniq_jobs WHERE id = ?");
      const result: RecoveryResult = { requeued: [], deadLettered: [] };
      db.transaction(() => {
        const now = this.nowMs(db);
        const stale = find.all({
          now,
          timeoutMs: heartbeatTimeoutSeconds === null ? null : secondsToMs(heartbeatTimeoutSeconds),
        }) as Array<{
          id: string;
          name: string;
          queue: string;
          worker_id: string | null;
          interruptions: number;
        }>;
        for (const row of stale) {
          const interruptions = row.interruptions + 1;
          const job = {
            id: row.id,
            name: row.name,
            queue: row.queue,
            previousOwner: row.worker_id,
            interruptions,
          };
          const params = { id: row.id, owner: row.worker_id, now };
          if (interruptions > maxInterruptions) {
            const error = `crash_loop: interrupted ${interruptions} times (its worker stopped heartbeating each time)`;
            if (bury.run({ ...params, error }).changes > 0) {
              remove.run(row.id);
              result.deadLettered.push(job);
            }
          } else if (requeue.run(params).changes > 0) {
            result.requeued.push(job);
          }
        }
      }).immediate();
      for (const queue of new Set(result.requeued.map((j) => j.queue))) this.wake(queue);
      return result;
    });
  }

  /** The `processing` rows `workerId` owns. Contract: `Backend.ownedBy`. */
  async ownedBy(workerId: string): Promise<Array<Owner & { id: string }>> {
    return this.use((db) =>
      (
        this.stmt(
          db,
          "SELECT id, claim_token FROM soniq_jobs WHERE status = 'processing' AND worker_id = ?",
        ).all(workerId) as Array<{ id: string; claim_token: string }>
      ).map((r) => ({ id: r.id, workerId, claimToken: r.claim_token })),
    );
  }

  /** Deletes worker rows not heartbeating for `notSeenForSeconds`. Contract: `Backend.forgetWorkers`. */
  async forgetWorkers(notSeenForSeconds: number): Promise<number> {
    return this.use(
      (db) =>
        this.stmt(db, `DELETE FROM soniq_workers WHERE ${NOW_MS} - last_heartbeat_at > ?`).run(
          secondsToMs(notSeenForSeconds),
        ).changes,
    );
  }

  /**
   * Takes or renews lease `name` for `holder` (one upsert that only replaces a free or expired
   * lease). Contract: `Backend.tryLead`.
   */
  async tryLead(name: string, holder: string, ttlSeconds: number): Promise<boolean> {
    return this.use((db) => {
      const row = this.stmt(
        db,
        `INSERT INTO soniq_leases (name, holder, expires_at) VALUES (@name, @holder, ${NOW_MS} + @ttlMs)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
         WHERE soniq_leases.holder = excluded.holder OR soniq_leases.expires_at < ${NOW_MS}
         RETURNING holder`,
      ).get({ name, holder, ttlMs: secondsToMs(ttlSeconds) });
      return row !== undefined;
    });
  }

  /** Gives lease `name` up if `holder` holds it. Contract: `Backend.resign`. */
  async resign(name: string, holder: string): Promise<void> {
    await this.use((db) => {
      this.stmt(db, "DELETE FROM soniq_leases WHERE name = ? AND holder = ?").run(name, holder);
    });
  }

  /**
   * Subscribes to wake-ups. **In-process only**: `listener(queue)` is called (in a microtask)
   * after this backend object's own enqueue, NACK, replay, and retry or snooze with a delay of
   * 0. SQLite has no cross-process notification, so workers in other processes find new jobs by
   * polling. Contract: `Backend.subscribe`.
   * @returns The unsubscribe function.
   */
  subscribe(listener: (queue: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
