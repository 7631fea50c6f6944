/**
 * What `soniq.remoteJob(...)` takes (docs/remote-jobs.md, "Defining one"): the handlers of a job
 * that calls a remote API which accepts work and answers later, their contexts, and the checked
 * settings the worker runs them with ({@link RemoteSpec}). Durations are **seconds**.
 */

import type { AdmissionBudget } from "../backends/contract/admission.js";
import { SoniqError } from "../errors.js";
import type { JobContext } from "../jobs/context.js";
import type { Logger } from "../observability/logger.js";
import { assertAdmissionBudget } from "./admission.js";
import { assertCircuitOptions, type CircuitBreakerOptions } from "./circuit-breaker.js";
import type { PollResult, ReconcileResult, SubmitResult } from "./results.js";

/**
 * A remote job's context: a {@link JobContext} without checkpoints and steps (a remote job's
 * progress is its durable phase, docs/remote-jobs.md).
 */
export type RemoteJobContext = Omit<JobContext, "resume" | "checkpoint" | "step" | "rateLimited">;

/** What `submit` and `reconcile` receive besides the arguments. */
export interface RemoteSubmitContext extends RemoteJobContext {
  /**
   * `<job id>:<generation>`: pass it to the provider. Stable across a reconcile that answers
   * `notSubmitted` (the resubmission reuses it); a new generation only after a definite failure.
   */
  idempotencyKey: string;
}

/** What `poll` receives besides the task id. */
export interface RemotePollContext {
  /** Aborted at the worker's shutdown deadline or when the request takes longer than `submitTimeout`. */
  signal: AbortSignal;
  jobId: string;
  name: string;
  taskId: string;
  /** Polls recorded before this one. */
  polls: number;
  /** When `accepted` was written (database clock). */
  acceptedAt: Date;
  idempotencyKey: string;
  workerId: string;
  /** A logger bound to `job_id` only (the fields of docs/remote-jobs.md, "Logs and events"). */
  logger: Logger;
}

/**
 * The remote part of what `soniq.remoteJob(...)` takes (`RemoteJobOptions` in
 * jobs/job-definition.ts adds the shared job settings: name, queue, priority, retry, …).
 */
export interface RemoteHandlers<TArgs, TResult = unknown> {
  /**
   * Sends the request. Runs only after phase `submitting` is durable. Return `accepted(taskId)` or
   * `failed(error, { retry })`. Throwing, timing out or being cut off by the shutdown deadline is
   * **ambiguous**: the job is frozen, never resubmitted on its own.
   */
  submit(args: TArgs, ctx: RemoteSubmitContext): Promise<SubmitResult> | SubmitResult;
  /**
   * Reads the task's status, on any worker, when due. Return `pending({ every })`, `done(result)`
   * or `failed(error, { retry })`. Throwing is transient: polled again after `pollEvery`.
   */
  poll(taskId: string, ctx: RemotePollContext): Promise<PollResult<TResult>> | PollResult<TResult>;
  /**
   * Resolves a frozen submission without replaying it (e.g. looks the task up by
   * `ctx.idempotencyKey`): `accepted(taskId)` or `notSubmitted()`. Without it a frozen job waits for
   * an operator (`soniq remote resolve`).
   */
  reconcile?(args: TArgs, ctx: RemoteSubmitContext): Promise<ReconcileResult> | ReconcileResult;
  /**
   * Runs before `submitting` is written: throw to fail the job definitively (dead-letter reason
   * `preflight_failed`) outside the ambiguous window.
   */
  preflight?(args: TArgs, ctx: RemoteJobContext): Promise<void> | void;
  /** Seconds one `submit` (and one `poll`/`reconcile` call) may take (> 0). */
  submitTimeout: number;
  /** Seconds between polls unless `pending({ every })` says otherwise (> 0). */
  pollEvery: number;
  /** Seconds after `accepted` past which the job fails with reason `remote_timeout` (> 0). */
  pollTimeout: number;
  /** Concurrent submissions and submissions per minute, over all workers. */
  admission?: AdmissionBudget;
  /** Opens after repeated provider failures; per worker process. */
  circuitBreaker?: CircuitBreakerOptions;
}

/** The checked remote settings a {@link JobDefinition} of kind `remote` carries. */
export interface RemoteSpec {
  submit(args: unknown, ctx: RemoteSubmitContext): Promise<SubmitResult> | SubmitResult;
  poll(taskId: string, ctx: RemotePollContext): Promise<PollResult> | PollResult;
  reconcile:
    | ((args: unknown, ctx: RemoteSubmitContext) => Promise<ReconcileResult> | ReconcileResult)
    | undefined;
  preflight: ((args: unknown, ctx: RemoteJobContext) => Promise<void> | void) | undefined;
  submitTimeout: number;
  pollEvery: number;
  pollTimeout: number;
  admission: AdmissionBudget | undefined;
  circuitBreaker: CircuitBreakerOptions | undefined;
}

/** The option keys of a remote job besides the shared job settings. */
export const REMOTE_OPTION_KEYS = [
  "submit",
  "poll",
  "reconcile",
  "preflight",
  "submitTimeout",
  "pollEvery",
  "pollTimeout",
  "admission",
  "circuitBreaker",
] as const;

/**
 * Checks the remote part of `soniq.remoteJob` options.
 * @throws SoniqError `INVALID_OPTION` for a missing handler, a non-positive duration, a bad
 * admission budget or circuit breaker.
 */
export function remoteSpecOf(options: Record<string, unknown>, job: string): RemoteSpec {
  for (const key of ["submit", "poll"] as const) {
    if (typeof options[key] !== "function") {
      throw new SoniqError("INVALID_OPTION", `remote job ${job}: ${key} must be a function`);
    }
  }
  for (const key of ["reconcile", "preflight"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new SoniqError("INVALID_OPTION", `remote job ${job}: ${key} must be a function`);
    }
  }
  for (const key of ["submitTimeout", "pollEvery", "pollTimeout"] as const) {
    const value = options[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new SoniqError(
        "INVALID_OPTION",
        `remote job ${job}: ${key} is required, in seconds (> 0)`,
      );
    }
  }
  return {
    submit: options.submit as RemoteSpec["submit"],
    poll: options.poll as RemoteSpec["poll"],
    reconcile: options.reconcile as RemoteSpec["reconcile"],
    preflight: options.preflight as RemoteSpec["preflight"],
    submitTimeout: options.submitTimeout as number,
    pollEvery: options.pollEvery as number,
    pollTimeout: options.pollTimeout as number,
    admission:
      options.admission === undefined ? undefined : assertAdmissionBudget(options.admission, job),
    circuitBreaker:
      options.circuitBreaker === undefined
        ? undefined
        : assertCircuitOptions(options.circuitBreaker, job),
  };
}
