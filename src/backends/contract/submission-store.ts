/**
 * The submission store: the durable record of remote jobs (docs/remote-jobs.md), one
 * interface every backend implements in its own file and reaches from its facade as
 * `backend.submissions`. One params object per method.
 *
 * Model. A remote job is an ordinary job (a live row of `soniq_jobs`, then finished) plus one row of
 * `soniq_remote_submissions` (keyed by the job id) holding its `phase`
 * (contract/phases.ts), submission `generation` (the idempotency key is
 * `<job id>:<generation>`), the remote `task_id`, when it is next due (`due_at`) and a stored
 * callback `answer`. While a job is in the remote side's custody — `accepted` (awaiting the remote
 * side) or `frozen` — its job row stays `processing` with **no owner** (`worker_id` and
 * `claim_token` NULL): no worker slot is held, the claim loop never takes it (it claims `queued`),
 * generic crash recovery leaves it alone (it skips rows whose submission is `submitting`,
 * `accepted` or `frozen`), and only {@link SubmissionStore.pollClaimDue} gives it an owner for
 * one poll or reconcile.
 *
 * Every write that a worker makes is fenced on the job row's owner (`status = 'processing'`,
 * `worker_id`, `claim_token`), like the job store's; it returns false (and changes nothing) when
 * the row is no longer the caller's. Times are the database clock; durations are **seconds**.
 */

import type { AdmissionBudget } from "./admission.js";
import type { SubmissionPhase } from "./phases.js";
import type { ClaimedJob, JobStatus, Owner } from "./types.js";

export type { SubmissionPhase } from "./phases.js";

/** A definite answer stored by a callback (`soniq.remote.complete/fail`) or an operator. */
export type RemoteAnswer =
  | { kind: "done" /** The result as JSON text, or null. */; result: string | null }
  | { kind: "failed"; error: string; retry: boolean };

/** Params of {@link SubmissionStore.submissionMarkSubmitting}. */
export interface MarkSubmittingParams {
  jobId: string;
  /** The claim's owner (fence). */
  owner: Owner;
  /** The job's name (admission counts per name). */
  name: string;
  queue: string;
  /** The admission budget (contract/admission.ts), checked atomically with the write; absent: unlimited. */
  budget?: AdmissionBudget;
}

/** What {@link SubmissionStore.submissionMarkSubmitting} did. */
export type MarkSubmittingResult =
  /** `submitting` is durable; submit with key `<job id>:<generation>`. */
  | { kind: "marked"; generation: number }
  /** Nothing written: the budget refused (counts as the store saw them). */
  | { kind: "over_budget"; reason: "concurrency" | "rate"; retryInSeconds: number }
  /** Nothing written: the row is not the caller's. */
  | { kind: "fenced" }
  /** Nothing written: the submission is in a phase that cannot move to `submitting`. */
  | { kind: "illegal"; phase: SubmissionPhase };

/** A job whose owner was set by {@link SubmissionStore.pollClaimDue}, for one poll or reconcile. */
export interface ClaimedRemote {
  /** The job as a claim returns it (owner = this poll's). */
  job: ClaimedJob;
  /** `accepted`: poll the task; `frozen`: reconcile (or apply `answer`). */
  phase: "accepted" | "frozen";
  taskId: string | null;
  generation: number;
  /** When `accepted` was written (for `pollTimeout`), or null. */
  acceptedAt: Date | null;
  /** Polls recorded so far. */
  polls: number;
  /** A stored callback/operator answer to apply instead of polling, or null. */
  answer: RemoteAnswer | null;
}

/** One submission row joined with its job row, for operators. */
export interface SubmissionRecord {
  jobId: string;
  name: string;
  queue: string;
  phase: SubmissionPhase;
  generation: number;
  idempotencyKey: string;
  taskId: string | null;
  submittedAt: Date | null;
  acceptedAt: Date | null;
  frozenAt: Date | null;
  /** Why it was frozen: `deadline`, `crash`, `submit_timeout`, `invalid_result`, … */
  frozenReason: string | null;
  /** When it is next polled or reconciled (accepted, frozen), or null. */
  dueAt: Date | null;
  polls: number;
  answer: RemoteAnswer | null;
  updatedAt: Date;
  /** The job row's status, or null when the row is gone (dead-lettered or pruned). */
  jobStatus: JobStatus | null;
  /** The job row's owner (a worker polling or submitting it now), or null. */
  workerId: string | null;
  attempts: number | null;
  lastError: string | null;
}

/** A row crash recovery moved by phase. */
export interface RecoveredSubmission {
  jobId: string;
  name: string;
  /** The phase it was in. */
  phase: "submitting" | "accepted" | "frozen";
  taskId: string | null;
  /** The dead owner. */
  previousOwner: string | null;
  /** `freeze` (was submitting) or `handoff` (accepted/frozen: owner cleared, due now). */
  action: "freeze" | "handoff";
}

/** Params of `SubmissionStore.submissionRecover`. */
export interface SubmissionRecoverParams {
  /**
   * Seconds of silence after which an owner that declared no heartbeat timeout is not live;
   * null: a stale heartbeat is not enough, only stopped or unknown owners are recovered.
   */
  heartbeatTimeoutSeconds: number | null;
  /**
   * The calling worker's own incarnation: never treated as not live, its rows never touched,
   * whatever its heartbeat says (a worker starved past its heartbeat timeout must not freeze or
   * hand off the submissions it is still running). Omitted by a caller with no worker of its own
   * (`soniq recover`).
   */
  liveWorkerId?: string;
}

/** Counts for `soniq status`. */
export interface SubmissionCounts {
  submitting: number;
  /** `accepted`: awaiting the remote side (polled by any worker). */
  awaiting: number;
  frozen: number;
}

/** One queue × remote phase cell of {@link SubmissionStore.submissionCountsByQueue}. */
export interface SubmissionQueueCount {
  queue: string;
  /** The submission's phase; its job row is `processing`. */
  phase: "submitting" | "accepted" | "frozen";
  count: number;
}

/** A filter of {@link SubmissionStore.submissionList}. */
export type SubmissionFilter = "frozen" | "awaiting" | "submitting" | "all";

/** Where a callback's answer goes. */
export type AnswerTarget = { jobId: string } | { taskId: string; name?: string };

/** What {@link SubmissionStore.submissionAnswer} did. */
export type AnswerResult =
  /** Stored; the job is due now and the next poll applies it (exactly once). */
  | "stored"
  /** No submission has this task id yet: kept, and applied when `accepted` is written. */
  | "early"
  /** The job already finished (or already holds an answer): nothing changed. */
  | "already_finished";

/** An operator's or reconcile's resolution of a frozen submission. */
export type Resolution =
  | { kind: "accepted"; taskId: string }
  | { kind: "not_submitted" }
  | { kind: "failed"; error: string };

/** See the module comment. */
export interface SubmissionStore {
  /**
   * Writes phase `submitting` (before the request), fenced on the owner, from no row or
   * `released`, after checking the admission budget in the same transaction. Sets `submitted_at`;
   * keeps the generation (a first mark gets 1).
   */
  submissionMarkSubmitting(params: MarkSubmittingParams): Promise<MarkSubmittingResult>;

  /**
   * `accepted` with the task id and the hand-off, in one transaction fenced on the owner, from
   * `submitting` or `frozen`: phase `accepted`, `task_id`, `accepted_at = now`, `due_at = now +
   * pollDelaySeconds` (now when an answer is stored, including an early answer kept for this task
   * id, which moves onto the row), and the job row's owner cleared (status stays `processing`).
   */
  submissionAccept(params: {
    jobId: string;
    owner: Owner;
    taskId: string;
    pollDelaySeconds: number;
  }): Promise<boolean>;

  /**
   * `submitting` → `frozen` (no usable answer), fenced: `frozen_at = now`, `frozen_reason`,
   * `due_at = now`, owner cleared, attempts kept. Never claimed automatically except by a worker
   * whose definition has `reconcile`, or once an answer is stored.
   */
  submissionFreeze(params: { jobId: string; owner: Owner; reason: string }): Promise<boolean>;

  /**
   * `submitting` | `accepted` | `frozen` → `released`, fenced: task id and answer cleared;
   * `generation + 1` when `newKey` (a definite failure: the next submission is a new request).
   * With `requeue` the job row is NACK'd in the same transaction (queued, due now, owner cleared,
   * attempts kept); otherwise the caller writes the job row next (retry or dead-letter move).
   */
  submissionRelease(params: {
    jobId: string;
    owner: Owner;
    newKey: boolean;
    requeue: boolean;
  }): Promise<boolean>;

  /**
   * The remote work finished: phase `finished` and the job row `done` (attempts + 1, result,
   * `finished_at`, `result_expires_at = now + retentionSeconds`) in one transaction, fenced.
   */
  submissionComplete(params: {
    jobId: string;
    owner: Owner;
    /** JSON text or null. */
    result: string | null;
    retentionSeconds: number;
  }): Promise<boolean>;

  /**
   * Deletes up to `limit` submission rows whose job is gone: neither live nor finished (pruned
   * after its result expired, or deleted) nor in `soniq_dead_letter_jobs` (pruned after
   * `deadLetterRetention`). A submission row thus lives exactly as long as its job's row or dead
   * letter, so `soniq remote show` works while the job can still be looked at. One statement on
   * PostgreSQL and SQLite. Returns the rows deleted (the pruner repeats while it gets `limit`).
   */
  submissionPrune(params: { limit: number }): Promise<number>;

  /** Marks phase `finished` after the job row was moved to the dead-letter queue. */
  submissionFinish(params: { jobId: string }): Promise<void>;

  /**
   * Gives due unowned `accepted` rows of `names`, and due unowned `frozen` rows of `reconcilable`
   * names (or of `names` with a stored answer), a fresh owner for one poll/reconcile — exactly
   * once across processes — oldest due first.
   */
  pollClaimDue(params: {
    workerId: string;
    names: readonly string[];
    reconcilable: readonly string[];
    limit: number;
  }): Promise<ClaimedRemote[]>;

  /**
   * Ends a poll/reconcile without an outcome, fenced: phase unchanged, `due_at = now +
   * delaySeconds`, `polls + 1` when `countPoll`, owner cleared (pending, hand-off, a reconcile
   * that threw).
   */
  pollRelease(params: {
    jobId: string;
    owner: Owner;
    delaySeconds: number;
    countPoll: boolean;
  }): Promise<boolean>;

  /**
   * Stores a callback's answer (first answer wins; exactly once): by job id, or by task id — kept
   * as an early answer when no submission has that task id yet.
   * @throws SoniqError `NOT_FOUND` (no such job or no remote submission for it), `INVALID_STATE`
   * (a task id shared by several jobs of which none was named).
   */
  submissionAnswer(params: { target: AnswerTarget; answer: RemoteAnswer }): Promise<AnswerResult>;

  /**
   * An operator's resolution of a `frozen`, unowned submission: `accepted` (task id, due now),
   * `not_submitted` (released, same key, job row requeued), `failed` (stored as the answer, due
   * now: the next worker dead-letters it). False when it is not frozen and unowned.
   */
  submissionResolve(params: { jobId: string; resolution: Resolution }): Promise<boolean>;

  /**
   * Makes an unowned `accepted` (or `frozen`) submission due now. False otherwise — and, with
   * `frozenNeedsAnswer`, false for a `frozen` one with no stored answer (the caller knows its
   * definition has no `reconcile`: no worker would ever claim it; an operator must resolve it).
   */
  pollNow(params: { jobId: string; frozenNeedsAnswer?: boolean }): Promise<boolean>;

  /**
   * Crash recovery by phase: every `processing` row with a submission in `submitting`, `accepted`
   * or `frozen` whose owner is set and not a live worker (stopped, unknown, or — unless
   * `heartbeatTimeoutSeconds` is null — silent longer than its own declared heartbeat timeout
   * (`workerDeclare`), or than `heartbeatTimeoutSeconds` when it declared none; the same rule as
   * `JobStore.jobRecoverStale`): `submitting` → `frozen` (reason `crash`), the others handed
   * off (owner cleared, due now). Attempts untouched. Rows owned by `liveWorkerId` are never
   * touched.
   */
  submissionRecover(params: SubmissionRecoverParams): Promise<RecoveredSubmission[]>;

  /** One submission with its job row, or null. */
  submissionGet(params: { jobId: string }): Promise<SubmissionRecord | null>;

  /** Submissions by filter, most recently updated first. */
  submissionList(params: { filter: SubmissionFilter; limit: number }): Promise<SubmissionRecord[]>;

  /** Counts of submitting, awaiting (`accepted`) and frozen submissions whose job is processing. */
  submissionCounts(): Promise<SubmissionCounts>;

  /**
   * The same counts per queue (the job's) and phase, zero cells left out: what the `processing`
   * rows of each queue hold in remote phases (admin/remote-split.ts reports them apart).
   */
  submissionCountsByQueue(): Promise<SubmissionQueueCount[]>;
}

/** Encodes an answer for the `answer` column (JSON text). */
export function encodeAnswer(answer: RemoteAnswer): string {
  return JSON.stringify(answer);
}

/** Decodes the `answer` column, or null. */
export function decodeAnswer(text: string | null | undefined): RemoteAnswer | null {
  if (text === null || text === undefined) return null;
  const value = JSON.parse(text) as RemoteAnswer;
  return value;
}

/** Phases in which a job row belongs to the submission machinery, not to generic recovery. */
export const REMOTE_CUSTODY_PHASES: readonly SubmissionPhase[] = [
  "submitting",
  "accepted",
  "frozen",
];
