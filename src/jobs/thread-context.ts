import type { DependencyResult, ScheduleContext } from "./context.js";
import type { RateLimited, RateLimitedOptions } from "./rate-limited.js";

/** Why a sync handler is asked to stop. */
export type StopReason = "job_timeout" | "shutdown_timeout" | "cancelled";

/**
 * What a sync handler (running on a worker thread) receives besides its arguments. There is no
 * AbortSignal across threads; poll {@link ThreadJobContext.stopRequested} between units of work.
 * Nothing forces the thread to stop: Soniq waits for it to return (shutdown contract, sync branch).
 */
export interface ThreadJobContext {
  jobId: string;
  name: string;
  /** This run's attempt number, 1-based. */
  attempt: number;
  maxAttempts: number;
  queue: string;
  workerId: string;
  createdAt: Date;
  scheduledAt: Date;
  /** Set when a schedule enqueued the job (docs/schedules.md); undefined otherwise. */
  schedule: ScheduleContext | undefined;
  /**
   * True once the worker asks the handler to stop (its `job_timeout` fired, the shutdown deadline
   * passed, or an operator cancelled the job).
   */
  stopRequested(): boolean;
  /** Why the stop was requested, or null. */
  stopReason(): StopReason | null;
  /**
   * Reports progress (0..1, optional message cut to 1000 bytes); the worker writes the latest
   * report with its next heartbeat.
   * @throws SoniqError `INVALID_ARGS` for a fraction outside 0..1.
   */
  progress(fraction: number, message?: string): void;
  /**
   * Back-pressure from a downstream: return its value to put the job back without spending an
   * attempt and pause the scope on every worker (see `JobContext.rateLimited`, docs/flow-control.md).
   * `retryAfterMs` in **milliseconds**.
   * @throws SoniqError `INVALID_OPTION` for a delay outside 0..86,400,000 ms or a bad scope.
   */
  rateLimited(retryAfterMs: number, options?: RateLimitedOptions): RateLimited;
  /**
   * The state of the job's last durable checkpoint, or undefined on a fresh start (as
   * `JobContext.resume`; docs/checkpoints.md).
   */
  resume: unknown;
  /**
   * Stores `state` (plain JSON, at most `maxPayloadBytes` bytes) as the job's checkpoint and
   * **blocks the thread until it is durable** (the worker's main thread writes it, fenced by this
   * claim; docs/checkpoints.md, "Thread (sync) handlers").
   * @throws SoniqError `INVALID_PAYLOAD` (not plain JSON, or too large; nothing written),
   *   `CLAIM_LOST` (this worker no longer holds the claim: stop), or a database error's code.
   */
  checkpoint(state: unknown): void;
  /**
   * The job's dependencies (workflows: `after`, `soniq.flow`, batch callbacks) as
   * `[{ id, state, result }]` ordered by id, as `JobContext.dependencies` returns them; an empty
   * list for a job without dependencies. **Blocks the thread** for one read, made by the worker's
   * main thread (docs/workflows.md, "Reading dependencies in a handler").
   * @throws SoniqError `CLAIM_LOST` (this worker no longer holds the claim), a database error's
   *   code, or `UNEXPECTED` when the worker did not answer within 120 s.
   */
  dependencies(): DependencyResult[];
}

/** Values of the shared stop flag (an `Int32Array` over a `SharedArrayBuffer`, index 0). */
export const STOP_FLAG = { none: 0, job_timeout: 1, shutdown_timeout: 2, cancelled: 3 } as const;
