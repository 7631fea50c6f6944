/**
 * The SQLite backend facade: the {@link Backend} contract over one database file, as marshalling
 * (contract shapes ↔ statement parameters and rows) and transactions around the named statements
 * of sql.ts. The connection, its pragmas and its lock waits live in connection.ts.
 */
import { SoniqError } from "../../errors.js";
import type {
  Backend,
  ClaimedJob,
  ClaimRequest,
  CompletionItem,
  CrashLoopRule,
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
import { loadMigrations } from "../shared/migrations.js";
import { secondsToMs } from "./clock.js";
import { SqliteConnection } from "./connection.js";
import { migrate } from "./migrate.js";
import { type SqliteBackendOptions, validateOptions } from "./options.js";
import {
  type DeadLetterRecord,
  type JobRecord,
  toDeadLetterRow,
  toJobRow,
  toWorkerRow,
  type WorkerRecord,
} from "./rows.js";
import {
  claimDue,
  completeAll,
  fence,
  insertJobs,
  moveToDeadLetter,
  recoverStaleClaims,
  replayEntry,
} from "./transactions.js";

export { DEFAULT_SQLITE_BUSY_TIMEOUT_MS, type SqliteBackendOptions } from "./options.js";

/**
 * The SQLite backend: one database file shared by every process that opens it, through
 * better-sqlite3 (synchronous; each method still returns a promise, as the {@link Backend}
 * contract asks; see backend.ts for each method's semantics).
 *
 * Storage (migrations under `migrations/`): tables `soniq_jobs`, `soniq_dead_letter_jobs`,
 * `soniq_workers`, `soniq_leases`, `soniq_migrations`. Times are INTEGER **milliseconds** since
 * the epoch taken from SQLite's clock (DESIGN.md §3.5) and read back as `Date`; durations passed
 * in are **seconds**. Arguments and results are stored as the given JSON text, byte for byte.
 *
 * Connection settings: `journal_mode=WAL` (readers never block the writer),
 * `synchronous=NORMAL`, a 20 ms `busy_timeout` per statement retried up to
 * {@link SqliteBackendOptions.busyTimeoutMs}. Every
 * write that reads before it writes runs in a `BEGIN IMMEDIATE` transaction, so several worker
 * processes on one file claim each job exactly once; a lock not obtained within the busy
 * timeout surfaces as the driver's `SQLITE_BUSY` error (never swallowed).
 *
 * Wake-ups are **in-process only** (SQLite has no cross-process notification; other processes
 * poll): this object's own enqueue, NACK, replay, recovery, and retry or snooze with a delay of
 * 0 call its subscribers in a microtask.
 *
 * Errors common to every method: `SoniqError("CLOSED")` after {@link SqliteBackend.close};
 * `SoniqError("SCHEMA_NOT_READY")` when the file or tables are missing (run `soniq setup`, i.e.
 * {@link SqliteBackend.setup}); otherwise the driver's `SqliteError`.
 */
export class SqliteBackend implements Backend {
  /** Always `"sqlite"`. */
  readonly kind = "sqlite" as const;
  /** The database path exactly as given in {@link SqliteBackendOptions.path}. */
  readonly path: string;
  /** The busy timeout in milliseconds this connection uses. */
  readonly busyTimeoutMs: number;

  private readonly conn: SqliteConnection;
  private readonly listeners = new Set<(queue: string) => void>();

  /**
   * Validates the options (options.ts); the file is opened on first use. Does not create the
   * schema: call {@link SqliteBackend.setup}.
   * @throws SoniqError `INVALID_OPTION` (see `validateOptions`). Opening errors (e.g. `EACCES`,
   * `SQLITE_NOTADB`) surface from the first call.
   */
  constructor(options: SqliteBackendOptions) {
    const { path, busyTimeoutMs } = validateOptions(options);
    this.path = path;
    this.busyTimeoutMs = busyTimeoutMs;
    this.conn = new SqliteConnection(path, busyTimeoutMs);
  }

  private wake(queue: string): void {
    for (const listener of this.listeners) queueMicrotask(() => listener(queue));
  }

  /**
   * Creates the file when missing and applies every migration not yet recorded, in one
   * `BEGIN IMMEDIATE` transaction (migrate.ts). Contract: `Backend.setup`.
   */
  async setup(): Promise<void> {
    await this.conn.use(({ db }) => migrate(db, loadMigrations("sqlite")), true);
  }

  /** Closes the connection and drops every subscriber. Idempotent. Contract: `Backend.close`. */
  async close(): Promise<void> {
    this.listeners.clear();
    this.conn.close();
  }

  /** The database's current time (millisecond precision). Contract: `Backend.now`. */
  async now(): Promise<Date> {
    return this.conn.use((s) => new Date(s.nowMs()));
  }

  /**
   * One immediate transaction (transactions.ts `insertJobs`); wakes each queue that received a
   * job. Contract: `Backend.enqueue`.
   * @throws SoniqError `UNSUPPORTED` when `options.connection` is given (PostgreSQL only).
   */
  async enqueue(jobs: readonly NewJob[], options?: EnqueueWriteOptions): Promise<EnqueueResult[]> {
    const { results, queues } = await this.conn.use((s) => {
      if (options?.connection) {
        throw new SoniqError(
          "UNSUPPORTED",
          "`connection` (transactional enqueue) needs PostgreSQL",
        );
      }
      return insertJobs(s, jobs);
    });
    for (const queue of queues) this.wake(queue);
    return results;
  }

  /** One immediate transaction (transactions.ts `claimDue`). Contract: `Backend.claim`. */
  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    return this.conn.use((s) => claimDue(s, request), false, request.signal);
  }

  /** Success, fenced by `owner`. Contract: `Backend.complete`. */
  async complete(
    id: string,
    owner: Owner,
    result: string | null,
    resultRetentionSeconds: number,
  ): Promise<boolean> {
    return this.conn.use(
      (s) =>
        s.statement("complete").run({
          id,
          ...fence(owner),
          result,
          retentionMs: secondsToMs(resultRetentionSeconds),
        }).changes > 0,
    );
  }

  /** One immediate transaction, each item fenced. Contract: `Backend.completeMany`. */
  async completeMany(
    items: readonly CompletionItem[],
    resultRetentionSeconds: number,
  ): Promise<boolean[]> {
    return this.conn.use((s) => completeAll(s, items, resultRetentionSeconds));
  }

  /** Failure with attempts left, fenced; wakes when due now. Contract: `Backend.retry`. */
  async retry(id: string, owner: Owner, error: string, delaySeconds: number): Promise<boolean> {
    const params = { id, ...fence(owner), error, delayMs: secondsToMs(delaySeconds) };
    return this.requeued("retry", params, delaySeconds <= 0);
  }

  /** Start mark, one fenced statement. Contract: `Backend.markStarted`. */
  async markStarted(id: string, owner: Owner): Promise<boolean> {
    return this.conn.use(
      (s) => s.statement("markStarted").run({ id, ...fence(owner) }).changes > 0,
    );
  }

  /** Snooze, fenced; wakes when due now. Contract: `Backend.snooze`. */
  async snooze(id: string, owner: Owner, delaySeconds: number): Promise<boolean> {
    const params = { id, ...fence(owner), delayMs: secondsToMs(delaySeconds) };
    return this.requeued("snooze", params, delaySeconds <= 0);
  }

  /** NACK, fenced (DESIGN.md §2); wakes. Contract: `Backend.nack`. */
  async nack(id: string, owner: Owner): Promise<boolean> {
    return this.requeued("nack", { id, ...fence(owner) }, true);
  }

  /** Runs a fenced requeue (`… RETURNING queue`); wakes its queue when `wake`. */
  private async requeued(
    statement: "retry" | "snooze" | "nack",
    params: Record<string, unknown>,
    wake: boolean,
  ): Promise<boolean> {
    const row = await this.conn.use(
      (s) => s.statement(statement).get(params) as { queue: string } | undefined,
    );
    if (row === undefined) return false;
    if (wake) this.wake(row.queue);
    return true;
  }

  /** The copy and the delete in one immediate transaction, fenced. Contract: `Backend.deadLetter`. */
  async deadLetter(
    id: string,
    owner: Owner,
    error: string,
    reason: string,
    countAttempt: boolean,
  ): Promise<boolean> {
    return this.conn.use((s) => moveToDeadLetter(s, id, owner, { error, reason, countAttempt }));
  }

  /**
   * One immediate transaction (transactions.ts `replayEntry`); wakes. Contract: `Backend.replay`.
   * @throws SoniqError `DEDUP_CONFLICT` when a row of `soniq_jobs` holds the entry's dedup key.
   */
  async replay(id: string): Promise<boolean> {
    const queue = await this.conn.use((s) => replayEntry(s, id));
    if (queue === undefined) return false;
    this.wake(queue);
    return true;
  }

  /** Cancels a queued job. Contract: `Backend.cancel`. */
  async cancel(id: string, retentionSeconds: number): Promise<boolean> {
    const retentionMs = secondsToMs(retentionSeconds);
    return this.conn.use((s) => s.statement("cancel").run({ id, retentionMs }).changes > 0);
  }

  /** A row of `soniq_jobs`, or `null`. Contract: `Backend.getJob`. */
  async getJob(id: string): Promise<JobRow | null> {
    return this.conn.use((s) => {
      const row = s.statement("getJob").get({ id }) as JobRecord | undefined;
      return row ? toJobRow(row) : null;
    });
  }

  /** A row of `soniq_dead_letter_jobs`, or `null`. Contract: `Backend.getDeadLetter`. */
  async getDeadLetter(id: string): Promise<DeadLetterRow | null> {
    return this.conn.use((s) => {
      const row = s.statement("getDeadLetter").get({ id }) as DeadLetterRecord | undefined;
      return row ? toDeadLetterRow(row) : null;
    });
  }

  /** Counts by state from one snapshot; `total` includes the DLQ. Contract: `Backend.stats`. */
  async stats(): Promise<QueueStats> {
    return this.conn.use((s) => {
      const row = s.statement("stats").get() as Omit<QueueStats, "total"> & { live: number };
      const { live, ...counts } = row;
      return { total: live + counts.dead_letter, ...counts };
    });
  }

  /** Inserts (or replaces) the worker row. Contract: `Backend.registerWorker`. */
  async registerWorker(worker: WorkerInfo): Promise<void> {
    await this.conn.use((s) => {
      s.statement("registerWorker").run({
        id: worker.id,
        hostname: worker.hostname,
        pid: worker.pid,
        queues: worker.queues === null ? null : JSON.stringify(worker.queues),
        concurrency: worker.concurrency,
      });
    });
  }

  /** Records a heartbeat; an unknown id changes nothing. Contract: `Backend.heartbeat`. */
  async heartbeat(workerId: string, status: WorkerStatus): Promise<void> {
    await this.conn.use((s) => {
      s.statement("heartbeat").run({ id: workerId, status });
    });
  }

  /** Marks the worker stopped; an unknown id changes nothing. Contract: `Backend.markWorkerStopped`. */
  async markWorkerStopped(workerId: string): Promise<void> {
    await this.conn.use((s) => {
      s.statement("markWorkerStopped").run({ id: workerId });
    });
  }

  /** Worker rows, newest first, with liveness. Contract: `Backend.listWorkers`. */
  async listWorkers(
    heartbeatTimeoutSeconds: number,
  ): Promise<Array<WorkerRow & { live: boolean }>> {
    return this.conn.use((s) => {
      const rows = s
        .statement("listWorkers")
        .all({ timeoutMs: secondsToMs(heartbeatTimeoutSeconds) }) as Array<
        WorkerRecord & { live: number }
      >;
      return rows.map(({ live, ...row }) => ({ ...toWorkerRow(row), live: live === 1 }));
    });
  }

  /** Deletes finished rows past their retention, at most `limit`. Contract: `Backend.pruneFinished`. */
  async pruneFinished(limit?: number): Promise<number> {
    return this.conn.use((s) => s.statement("pruneFinished").run({ limit: limit ?? -1 }).changes);
  }

  /**
   * One immediate transaction (transactions.ts `recoverStaleClaims`), so it is exactly-once
   * across processes sharing the file; wakes the requeued queues. Contract: `Backend.recoverStale`.
   */
  async recoverStale(
    heartbeatTimeoutSeconds: number | null,
    crashLoop: CrashLoopRule,
  ): Promise<RecoveryResult> {
    const result = await this.conn.use((s) =>
      recoverStaleClaims(s, heartbeatTimeoutSeconds, crashLoop),
    );
    for (const queue of new Set(result.requeued.map((j) => j.queue))) this.wake(queue);
    return result;
  }

  /** The `processing` rows `workerId` owns. Contract: `Backend.ownedBy`. */
  async ownedBy(workerId: string): Promise<Array<Owner & { id: string }>> {
    return this.conn.use((s) =>
      (s.statement("ownedBy").all({ workerId }) as Array<{ id: string; claim_token: string }>).map(
        (r) => ({ id: r.id, workerId, claimToken: r.claim_token }),
      ),
    );
  }

  /** Deletes worker rows not heartbeating for `notSeenForSeconds`. Contract: `Backend.forgetWorkers`. */
  async forgetWorkers(notSeenForSeconds: number, limit?: number): Promise<number> {
    const notSeenForMs = secondsToMs(notSeenForSeconds);
    return this.conn.use(
      (s) => s.statement("forgetWorkers").run({ notSeenForMs, limit: limit ?? -1 }).changes,
    );
  }

  /** Takes or renews lease `name` for `holder`. Contract: `Backend.tryLead`. */
  async tryLead(name: string, holder: string, ttlSeconds: number): Promise<boolean> {
    const ttlMs = secondsToMs(ttlSeconds);
    return this.conn.use((s) => s.statement("tryLead").get({ name, holder, ttlMs }) !== undefined);
  }

  /** Gives lease `name` up if `holder` holds it. Contract: `Backend.resign`. */
  async resign(name: string, holder: string): Promise<void> {
    await this.conn.use((s) => {
      s.statement("resign").run({ name, holder });
    });
  }

  /**
   * Subscribes to this object's in-process wake-ups (see the class comment).
   * Contract: `Backend.subscribe`.
   * @returns The unsubscribe function.
   */
  subscribe(listener: (queue: string) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}
