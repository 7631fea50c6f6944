/**
 * What the handlers of a remote job return (docs/remote-jobs.md, "Defining one"):
 * `accepted(taskId)` or `failed(error, { retry })` from `submit`, `pending({ every })` /
 * `done(result)` / `failed(…)` from `poll`, `accepted(taskId)` / `notSubmitted()` from `reconcile`;
 * and the checks that turn anything else into a `SoniqError` with code `INVALID_RESULT`.
 */
import { SoniqError } from "../errors.js";

/** Longest task id Soniq stores, in characters. Longer (or empty) ids are `INVALID_RESULT`. */
export const MAX_TASK_ID_LENGTH = 256;

/** The provider accepted the submission and returned this task id. */
export interface Accepted {
  readonly kind: "accepted";
  readonly taskId: string;
}

/** A definite answer that the work failed; `retry` says whether a new submission may be tried. */
export interface Failed {
  readonly kind: "failed";
  /** The provider's error, kept as the job's `last_error` (never overwritten by a shutdown). */
  readonly error: string;
  readonly retry: boolean;
}

/** The remote task is still running; poll again after `everySeconds` (no attempt spent). */
export interface Pending {
  readonly kind: "pending";
  /** Seconds until the next poll; undefined: the job's `pollEvery`. */
  readonly everySeconds: number | undefined;
}

/** The remote task finished; `result` (JSON) is stored as the job's result. */
export interface Done<TResult = unknown> {
  readonly kind: "done";
  readonly result: TResult;
}

/** `reconcile` established that the provider never received the submission. */
export interface NotSubmitted {
  readonly kind: "not_submitted";
}

/** What `submit` may return. */
export type SubmitResult = Accepted | Failed;
/** What `poll` may return. */
export type PollResult<TResult = unknown> = Pending | Done<TResult> | Failed;
/** What `reconcile` may return. */
export type ReconcileResult = Accepted | NotSubmitted;

/** Half of a surrogate pair without its other half (not valid UTF-8 once encoded). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Checks a task id: a non-empty string of at most {@link MAX_TASK_ID_LENGTH} characters, without
 * NUL or an unpaired surrogate (PostgreSQL cannot store the one and would silently change the
 * other, so the id a callback names would no longer match; every backend refuses both alike).
 * @throws SoniqError `INVALID_RESULT` otherwise.
 */
export function assertTaskId(taskId: unknown): asserts taskId is string {
  if (typeof taskId !== "string" || taskId.length === 0) {
    throw new SoniqError("INVALID_RESULT", "accepted() needs a non-empty task id");
  }
  if (taskId.length > MAX_TASK_ID_LENGTH) {
    throw new SoniqError(
      "INVALID_RESULT",
      `a task id is at most ${MAX_TASK_ID_LENGTH} characters (got ${taskId.length})`,
    );
  }
  if (taskId.includes("\u0000") || LONE_SURROGATE.test(taskId)) {
    throw new SoniqError(
      "INVALID_RESULT",
      "a task id must not contain NUL or an unpaired surrogate (not valid UTF-8 text)",
    );
  }
}

/**
 * `accepted(taskId)`: the provider accepted the submission.
 * @throws SoniqError `INVALID_RESULT` for an empty task id or one over {@link MAX_TASK_ID_LENGTH}.
 */
export function accepted(taskId: string): Accepted {
  assertTaskId(taskId);
  return { kind: "accepted", taskId };
}

/**
 * `failed(error, { retry })`: a definite failure. `retry` (default false) allows a new
 * submission (a new idempotency key) after the job's retry delay; otherwise the job goes to the
 * dead-letter queue with reason `remote_failed`.
 */
export function failed(error: unknown, options: { retry?: boolean } = {}): Failed {
  const text =
    error instanceof Error ? error.message : typeof error === "string" ? error : safeJson(error);
  return { kind: "failed", error: text.slice(0, 4000), retry: options.retry === true };
}

/**
 * `pending({ every })`: still running; poll again after `every` **seconds** (default: the job's
 * `pollEvery`). Not an attempt.
 * @throws SoniqError `INVALID_RESULT` when `every` is not a finite number >= 0.
 */
export function pending(options: { every?: number } = {}): Pending {
  const every = options.every;
  if (every !== undefined && (!Number.isFinite(every) || every < 0)) {
    throw new SoniqError("INVALID_RESULT", "pending({ every }) takes seconds >= 0");
  }
  return { kind: "pending", everySeconds: every };
}

/** `done(result)`: the remote task finished; `result` must be JSON (checked when stored). */
export function done<TResult>(result: TResult): Done<TResult> {
  return { kind: "done", result };
}

/** `notSubmitted()`: `reconcile` found no trace of the submission: it is released and retried. */
export function notSubmitted(): NotSubmitted {
  return { kind: "not_submitted" };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function kindOf(value: unknown): string | undefined {
  return typeof value === "object" && value !== null && "kind" in value
    ? String((value as { kind: unknown }).kind)
    : undefined;
}

/**
 * Checks what `submit` returned.
 * @throws SoniqError `INVALID_RESULT` for anything but `accepted(…)` with a valid task id or
 * `failed(…)`.
 */
export function checkSubmitResult(value: unknown): SubmitResult {
  const kind = kindOf(value);
  if (kind === "accepted") {
    assertTaskId((value as Accepted).taskId);
    return value as Accepted;
  }
  if (kind === "failed") return value as Failed;
  throw new SoniqError(
    "INVALID_RESULT",
    "submit must return accepted(taskId) or failed(error, { retry })",
  );
}

/**
 * Checks what `poll` returned.
 * @throws SoniqError `INVALID_RESULT` for anything but `pending`, `done` or `failed`.
 */
export function checkPollResult(value: unknown): PollResult {
  const kind = kindOf(value);
  if (kind === "pending" || kind === "done" || kind === "failed") return value as PollResult;
  throw new SoniqError("INVALID_RESULT", "poll must return pending(), done(result) or failed()");
}

/**
 * Checks what `reconcile` returned.
 * @throws SoniqError `INVALID_RESULT` for anything but `accepted(taskId)` or `notSubmitted()`.
 */
export function checkReconcileResult(value: unknown): ReconcileResult {
  const kind = kindOf(value);
  if (kind === "accepted") {
    assertTaskId((value as Accepted).taskId);
    return value as Accepted;
  }
  if (kind === "not_submitted") return value as NotSubmitted;
  throw new SoniqError(
    "INVALID_RESULT",
    "reconcile must return accepted(taskId) or notSubmitted()",
  );
}
