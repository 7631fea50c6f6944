/**
 * The SQLite backend facade: the {@link Backend} contract over one database file, as marshalling
 * (contract shapes ↔ statement parameters and rows) and transactions around the named statements
 * of sql.ts. The connection, its pragmas and its lock waits live in connection.ts.
 */
import type {
  Backend,
  Capabilities,
  ClaimedJob,
  DeadLetterRow,
  DueSchedules,
  EnqueueResult,
  JobCancelParams,
  JobClaimParams,
  JobCompleteManyParams,
  JobCompleteParams,
  JobDeadLetterParams,
  JobEnqueueParams,
  JobIdParams,
  JobMarkStartedParams,
  JobNackManyParams,
  JobNackParams,
  JobOwnedByParams,
  JobPruneFinishedParams,
  JobRecoverStaleParams,
  JobRetryParams,
  JobRow,
  JobSnoozeParams,
  LeaseResignParams,
  LeaseTryTakeParams,
  Notifier,
  OwnedJob,
  QueueMetrics,
  QueueStats,
  RecoveryResult,
  ScheduleAdvanceParams,
  ScheduleAdvanceResult,
  ScheduleDueParams,
  ScheduleIdParams,
  ScheduleRow,
  ScheduleRunRow,
  ScheduleRunsParams,
  ScheduleSaveParams,
  ScheduleStore,
  WorkerForgetParams,
  WorkerHeartbeatParams,
  WorkerListParams,
  WorkerListRow,
  WorkerMarkStoppedParams,
  WorkerRegisterParams,
} from "../contract/index.js";
import { DEFAULT_CANCELLED_RETENTION_SECONDS } from "../contract/index.js";
import { assertNoConnection } from "../shared/capability-guard.js";
import { loadMigrations } from "../shared/migrations.js";
import { WakeBus } from "../shared/wake-bus.js";
import { SqliteAdminStore } from "./admin-store.js";
import { secondsToMs } from "./clock.js";
import { SqliteConnection } from "./connection.js";
import { countJobs, countJobsByQueue } from "./job-counts.js";
import { SqliteLeaseStore } from "./lease-store.js";
import { migrate } from "./migrate.js";
import { type SqliteBackendOptions, validateOptions } from "./options.js";
import { type DeadLetterRecord, type JobRecord, toDeadLetterRow, toJobRow } from "./rows.js";
import { SqliteScheduleStore } from "./schedule-store.js";
import { SqliteSubmissionStore } from "./submission-store.js";
import {
  claimDue,
  completeAll,
  fence,
  insertJobs,
  moveToDeadLetter,
  nackAll,
  recoverStaleClaims,
  replayEntry,
} from "./transactions.js";
import { SqliteWorkerStore } from "./worker-store.js";

export { DEFAULT_SQLITE_BUSY_TIMEOUT_MS, type SqliteBackendOptions } from "./options.js";

/**
 * The SQLite backend: one database file shared by every process that opens it, through
 * better-sqlite3 (synchronous; each method still returns a promise, as the {@link Backend}
 * contract asks). Each method's semantics are in `backends/contract/`; the comments here say
 * only what is specific to SQLite.
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
 * Wake-ups are **in-process only** (`capabilities.crossProcessWake` is false: SQLite has no
 * cross-process notification; other processes poll): this object's own enqueue, NACK, replay,
 * recovery, and retry or snooze with a delay of 0 call its subscribers in a microtask.
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
  /** No transactional enqueue; wake-ups stay in this process; durable. */
  readonly capabilities: Capabilities = {
    transactionalEnqueue: false,
    crossProcessWake: false,
    durable: true,
  };

  private readonly conn: SqliteConnection;
  /** Remote jobs' submission records (contract/submission-store.ts). */
  readonly submissions: SqliteSubmissionStore;
  private readonly bus = new WakeBus();
  /** The operations store (contract/admin-store.ts) on this connection. */
  readonly admin: SqliteAdminStore;
  private readonly schedules: SqliteScheduleStore;
  private readonly workers: SqliteWorkerStore;
  private readonly leases: SqliteLeaseStore;

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
    this.admin = new SqliteAdminStore(this.conn, (queue) => this.wake(queue));
    this.submissions = new SqliteSubmissionStore(this.conn, (queue) => this.wake(queue));
    this.workers = new SqliteWorkerStore(this.conn);
    this.leases = new SqliteLeaseStore(this.conn);
    this.schedules = new SqliteScheduleStore({
      use: (fn) => this.conn.use(fn),
      insertJobs: (session, jobs) => insertJobs(session, jobs),
      wake: (queue) => this.wake(queue),
    });
  }

  /** See {@link ScheduleStore.scheduleSave} (schedule-store.ts, as every schedule method). */
  scheduleSave(params: ScheduleSaveParams): Promise<boolean> {
    return this.schedules.scheduleSave(params);
  }
  /** See {@link ScheduleStore.scheduleGet}. */
  scheduleGet(params: ScheduleIdParams): Promise<ScheduleRow | null> {
    return this.schedules.scheduleGet(params);
  }
  /** See {@link ScheduleStore.scheduleList}. */
  scheduleList(): Promise<ScheduleRow[]> {
    return this.schedules.scheduleList();
  }
  /** See {@link ScheduleStore.scheduleDue}. */
  scheduleDue(params: ScheduleDueParams): Promise<DueSchedules> {
    return this.schedules.scheduleDue(params);
  }
  /** One immediate transaction. See {@link ScheduleStore.scheduleAdvance}. */
  scheduleAdvance(params: ScheduleAdvanceParams): Promise<ScheduleAdvanceResult> {
    return this.schedules.scheduleAdvance(params);
  }
  /** See {@link ScheduleStore.scheduleRemove}. */
  scheduleRemove(params: ScheduleIdParams): Promise<boolean> {
    return this.schedules.scheduleRemove(params);
  }
  /** See {@link ScheduleStore.scheduleRuns}. */
  scheduleRuns(params: ScheduleRunsParams): Promise<ScheduleRunRow[]> {
    return this.schedules.scheduleRuns(params);
  }

  /** This object's in-process wake-ups (see the class comment). */
  get notifier(): Notifier {
    return this.bus;
  }

  private wake(queue: string): void {
    this.bus.wake(queue);
  }

  /**
   * Creates the file when missing and applies every migration not yet recorded, in one
   * `BEGIN IMMEDIATE` transaction (migrate.ts). See {@link Backend.setup}.
   */
  async setup(): Promise<void> {
    await this.conn.use(({ db }) => migrate(db, loadMigrations("sqlite")), true);
  }

  /** Closes the connection. See {@link Backend.close}. */
  async close(): Promise<void> {
    this.bus.close();
    this.conn.close();
  }

  /** The database's current time (millisecond precision). See {@link Backend.now}. */
  async now(): Promise<Date> {
    return this.conn.use((s) => new Date(s.nowMs()));
  }

  /** One immediate transaction (transactions.ts `insertJobs`). See {@link JobStore.jobEnqueue}. */
  async jobEnqueue({ jobs, connection }: JobEnqueueParams): Promise<EnqueueResult[]> {
    assertNoConnection("sqlite", connection);
    const { results, queues } = await this.conn.use((s) => insertJobs(s, jobs));
    for (const queue of queues) this.wake(queue);
    return results;
  }

  /** One immediate transaction (transactions.ts `claimDue`). See {@link JobStore.jobClaim}. */
  async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    return this.conn.use((s) => claimDue(s, params), false, params.signal);
  }

  /** See {@link JobStore.jobComplete}. */
  async jobComplete({
    id,
    owner,
    result,
    resultRetentionSeconds,
  }: JobCompleteParams): Promise<boolean> {
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

  /** One immediate transaction. See {@link JobStore.jobCompleteMany}. */
  async jobCompleteMany({
    items,
    resultRetentionSeconds,
  }: JobCompleteManyParams): Promise<boolean[]> {
    return this.conn.use((s) => completeAll(s, items, resultRetentionSeconds));
  }

  /** See {@link JobStore.jobRetry}. */
  async jobRetry({ id, owner, error, delaySeconds }: JobRetryParams): Promise<boolean> {
    const params = { id, ...fence(owner), error, delayMs: secondsToMs(delaySeconds) };
    return this.requeued("retry", params, delaySeconds <= 0);
  }

  /** See {@link JobStore.jobSnooze}. */
  async jobSnooze({ id, owner, delaySeconds }: JobSnoozeParams): Promise<boolean> {
    const params = { id, ...fence(owner), delayMs: secondsToMs(delaySeconds) };
    return this.requeued("snooze", params, delaySeconds <= 0);
  }

  /** Start mark, one fenced statement. See {@link JobStore.jobMarkStarted}. */
  async jobMarkStarted({ id, owner }: JobMarkStartedParams): Promise<boolean> {
    return this.conn.use(
      (s) => s.statement("markStarted").run({ id, ...fence(owner) }).changes > 0,
    );
  }

  /** See {@link JobStore.jobNack}. */
  async jobNack({ id, owner }: JobNackParams): Promise<boolean> {
    return this.requeued("nack", { id, ...fence(owner) }, true);
  }

  /** One statement of fenced NACKs. See {@link JobStore.jobNackMany}. */
  async jobNackMany({ items }: JobNackManyParams): Promise<boolean[]> {
    const { changed, queues } = await this.conn.use((s) => nackAll(s, items));
    for (const queue of queues) this.wake(queue);
    return changed;
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

  /** The copy and the delete in one immediate transaction. See {@link JobStore.jobDeadLetter}. */
  async jobDeadLetter({
    id,
    owner,
    error,
    reason,
    countAttempt,
  }: JobDeadLetterParams): Promise<boolean> {
    return this.conn.use((s) => moveToDeadLetter(s, id, owner, { error, reason, countAttempt }));
  }

  /** See {@link JobStore.jobCancel}. */
  async jobCancel({ id, retentionSeconds }: JobCancelParams): Promise<boolean> {
    const retentionMs = secondsToMs(retentionSeconds);
    return this.conn.use((s) => s.statement("cancel").run({ id, retentionMs }).changes > 0);
  }

  /** See {@link JobStore.jobGet}. */
  async jobGet({ id }: JobIdParams): Promise<JobRow | null> {
    return this.conn.use((s) => {
      const row = s.statement("getJob").get({ id }) as JobRecord | undefined;
      return row ? toJobRow(row) : null;
    });
  }

  /** One snapshot. See {@link JobStore.jobStats}. */
  jobStats(): Promise<QueueStats> {
    return this.conn.use(countJobs);
  }

  /** Per-queue counts and lateness from one snapshot. See {@link JobStore.jobQueueMetrics}. */
  jobQueueMetrics(): Promise<QueueMetrics[]> {
    return this.conn.use(countJobsByQueue);
  }

  /** See {@link JobStore.jobPruneFinished}. */
  async jobPruneFinished({ limit }: JobPruneFinishedParams): Promise<number> {
    return this.conn.use((s) => s.statement("pruneFinished").run({ limit: limit ?? -1 }).changes);
  }

  /**
   * One immediate transaction (transactions.ts `recoverStaleClaims`), so it is exactly-once
   * across processes sharing the file. See {@link JobStore.jobRecoverStale}.
   */
  async jobRecoverStale({
    staleAfterSeconds,
    crashLoop,
    cancelledRetentionSeconds = DEFAULT_CANCELLED_RETENTION_SECONDS,
  }: JobRecoverStaleParams): Promise<RecoveryResult> {
    const result = await this.conn.use((s) =>
      recoverStaleClaims(s, staleAfterSeconds ?? null, crashLoop, cancelledRetentionSeconds),
    );
    for (const queue of new Set(result.requeued.map((j) => j.queue))) this.wake(queue);
    return result;
  }

  /** See {@link JobStore.jobOwnedBy}. */
  async jobOwnedBy({ workerId }: JobOwnedByParams): Promise<OwnedJob[]> {
    return this.conn.use((s) =>
      (s.statement("ownedBy").all({ workerId }) as Array<{ id: string; claim_token: string }>).map(
        (r) => ({ id: r.id, workerId, claimToken: r.claim_token }),
      ),
    );
  }

  /** See {@link JobStore.deadLetterGet}. */
  async deadLetterGet({ id }: JobIdParams): Promise<DeadLetterRow | null> {
    return this.conn.use((s) => {
      const row = s.statement("getDeadLetter").get({ id }) as DeadLetterRecord | undefined;
      return row ? toDeadLetterRow(row) : null;
    });
  }

  /**
   * One immediate transaction (transactions.ts `replayEntry`). See
   * {@link JobStore.deadLetterReplay}.
   */
  async deadLetterReplay({ id }: JobIdParams): Promise<boolean> {
    const queue = await this.conn.use((s) => replayEntry(s, id));
    if (queue === undefined) return false;
    this.wake(queue);
    return true;
  }

  /** See {@link WorkerStore.workerRegister} (worker-store.ts, as every worker method). */
  workerRegister(params: WorkerRegisterParams): Promise<void> {
    return this.workers.workerRegister(params);
  }

  workerHeartbeat(params: WorkerHeartbeatParams): Promise<void> {
    return this.workers.workerHeartbeat(params);
  }

  workerMarkStopped(params: WorkerMarkStoppedParams): Promise<void> {
    return this.workers.workerMarkStopped(params);
  }

  workerList(params: WorkerListParams): Promise<WorkerListRow[]> {
    return this.workers.workerList(params);
  }

  workerForget(params: WorkerForgetParams): Promise<number> {
    return this.workers.workerForget(params);
  }

  /** See {@link LeaseStore.leaseTryTake} (lease-store.ts, as `leaseResign`). */
  leaseTryTake(params: LeaseTryTakeParams): Promise<boolean> {
    return this.leases.leaseTryTake(params);
  }

  leaseResign(params: LeaseResignParams): Promise<void> {
    return this.leases.leaseResign(params);
  }
}
