/**
 * Rows and values the backend contract exchanges: job, dead-letter and worker rows, the claim's
 * owner, recovery results and the crash-loop rule. The methods that use them are in
 * `job-store.ts`, `worker-store.ts` and `lease-store.ts`.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */

/** Job row states (docs/backends.md, "Tables"). Dead letters are in `soniq_dead_letter_jobs`. */
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
  /** Delay in **seconds** from the database's now; used only when `runAt` is null. */
  delaySeconds: number;
  /**
   * Deduplication key, held in `soniq_dedup_keys` while its job is queued or processing and,
   * once done or cancelled, until its retention passes; a job in the dead-letter queue does not
   * hold its key. A duplicate returns the holder's id.
   */
  dedupKey: string | null;
  /**
   * Soniq's own metadata as JSON text (e.g. `{"schedule":{…}}` for a scheduled occurrence, read
   * back as `ctx.schedule`); absent or null for none.
   */
  meta?: string | null;
  /**
   * The producer's trace context (W3C `traceparent`, then a space and `tracestate` when there is
   * one), stored with the job for the consumer span; absent or null when tracing is off.
   */
  traceContext?: string | null;
  /**
   * The version of the definition that enqueued it (an integer >= 1; absent: 1). A worker claims
   * the job only when its own definition of `name` has a version >= this (rolling deploys,
   * docs/operations.md).
   */
  version?: number;
}

/** What `JobStore.jobEnqueue` returns for each {@link NewJob}, in input order. */
export interface EnqueueResult {
  /** The new job's id, or the id of the existing job holding the same dedup key. */
  id: string;
  /** `false` when a job with the same dedup key already existed and nothing was inserted. */
  inserted: boolean;
}

/** A row of `soniq_jobs`. */
export interface JobRow {
  /** Job id (UUID). */
  id: string;
  /** Registered job name. */
  name: string;
  /** Queue name. */
  queue: string;
  /** Arguments as JSON text. */
  args: string;
  /** Current state. */
  status: JobStatus;
  /** Lower runs first. */
  priority: number;
  /** Outcomes recorded so far (success, failure, job_timeout). */
  attempts: number;
  /** Runs allowed before the dead-letter queue. */
  maxAttempts: number;
  /** Crash recoveries charged to this job: its start was durably known (not an attempt). */
  interruptions: number;
  /** When it is (or was) due. */
  scheduledAt: Date;
  /** When it was enqueued. */
  createdAt: Date;
  /** Last write to the row. */
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
  /** Deduplication key, if any. */
  dedupKey: string | null;
  /** Soniq's metadata as JSON text (see {@link NewJob.meta}), or null. */
  meta: string | null;
  /** The trace context stored at enqueue ({@link NewJob.traceContext}); absent or null when none. */
  traceContext?: string | null;
  /**
   * While `processing`: whether the current claim is durably known to have started (a claim with
   * `deferStart` leaves it false until `JobStore.jobMarkStarted`). Crash recovery charges an
   * interruption only when it is true.
   */
  startKnown: boolean;
  /** Crash recoveries that charged nothing because no start was known (crash history). */
  unchargedRecoveries: number;
  /** The version of the definition that enqueued it ({@link NewJob.version}); 1 for older rows. */
  version: number;
  /**
   * Its last checkpoint (`ctx.checkpoint`) as JSON text, or null (docs/checkpoints.md). Kept when
   * the job finishes; absent from list rows.
   */
  checkpoint?: string | null;
  /**
   * Its steps' records (`ctx.step`) as JSON text, `{ "<name>": { "s": "done", "r": result } |
   * { "s": "running" } | { "s": "frozen" } }`, or null. Kept when the job finishes; absent from
   * list rows.
   */
  steps?: string | null;
}

/** A row of `soniq_dead_letter_jobs`: the job as it was, plus why and when it was moved. */
export interface DeadLetterRow
  extends Omit<
    JobRow,
    | "status"
    | "result"
    | "resultExpiresAt"
    | "startKnown"
    | "unchargedRecoveries"
    | "checkpoint"
    | "steps"
  > {
  /**
   * The job's Soniq metadata as it was when moved (its concurrency key and limits, its schedule
   * context, its checkpoint markers), or null: none, or an entry written before PostgreSQL
   * migration 031 / SQLite 021. A replay puts it back without the checkpoint markers.
   */
  meta: string | null;
  /** Why it was moved, e.g. `max_attempts_exceeded`, `unknown_job`, `invalid_args`. */
  reason: string;
  /** When it was moved. */
  deadAt: Date;
}

/** The claim's owner; every finishing write must match it (docs/backends.md, "Fencing"). */
export interface Owner {
  /** The worker incarnation holding the claim. */
  workerId: string;
  /** The claim's fresh token. */
  claimToken: string;
}

/**
 * A claimed job: what a worker needs to run it and to fence its outcome, as the row is after the
 * claim (its `status` is then `processing`). A claim returns only these columns — fewer to send
 * and decode per job on the hot path; `JobStore.jobGet` reads the whole row.
 */
export interface ClaimedJob {
  /** Job id. */
  id: string;
  /** Registered job name. */
  name: string;
  /** Queue name. */
  queue: string;
  /** The arguments as stored JSON text. */
  args: string;
  /** Lower runs first. */
  priority: number;
  /** Outcomes recorded before this claim (the running attempt is `attempts + 1`). */
  attempts: number;
  /** Runs allowed before the dead-letter queue. */
  maxAttempts: number;
  /** Crash recoveries charged so far. */
  interruptions: number;
  /**
   * Crash recoveries that charged no interruption (no start was known). A job with
   * `interruptions + unchargedRecoveries > 0` has a crash history: a worker marks its start
   * (`JobStore.jobMarkStarted`) before running any of its code, and runs it alone.
   */
  unchargedRecoveries: number;
  /** When it was due. */
  scheduledAt: Date;
  /** When it was enqueued. */
  createdAt: Date;
  /** Owner: the claiming worker incarnation. */
  workerId: string;
  /** Owner: this claim's fresh token. */
  claimToken: string;
  /** Soniq's metadata as JSON text (see {@link NewJob.meta}), or null. */
  meta: string | null;
  /** The trace context stored at enqueue ({@link NewJob.traceContext}), or null. */
  traceContext: string | null;
  /**
   * The version of the definition that enqueued it ({@link NewJob.version}): never above the
   * claiming worker's definition's version (a claim's `versions`); below it, the definition's
   * `upgrade` turns the arguments into the current version's before the argument check.
   */
  version: number;
}

/** One completion of `JobStore.jobCompleteMany`. */
export interface CompletionItem {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** The result as JSON text, or null. */
  result: string | null;
  /**
   * How long the finished row is kept, in **seconds**, when the job's definition sets its own
   * `resultRetention`; omitted: the batch's `resultRetentionSeconds`. `0` keeps nothing: the row
   * is deleted, with no finished row and no dedup window.
   */
  resultRetentionSeconds?: number;
}

/** A worker incarnation: a fresh id at every process start (docs/reliability.md). */
export interface WorkerInfo {
  /** Fresh id per process start. */
  id: string;
  /** Host name of the process. */
  hostname: string;
  /** Process id. */
  pid: number;
  /** Queue filter, `null` for all. */
  queues: readonly string[] | null;
  /** Job slots. */
  concurrency: number;
}

/** Worker lifecycle as stored in `soniq_workers.status`. */
export type WorkerStatus = "running" | "draining" | "stopped";

/** A row of `soniq_workers`. */
export interface WorkerRow extends WorkerInfo {
  /** Lifecycle state. */
  status: WorkerStatus;
  /** When the row was registered. */
  startedAt: Date;
  /** Last heartbeat, by the database clock. */
  lastHeartbeatAt: Date;
  /** When it was marked stopped. */
  stoppedAt: Date | null;
}

/** Counts by state, as `soniq status` prints them. */
export interface QueueStats {
  /** Live and finished jobs plus dead-letter entries. */
  total: number;
  /** `queued` rows. */
  queued: number;
  /** `processing` rows. */
  processing: number;
  /** `done` rows. */
  done: number;
  /** Dead-letter entries (the status operators type as `dead_letter`). */
  deadLetter: number;
  /** `cancelled` rows. */
  cancelled: number;
}

/** One queue's counts and lateness, as `JobStore.jobQueueMetrics` reports it. */
export interface QueueMetrics {
  queue: string;
  /** Jobs in this queue, by status (live and finished). */
  queued: number;
  processing: number;
  done: number;
  cancelled: number;
  /** Entries of `soniq_dead_letter_jobs` from this queue. */
  deadLetter: number;
  /**
   * Seconds since the oldest **due** queued job of this queue became due (`now - min(scheduled_at)`
   * over queued rows with `scheduled_at <= now`, database clock); 0 when none is due. Jobs delayed
   * into the future do not count: they are not late.
   */
  oldestClaimableAgeSeconds: number;
}

/** A pg-compatible client (`pg.Client`, `pg.PoolClient`, or anything with the same `query`). */
export interface PgQueryable {
  /** Runs one statement with positional parameters. */
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** One job touched by `JobStore.jobRecoverStale`. */
export interface RecoveredJob {
  /** Job id. */
  id: string;
  /** Job name. */
  name: string;
  /** Queue name. */
  queue: string;
  /** The worker incarnation that held it (no longer live). */
  previousOwner: string | null;
  /** Its interruption count after this recovery. */
  interruptions: number;
  /**
   * Whether this recovery charged an interruption (the start was durably known). An uncharged
   * recovery counts in `unchargedRecoveries` instead and never dead-letters.
   */
  charged: boolean;
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
   * (admin-store.ts `jobCancelRequest`); never requeued.
   */
  cancelled: RecoveredJob[];
}

/** How long recovery keeps a row it finalised `cancelled` by default: 7 days, in seconds. */
export const DEFAULT_CANCELLED_RETENTION_SECONDS = 7 * 86_400;

/** A `processing` row and its claim's owner, as `JobStore.jobOwnedBy` returns it. */
export interface OwnedJob extends Owner {
  /** Job id. */
  id: string;
}

/** A worker row with its liveness, as `WorkerStore.workerList` returns it. */
export interface WorkerListRow extends WorkerRow {
  /** Not stopped, and heartbeating within the given timeout by the database clock. */
  live: boolean;
}

/**
 * The due time of a frozen job (docs/checkpoints.md): 9999-12-31T00:00:00Z, in epoch
 * milliseconds. No claim reaches it; an operator's resolve makes the job due now.
 */
export const FROZEN_UNTIL_MS = 253_402_214_400_000;
