/**
 * The job store: every read and write of the job tables, one params object per method, names
 * grouped by entity (`job…`, `deadLetter…`).
 *
 * Storage (docs/backends.md, "Two tables: live jobs and finished jobs"): a job is in exactly one
 * of three tables. `soniq_jobs` holds live jobs (`queued`, `processing`); a job that ends `done`
 * or `cancelled` leaves it in the same fenced write and goes to `soniq_finished_jobs` until its
 * retention passes (retention 0: it is deleted, nothing is kept); a dead-lettered job goes to
 * `soniq_dead_letter_jobs`. Rules below speak of a job's **status**, never of its table: "the row"
 * of a job is wherever it is.
 *
 * Dedup keys (`soniq_dedup_keys`): a key is held by the job that took it while that job is
 * `queued` or `processing`, and after it ends `done` or `cancelled` until its retention passes;
 * moving it to the dead-letter queue (or deleting it) releases the key.
 *
 * Rules every implementation keeps:
 * - Times are decided by the **database clock** (docs/backends.md, "Time"): due times,
 *   heartbeats, staleness. Durations are passed in **seconds**, absolute times as `Date`.
 * - Arguments and results travel as **JSON text** (already validated by the caller) and come
 *   back as the same text, byte for byte.
 * - Every write that finishes or releases a claimed job is **fenced** (docs/backends.md,
 *   "Fencing"): it only changes a row whose `id`, `status = 'processing'`, `worker_id` and
 *   `claim_token` all match the {@link Owner}. A write by anyone else changes nothing and returns
 *   `false`.
 * - `attempts` counts outcomes, not claims (docs/reliability.md, "The guarantees"): claim and
 *   NACK leave it alone; complete, retry and a dead-letter move after a run add one.
 * - A write that makes a job due now wakes the backend's `Notifier` for its queue.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */
import type {
  ClaimedJob,
  CompletionItem,
  CrashLoopRule,
  DEFAULT_CANCELLED_RETENTION_SECONDS,
  DeadLetterRow,
  EnqueueResult,
  JobRow,
  NewJob,
  OwnedJob,
  Owner,
  PgQueryable,
  QueueMetrics,
  QueueStats,
  RecoveryResult,
} from "./types.js";

/** Params of {@link JobStore.jobEnqueue}. */
export interface JobEnqueueParams {
  /** The jobs to insert, validated by the caller. */
  jobs: readonly NewJob[];
  /**
   * Run the insert on this client, inside the caller's transaction. Pass it only when the
   * backend's `capabilities.transactionalEnqueue` is true; the caller checks (and raises
   * `SoniqError("UNSUPPORTED")`), so a backend without the capability treats it as a bug.
   */
  connection?: PgQueryable;
}

/** Params of {@link JobStore.jobClaim}. */
export interface JobClaimParams {
  /** The claiming worker incarnation. */
  workerId: string;
  /** Only these queues; `null` means every queue (an empty list claims nothing). */
  queues: readonly string[] | null;
  /**
   * Only jobs of these names: the names the claiming worker has definitions for (rolling
   * deploys: a job of a name this worker does not know stays queued, untouched, for a worker that
   * knows it). `null` or absent: any name (an empty list claims nothing).
   */
  names?: readonly string[] | null;
  /**
   * Per entry of `names`, in the same order: the highest job version the claiming worker's
   * definition of that name runs (its `version`). A job of a higher version stays queued,
   * untouched, for an upgraded worker (job versions, docs/operations.md). `null` or absent (or
   * `names` null): any version. Must have the length of `names` when both are given.
   */
  versions?: readonly number[] | null;
  /** At most this many jobs (>= 1): the worker's free slots. */
  limit: number;
  /**
   * When true, the claimed rows are not known to have started: a crash recovery requeues such a
   * row without charging an interruption (it counts an uncharged recovery instead) until
   * {@link JobStore.jobMarkStarted} records its start. Default false: the claim itself counts as
   * the start, as for any caller that runs what it claims at once. The worker passes true.
   */
  deferStart?: boolean;
  /**
   * Aborting it abandons the claim: SQLite stops waiting for a busy database file (nothing is
   * claimed); PostgreSQL cancels the statement (rolled back, unless it had already finished). The
   * call then rejects with the signal's reason — or resolves as usual when it finished first.
   */
  signal?: AbortSignal;
}

/** Params of {@link JobStore.jobComplete}. */
export interface JobCompleteParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** The result as JSON text, or null. */
  result: string | null;
  /** Keep the `done` row this many **seconds** (`result_expires_at = now + this`). */
  resultRetentionSeconds: number;
}

/** Params of {@link JobStore.jobCompleteMany}. */
export interface JobCompleteManyParams {
  /** The completions, each fenced on its own. */
  items: readonly CompletionItem[];
  /** Keep the `done` rows this many **seconds**. */
  resultRetentionSeconds: number;
}

/** Params of {@link JobStore.jobRetry}. */
export interface JobRetryParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** The failure's message, stored as `last_error`. */
  error: string;
  /** Due again this many **seconds** from now (<= 0: due now, and wakes its queue). */
  delaySeconds: number;
}

/** Params of {@link JobStore.jobDeadLetter}. */
export interface JobDeadLetterParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** Stored as `last_error`. */
  error: string;
  /** Why, e.g. `max_attempts_exceeded`, `unknown_job`, `invalid_args`. */
  reason: string;
  /** `true` when the job ran (the run is an outcome: `attempts + 1`); `false` when it never ran. */
  countAttempt: boolean;
}

/** Params of {@link JobStore.jobPauseKey}. */
export interface JobPauseKeyParams {
  /** The concurrency/rate key (docs/flow-control.md). */
  key: string;
  /** How long, in **seconds** from now (> 0). */
  delaySeconds: number;
}

/** Params of {@link JobStore.jobPauseQueue}. */
export interface JobPauseQueueParams {
  /** The queue. */
  queue: string;
  /** How long, in **seconds** from now (> 0). */
  delaySeconds: number;
}

/** Params of {@link JobStore.jobSnooze}. */
export interface JobSnoozeParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** Due again this many **seconds** from now (<= 0: due now, and wakes its queue). */
  delaySeconds: number;
}

/** Params of {@link JobStore.jobNack}. */
export interface JobNackParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
}

/** Params of {@link JobStore.jobNackMany}. */
export interface JobNackManyParams {
  /** The claims to NACK, each fenced on its own owner. */
  items: readonly JobNackParams[];
}

/** Params of {@link JobStore.jobMarkStarted}. */
export interface JobMarkStartedParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
}

/** Params of {@link JobStore.jobCancel}. */
export interface JobCancelParams {
  /** Job id. */
  id: string;
  /** Keep the `cancelled` row this many **seconds** before it may be pruned. */
  retentionSeconds: number;
}

/** Params of the by-id reads and of {@link JobStore.deadLetterReplay}. */
export interface JobIdParams {
  /** Job id (a non-UUID finds nothing). */
  id: string;
}

/** Params of {@link JobStore.jobPruneFinished}. */
export interface JobPruneFinishedParams {
  /** Delete at most this many rows; all when omitted. */
  limit?: number;
  /**
   * The longest result retention the caller's jobs use, in **seconds** (the instance's
   * `resultRetention` and every job definition's). PostgreSQL keeps its daily partitions of
   * finished jobs made that far ahead (plus two days, at most 62 days: finished-partitions.ts);
   * SQLite ignores it. Default: 7 days.
   */
  retentionSeconds?: number;
}

/** Params of {@link JobStore.jobRecoverStale}. */
export interface JobRecoverStaleParams {
  /**
   * A heartbeat older than this many **seconds** (database clock) makes its worker not live.
   * Omitted: a stale heartbeat is not enough, only rows of stopped or unknown owners are
   * recovered — for a caller that cannot vouch that the database itself was answering all along
   * (after an outage every heartbeat is stale, live workers' too).
   */
  staleAfterSeconds?: number;
  /** The crash-loop rule (build it with `crashLoopRule` from `src/maintenance/policy.ts`). */
  crashLoop: CrashLoopRule;
  /**
   * How long a row finalised `cancelled` (its claim had a cancel request) is kept, in
   * **seconds**. Default {@link DEFAULT_CANCELLED_RETENTION_SECONDS}.
   */
  cancelledRetentionSeconds?: number;
  /**
   * The calling worker's own incarnation: never treated as not live, its rows never touched,
   * whatever its heartbeat says. A worker that recovers others must pass its own id — its event
   * loop may have been starved past its heartbeat timeout while it still runs its jobs, and it
   * must not requeue (or dead-letter) what it is running. Omitted by a caller with no worker of
   * its own (`soniq recover`).
   */
  liveWorkerId?: string;
}

/** Params of {@link JobStore.jobOwnedBy}. */
export interface JobOwnedByParams {
  /** The worker incarnation. */
  workerId: string;
}

/** Params of {@link JobStore.jobCheckpoint}. */
export interface JobCheckpointParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** The checkpoint's new JSON text; absent: left as it is. */
  checkpoint?: string;
  /** The steps' records as JSON text (written whole); absent: left as they are. */
  steps?: string;
}

/** Params of {@link JobStore.jobResumeRead}. */
export interface JobResumeReadParams {
  /** Job id. */
  id: string;
  /**
   * The claim's owner (fence): the worker reads its own claim's state. Absent: an operator's
   * read of a `queued` job's state (null when the job is not queued).
   */
  owner?: Owner;
}

/** What {@link JobStore.jobResumeRead} returns: the JSON texts, each null when never written. */
export interface JobResumeState {
  checkpoint: string | null;
  steps: string | null;
}

/** Params of {@link JobStore.jobFreezeStep}. */
export interface JobFreezeStepParams {
  /** Job id. */
  id: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** The steps' records as JSON text, the frozen step marked. */
  steps: string;
  /** Stored as `last_error`: why the job is frozen. */
  error: string;
}

/** Params of {@link JobStore.jobStepsResolve}. */
export interface JobStepsResolveParams {
  /** Job id. */
  id: string;
  /** The steps' JSON text the caller read: the write happens only if it is still the same. */
  expected: string;
  /** The steps' new JSON text. */
  steps: string;
}

/** The job store. See the module comment for the rules every method keeps. */
export interface JobStore {
  /**
   * Inserts jobs (one round trip on PostgreSQL). Dedup: a job whose `dedupKey` is already held
   * returns the holder's id with `inserted: false`; a key repeated within the batch maps to the
   * first job carrying it. Results are in input order. Due jobs wake their queue.
   */
  jobEnqueue(params: JobEnqueueParams): Promise<EnqueueResult[]>;

  /**
   * Claims up to `limit` due `queued` jobs, exactly once across all processes: order is
   * priority ascending, then `scheduled_at`, then `created_at`, then id. Sets
   * `status='processing'`, `worker_id`, a fresh `claim_token` per job, `started_at` and
   * `updated_at` to now. Does not change `attempts`.
   * @returns The claimed jobs ({@link ClaimedJob}: the fields a worker needs), in claim order.
   */
  jobClaim(params: JobClaimParams): Promise<ClaimedJob[]>;

  /**
   * Success: `status='done'`, `attempts+1`, `result`, `finished_at=now`,
   * `result_expires_at = now + resultRetentionSeconds`; the row leaves `soniq_jobs` (kept in
   * `soniq_finished_jobs`, or deleted when the retention is 0). Fenced; `false` when not the
   * owner, and then nothing moves.
   */
  jobComplete(params: JobCompleteParams): Promise<boolean>;

  /**
   * {@link JobStore.jobComplete} for many jobs in one write (one statement on PostgreSQL, one
   * transaction on SQLite). Each item is fenced on its own; returns, in input order, whether each
   * row changed.
   */
  jobCompleteMany(params: JobCompleteManyParams): Promise<boolean[]>;

  /**
   * Failure with attempts left: `status='queued'`, `attempts+1`, `last_error`,
   * `scheduled_at = now + delaySeconds`, owner cleared. Fenced.
   */
  jobRetry(params: JobRetryParams): Promise<boolean>;

  /**
   * Moves the row to `soniq_dead_letter_jobs` atomically (same id; the row is in exactly one
   * table). `attempts+1` when `countAttempt`, `last_error = error`, `reason`; `meta` copied (as
   * every move into the dead-letter queue does). Fenced.
   */
  jobDeadLetter(params: JobDeadLetterParams): Promise<boolean>;

  /**
   * Snooze: `status='queued'`, `scheduled_at = now + delaySeconds`, attempts unchanged, owner
   * cleared. Fenced.
   */
  jobSnooze(params: JobSnoozeParams): Promise<boolean>;

  /**
   * Pauses a key (`ctx.rateLimited` with scope `"key"`, docs/flow-control.md): no job of `key` is
   * claimed until `now + delaySeconds` (a longer pause already set is kept), on every worker;
   * stored in `soniq_rate_pauses`. Wakes this process's claimers when it ends.
   */
  jobPauseKey(params: JobPauseKeyParams): Promise<void>;

  /**
   * Pauses a queue for a while (`ctx.rateLimited` with scope `"queue"`, docs/flow-control.md):
   * `soniq_queues.paused` with `paused_until = now + delaySeconds` (a later one already set is
   * kept); claims and hand-offs read it as paused until then, on every worker. An operator's
   * pause (no `paused_until`) is left as it is. Wakes this process's claimers when it ends.
   */
  jobPauseQueue(params: JobPauseQueueParams): Promise<void>;

  /**
   * NACK (docs/shutdown.md, "What each branch does to a row"): `status='queued'`,
   * `worker_id=NULL`, `claim_token=NULL`, `updated_at=now`, `scheduled_at=now`; `attempts` and
   * `last_error` untouched; wakes its queue. Fenced on the owner too, so a no-op when the row
   * already moved on (recovered and claimed again by another worker, say).
   */
  jobNack(params: JobNackParams): Promise<boolean>;

  /**
   * {@link JobStore.jobNack} for many claimed, never-started jobs in one write (one statement on
   * PostgreSQL and on SQLite): the same field contract, each row fenced on its own,
   * each distinct queue woken once. The worker's prefetch window uses it at drain start, for rows
   * past their TTL and for a claim answered after drain start.
   * @returns Per item, in input order, whether its row changed.
   */
  jobNackMany(params: JobNackManyParams): Promise<boolean[]>;

  /**
   * Records that a claimed job is starting (its first user code is about to run): from now on a
   * crash recovery of this claim charges it an interruption. One fenced row write (`start_known`
   * = true); `false` when `owner` no longer holds the claim. Attempts and times unchanged.
   */
  jobMarkStarted(params: JobMarkStartedParams): Promise<boolean>;

  /**
   * Cancels a `queued` job: `status='cancelled'`, `finished_at=now`,
   * `result_expires_at = now + retentionSeconds` (moved out of `soniq_jobs` as a completion is;
   * 0 deletes it). `false` if it is not queued.
   */
  jobCancel(params: JobCancelParams): Promise<boolean>;

  /** The job's row, live or finished, or `null` (dead letters: {@link JobStore.deadLetterGet}). */
  jobGet(params: JobIdParams): Promise<JobRow | null>;

  /** Counts by state (one snapshot); `total` = live + finished jobs + dead-letter entries. */
  jobStats(): Promise<QueueStats>;

  /**
   * Per-queue counts by status and the oldest claimable job's age (see {@link QueueMetrics}), one
   * entry per queue that has a job row or a dead-letter entry, ordered by queue name. One read (a
   * grouped scan of both tables): meant for one elected process every few seconds, not for every
   * worker.
   */
  jobQueueMetrics(): Promise<QueueMetrics[]>;

  /**
   * Deletes finished (`done`, `cancelled`) rows whose `result_expires_at` has passed, at most
   * `limit` of them, in one statement, and forgets dedup keys whose hold has passed; then folds
   * the finished-job counters (older minutes into fewer rows, sums unchanged); returns how many
   * job rows.
   */
  jobPruneFinished(params: JobPruneFinishedParams): Promise<number>;

  /**
   * Crash recovery (docs/reliability.md, "Crash recovery, in brief"): every `processing` row
   * whose owner is not a live worker incarnation — no worker row, `status = 'stopped'`, or a
   * heartbeat older than `staleAfterSeconds` — is requeued: `status='queued'`, due now,
   * `worker_id` and `claim_token` cleared, `attempts` and `last_error` untouched, and charged:
   * `interruptions + 1` when its start is known (`start_known`), else `uncharged_recoveries + 1`
   * (an uncharged row is never dead-lettered); its queue wakes. A charged row whose interruptions
   * would exceed `crashLoop.maxInterruptions` is moved to the dead-letter queue instead, with
   * `crashLoop.reason` and `crashLoop.message` (attempts unchanged). Atomic
   * per row and fenced on state and owner: a live owner's row, or one that finished meanwhile,
   * is never touched. Idempotent: safe to run from several processes at once.
   *
   * Liveness uses the heartbeat timeout each worker **declared** (admin-store.ts
   * `workerDeclare`), so recovery agrees with the workers whatever the caller's settings;
   * `staleAfterSeconds` applies to workers that declared none (and, when omitted, no stale
   * heartbeat counts at all). A stale row whose claim has a cancel request is finalised
   * `cancelled` (kept `cancelledRetentionSeconds`), never requeued. Rows owned by
   * `liveWorkerId` (the caller's own incarnation) are never touched.
   */
  jobRecoverStale(params: JobRecoverStaleParams): Promise<RecoveryResult>;

  /**
   * The `processing` rows `workerId` owns, with their claim tokens (a worker reconciles them
   * with what it is running after a claim whose answer was lost).
   */
  jobOwnedBy(params: JobOwnedByParams): Promise<OwnedJob[]>;

  /**
   * Checkpoints and steps (docs/checkpoints.md): writes `checkpoint` and/or `steps` (JSON text,
   * whole) on the live row and sets `"resume": true` in its `meta`, so the next claim's worker
   * knows to read them ({@link JobStore.jobResumeRead}). One fenced row write; `false` when
   * `owner` no longer holds the claim (nothing written). Status, attempts and times unchanged.
   */
  jobCheckpoint(params: JobCheckpointParams): Promise<boolean>;

  /**
   * The claimed job's checkpoint and steps (one fenced read), or null when `owner` no longer
   * holds the claim; without `owner`, a queued job's (null when it is not queued).
   */
  jobResumeRead(params: JobResumeReadParams): Promise<JobResumeState | null>;

  /**
   * Freezes a claimed job whose effect step's outcome is unknown (docs/checkpoints.md): fenced;
   * `status='queued'`, owner cleared, `steps` and `last_error` written, due at
   * `FROZEN_UNTIL_MS` (types.ts) (never claimed) until an operator resolves the step
   * ({@link JobStore.jobStepsResolve}) or cancels the job. Attempts unchanged. `false` when not
   * the owner.
   */
  jobFreezeStep(params: JobFreezeStepParams): Promise<boolean>;

  /**
   * An operator's answer for a frozen job: writes `steps` and makes the job due now (wakes its
   * queue) when it is `queued` and its steps are still exactly `expected`; `false` otherwise.
   * Clears `last_error` when it is the freeze's (`frozen: …`): the job is no longer frozen.
   */
  jobStepsResolve(params: JobStepsResolveParams): Promise<boolean>;

  /**
   * An operator's reset of a `queued` job's checkpoint and steps (both NULL): its next attempt
   * starts afresh. Due time unchanged (a frozen job stays frozen: resolve or cancel it). `false`
   * when the job is not queued.
   */
  jobResumeClear(params: JobIdParams): Promise<boolean>;

  /** The entry of `soniq_dead_letter_jobs`, or `null`. */
  deadLetterGet(params: JobIdParams): Promise<DeadLetterRow | null>;

  /**
   * Moves a dead-letter entry back to `soniq_jobs` as `queued`, due now, `attempts=0`,
   * `interruptions=0`, `last_error` kept, `meta` restored without the checkpoint markers
   * (`resume`, `checkpoints`, `checkpointAt`), so a keyed job keeps its key's limits; wakes its
   * queue. `false` when no such entry.
   * @throws SoniqError `DEDUP_CONFLICT` when a live job holds its dedup key (nothing changes).
   */
  deadLetterReplay(params: JobIdParams): Promise<boolean>;
}
