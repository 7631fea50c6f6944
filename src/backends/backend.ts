/**
 * The backend contract: the one interface PostgreSQL, SQLite and memory implement, and that the
 * shared contract suite (`test/contract/`) runs against all three.
 *
 * Conventions every implementation keeps:
 * - Times are decided by the **database clock** (DESIGN.md §3.5): due times, heartbeats,
 *   staleness. Callers pass durations in **seconds** and absolute times as `Date`.
 * - Arguments and results travel as **JSON text** (already validated by the caller) and come
 *   back as the same text, byte for byte.
 * - Every write that finishes or releases a claimed job is **fenced** (DESIGN.md §3.1): it only
 *   changes a row whose `id`, `status = 'processing'`, `worker_id` and `claim_token` all match
 *   the {@link Owner}. A write by anyone else changes nothing and returns `false`.
 * - `attempts` counts outcomes, not claims (DESIGN.md §3.2): claim and NACK leave it alone;
 *   complete, retry and a dead-letter move after a run add one.
 */
/** Job row states (DESIGN.md §6). Dead-lettered jobs live in `soniq_dead_letter_jobs`. */
export type JobStatus = "queued" | "processing" | "done" | "cancelled";

/** A job to insert. Built by the instance after validation. */
export interface NewJob {
  /** Job id (a UUID chosen by the caller). */
  id: string;
  /** Registered job name, dotted lower-case. */
  name: string;
  /** Queue name. */
  queue: string;
  /** Arguments as JSON text. */
  args: string;
  /** Lower runs first. */
  priority: number;
  /** Runs allowed before the job moves to the dead-letter queue (>= 1). */
  maxAttempts: number;
  /** Absolute due time; when `null` the job is due `delaySeconds` after the database's now. */
  runAt: Date | null;
  /** Delay in seconds from the database's now; used only when `runAt` is null. */
  delaySeconds: number;
  /**
   * Deduplication key. Unique among the rows of `soniq_jobs` (any status); a job in the
   * dead-letter queue does not hold its key. A duplicate returns the existing job's id.
   */
  dedupKey: string | null;
}

/** What {@link Backend.enqueue} returns for each {@link NewJob}, in input order. */
export interface EnqueueResult {
  /** The new job's id, or the id of the existing job holding the same dedup key. */
  id: string;
  /** `false` when a job with the same dedup key already existed and nothing was inserted. */
  inserted: boolean;
}

/** A row of `soniq_jobs`. */
export interface JobRow {
  id: string;
  name: string;
  queue: string;
  /** Arguments as JSON text. */
  args: string;
  status: JobStatus;
  priority: number;
  /** Outcomes recorded so far (success, failure, job_timeout). */
  attempts: number;
  maxAttempts: number;
  /** Times a crash recovery requeued this job (not an attempt). */
  interruptions: number;
  scheduledAt: Date;
  createdAt: Date;
  updatedAt: Date;
  /** When the current or last claim started running it. */
  startedAt: Date | null;
  /** When it reached `done` or `cancelled`. */
  finishedAt: Date | null;
  /** Owner: the worker incarnation holding the claim (NULL when queued). */
  workerId: string | null;
  /** Owner: a fresh token per claim (NULL when queued). */
  claimToken: string | null;
  /** The last failure's message (kept across retries, NACKs and replays). */
  lastError: string | null;
  /** The handler's return value as JSON text, when `done`. */
  result: string | null;
  /** When a `done` row (and its result) may be pruned. */
  resultExpiresAt: Date | null;
  dedupKey: string | null;
}

/** A row of `soniq_dead_letter_jobs`: the job as it was, plus why and when it was moved. */
export interface DeadLetterRow extends Omit<JobRow, "status" | "result" | "resultExpiresAt"> {
  /** Why it was moved, e.g. `max_attempts_exceeded`, `unknown_job`, `invalid_args`. */
  reason: string;
  deadAt: Date;
}

/** The claim's owner; every finishing write must match it (DESIGN.md §3.1). */
export interface Owner {
  workerId: string;
  claimToken: string;
}

/**
 * A claimed job: what a worker needs to run it and to fence its outcome, as the row is after the
 * claim (its `status` is then `processing`). A claim returns only these columns — fewer to send
 * and decode per job on the hot path; {@link Backend.getJob} reads the whole row.
 */
export interface ClaimedJob {
  id: string;
  name: string;
  queue: string;
  /** The arguments as stored JSON text. */
  args: string;
  priority: number;
  /** Outcomes recorded before this claim (the running attempt is `attempts + 1`). */
  attempts: number;
  maxAttempts: number;
  interruptions: number;
  scheduledAt: Date;
  createdAt: Date;
  /** Owner: the claiming worker incarnation. */
  workerId: string;
  /** Owner: this claim's fresh token. */
  claimToken: string;
}

/** Arguments of {@link Backend.claim}. */
export interface ClaimRequest {
  /** The claiming worker incarnation. */
  workerId: string;
  /** Only these queues; `null` means every queue. */
  queues: readonly string[] | null;
  /** At most this many jobs (>= 1): the worker's free slots. */
  limit: number;
}

/** One completion of {@link Backend.completeMany}. */
export interface CompletionItem {
  id: string;
  owner: Owner;
  /** The result as JSON text, or null. */
  result: string | null;
}

/** A worker incarnation (one per process start, DESIGN.md §3.4). */
export interface WorkerInfo {
  id: string;
  hostname: string;
  pid: number;
  /** Queue filter, `null` for all. */
  queues: readonly string[] | null;
  concurrency: number;
}

/** Worker lifecycle as stored in `soniq_workers.status`. */
export type WorkerStatus = "running" | "draining" | "stopped";

/** A row of `soniq_workers`. */
export interface WorkerRow extends WorkerInfo {
  status: WorkerStatus;
  startedAt: Date;
  lastHeartbeatAt: Date;
  stoppedAt: Date | null;
}

/** Counts by state, as `soniq status` prints them. */
export interface QueueStats {
  total: number;
  queued: number;
  processing: number;
  done: number;
  dead_letter: number;
  cancelled: number;
}

/** A pg-compatible client (`pg.Client`, `pg.PoolClient`, or anything with the same `query`). */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** Options of {@link Backend.enqueue}. */
export interface EnqueueWriteOptions {
  /** PostgreSQL only: run the insert on this client, inside the caller's transaction. */
  connection?: PgQueryable;
}

/** One job touched by {@link Backend.recoverStale}. */
export interface RecoveredJob {
  id: string;
  name: string;
  queue: string;
  /** The worker incarnation that held it (no longer live). */
  previousOwner: string | null;
  /** Its interruption count after this recovery. */
  interruptions: number;
}

/**
 * The crash-loop rule a recovery pass applies, handed in by the caller so the decision stays
 * atomic inside the backend while its words live in one place (`src/maintenance/policy.ts`).
 */
export interface CrashLoopRule {
  /**
   * A row whose interruption count after this recovery would exceed this number is moved to the
   * dead-letter queue instead of being requeued (`interruptions + 1 > maxInterruptions`).
   */
  maxInterruptions: number;
  /** The dead-letter `reason` stored for such a row. */
  reason: string;
  /**
   * Its `last_error` text; every {@link INTERRUPTIONS_PLACEHOLDER} in it is replaced by the
   * row's interruption count after this recovery.
   */
  message: string;
}

/** The placeholder in {@link CrashLoopRule.message} that stands for the interruption count. */
export const INTERRUPTIONS_PLACEHOLDER = "{interruptions}";

/** `message` (a {@link CrashLoopRule.message}) with the interruption count filled in. */
export function crashLoopText(message: string, interruptions: number): string {
  return message.replaceAll(INTERRUPTIONS_PLACEHOLDER, String(interruptions));
}

/** What one recovery pass did. */
export interface RecoveryResult {
  /** Requeued (`queued`, due now, owner cleared, `interruptions + 1`, attempts unchanged). */
  requeued: RecoveredJob[];
  /** Moved to the dead-letter queue under the {@link CrashLoopRule} (too many interruptions). */
  deadLettered: RecoveredJob[];
  /**
   * Finalised as `cancelled`: an operator had asked to cancel the claim its dead owner held
   * (contract: admin-store.ts `jobCancelRequest`); never requeued.
   */
  cancelled: RecoveredJob[];
}

/** Options of {@link Backend.recoverStale} beyond the crash-loop rule. */
export interface RecoveryOptions {
  /** How long a row finalised `cancelled` is kept, in seconds. Default 7 days. */
  cancelledRetentionSeconds?: number;
}

/** The default of {@link RecoveryOptions.cancelledRetentionSeconds}: 7 days, in seconds. */
export const DEFAULT_CANCELLED_RETENTION_SECONDS = 7 * 86_400;

/** The backend kinds. */
export type BackendKind = "memory" | "sqlite" | "postgres";

/** The storage contract. See the module comment for the rules every method keeps. */
export interface Backend {
  readonly kind: BackendKind;

  // `readonly admin: AdminStore` (the operations store) is added to this interface by
  // contract/admin-store.ts, which builds on the row types here (so this file does not import it).

  /** Creates or migrates the schema. Idempotent; safe when two processes run it at once. */
  setup(): Promise<void>;
  /** Releases connections. Later calls reject at once with `SoniqError("CLOSED")`. */
  close(): Promise<void>;
  /** The database's current time. */
  now(): Promise<Date>;

  /**
   * Inserts jobs (one round trip on PostgreSQL). Dedup: a job whose `dedupKey` is already held
   * returns the holder's id with `inserted: false`. Results are in input order.
   */
  enqueue(jobs: readonly NewJob[], options?: EnqueueWriteOptions): Promise<EnqueueResult[]>;

  /**
   * Claims up to `limit` due `queued` jobs, exactly once across all processes: order is
   * priority ascending, then `scheduled_at`, then `created_at`. Sets `status='processing'`,
   * `worker_id`, a fresh `claim_token` per job, `started_at` and `updated_at` to now.
   * Does not change `attempts`.
   * @returns The claimed jobs ({@link ClaimedJob}: the fields a worker needs), in claim order.
   */
  claim(request: ClaimRequest): Promise<ClaimedJob[]>;

  /**
   * Success: `status='done'`, `attempts+1`, `result`, `finished_at=now`,
   * `result_expires_at = now + resultRetentionSeconds`. Fenced; `false` when not the owner.
   */
  complete(
    id: string,
    owner: Owner,
    result: string | null,
    resultRetentionSeconds: number,
  ): Promise<boolean>;

  /**
   * {@link Backend.complete} for many jobs in one write (one statement on PostgreSQL, one
   * transaction on SQLite). Each item is fenced on its own; returns, in input order, whether each
   * row changed.
   */
  completeMany(
    items: readonly CompletionItem[],
    resultRetentionSeconds: number,
  ): Promise<boolean[]>;

  /**
   * Failure with attempts left: `status='queued'`, `attempts+1`, `last_error`,
   * `scheduled_at = now + delaySeconds`, owner cleared. Fenced.
   */
  retry(id: string, owner: Owner, error: string, delaySeconds: number): Promise<boolean>;

  /**
   * Moves the row to `soniq_dead_letter_jobs` atomically (same id; the row is in exactly one
   * table). `attempts+1` when `countAttempt` (the job ran), `last_error = error`, `reason`.
   * Fenced.
   */
  deadLetter(
    id: string,
    owner: Owner,
    error: string,
    reason: string,
    countAttempt: boolean,
  ): Promise<boolean>;

  /** Snooze: `status='queued'`, `scheduled_at = now + delaySeconds`, attempts unchanged, owner cleared. Fenced. */
  snooze(id: string, owner: Owner, delaySeconds: number): Promise<boolean>;

  /**
   * NACK (seed 000 field contract + owner match, DESIGN.md §2): `status='queued'`,
   * `worker_id=NULL`, `claim_token=NULL`, `updated_at=now`, `scheduled_at=now`; `attempts` and
   * `last_error` untouched. Fenced; a no-op when the row already moved on.
   */
  nack(id: string, owner: Owner): Promise<boolean>;

  /**
   * Moves a dead-letter entry back to `soniq_jobs` as `queued`, due now, `attempts=0`,
   * `interruptions=0`, `last_error` kept. Returns `false` when no such entry.
   * @throws SoniqError `DEDUP_CONFLICT` when a live job holds its dedup key (nothing changes).
   */
  replay(id: string): Promise<boolean>;

  /**
   * Cancels a `queued` job: `status='cancelled'`, `finished_at=now`,
   * `result_expires_at = now + retentionSeconds`. `false` if it is not queued.
   */
  cancel(id: string, retentionSeconds: number): Promise<boolean>;

  getJob(id: string): Promise<JobRow | null>;
  getDeadLetter(id: string): Promise<DeadLetterRow | null>;
  stats(): Promise<QueueStats>;

  /** Inserts a worker row (`status='running'`, heartbeat now). */
  registerWorker(worker: WorkerInfo): Promise<void>;
  /** Sets `last_heartbeat_at = now` and `status`. */
  heartbeat(workerId: string, status: WorkerStatus): Promise<void>;
  /** Sets `status='stopped'`, `stopped_at = now`. */
  markWorkerStopped(workerId: string): Promise<void>;
  /**
   * Worker rows, newest first. A worker is live when not stopped and its last heartbeat is
   * within `heartbeatTimeoutSeconds` of the database's now.
   */
  listWorkers(heartbeatTimeoutSeconds: number): Promise<Array<WorkerRow & { live: boolean }>>;

  /**
   * Deletes `done` and `cancelled` rows whose `result_expires_at` has passed, at most `limit` of
   * them (all when omitted), in one statement; returns how many.
   */
  pruneFinished(limit?: number): Promise<number>;

  /**
   * Crash recovery (DESIGN.md §3.2–3.3): every `processing` row whose owner is not a live worker
   * incarnation — no worker row, `status = 'stopped'`, or a heartbeat older than
   * `heartbeatTimeoutSeconds` by the database clock — is requeued: `status='queued'`, due now,
   * `worker_id` and `claim_token` cleared, `interruptions + 1`, `attempts` and `last_error`
   * untouched. A row whose interruptions would exceed `crashLoop.maxInterruptions` is moved to the
   * dead-letter queue instead, with `crashLoop.reason` and `crashLoop.message` (attempts
   * unchanged; build the rule with `crashLoopRule` from `src/maintenance/policy.ts`). Atomic per
   * row and fenced on state and owner: a live owner's row, or one that finished meanwhile, is
   * never touched.
   * Idempotent: safe to run from several processes at once.
   *
   * Liveness uses the heartbeat timeout each worker **declared** (admin-store.ts `workerDeclare`),
   * so recovery agrees with the workers whatever the caller's settings;
   * `heartbeatTimeoutSeconds` applies to workers that declared none. A stale row whose claim has
   * a cancel request is finalised `cancelled` (kept `options.cancelledRetentionSeconds`).
   *
   * With `heartbeatTimeoutSeconds` null, a stale heartbeat is not enough: only rows of stopped or
   * unknown owners are recovered (for a caller that cannot vouch that the database itself was
   * answering all along — after an outage every heartbeat is stale, live workers' too).
   */
  recoverStale(
    heartbeatTimeoutSeconds: number | null,
    crashLoop: CrashLoopRule,
    options?: RecoveryOptions,
  ): Promise<RecoveryResult>;

  /**
   * The `processing` rows `workerId` owns, with their claim tokens (a worker reconciles them
   * with what it is running after a claim whose answer was lost).
   */
  ownedBy(workerId: string): Promise<Array<Owner & { id: string }>>;

  /**
   * Deletes worker rows whose last heartbeat is older than `notSeenForSeconds`, at most `limit`
   * of them (all when omitted), in one statement; returns how many.
   */
  forgetWorkers(notSeenForSeconds: number, limit?: number): Promise<number>;

  /**
   * Leader lease for maintenance work: takes or renews lease `name` for `holder` for
   * `ttlSeconds` (database clock). True when `holder` holds it now — it was free, expired, or
   * already `holder`'s. A dead leader's lease expires and another worker takes over.
   */
  tryLead(name: string, holder: string, ttlSeconds: number): Promise<boolean>;

  /** Gives lease `name` up if `holder` holds it. */
  resign(name: string, holder: string): Promise<void>;

  /**
   * Subscribes to wake-ups: `listener(queue)` is called soon after a job in `queue` becomes
   * available, or with `"*"` when the backend cannot tell which (e.g. after PostgreSQL's LISTEN
   * connection was re-established and notifications may have been missed). Best effort: workers
   * also poll. Returns the unsubscribe function.
   */
  subscribe(listener: (queue: string) => void): () => void;
}
