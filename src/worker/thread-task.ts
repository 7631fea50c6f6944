/** The messages the main thread sends to the worker-thread runner, and what comes back. */
import type { ScheduleContext } from "../jobs/context.js";
import type { RateLimitScope } from "../jobs/rate-limited.js";
import type { ThreadErrorRecord } from "./thread-error.js";

/** Run one sync job on a thread. */
export interface ThreadTask {
  kind?: "run";
  /** The handler module, a `file:` URL string. */
  module: string;
  exportName: string;
  args: unknown;
  ctx: {
    jobId: string;
    name: string;
    attempt: number;
    maxAttempts: number;
    queue: string;
    workerId: string;
    /** Milliseconds since the epoch. */
    createdAt: number;
    /** Milliseconds since the epoch. */
    scheduledAt: number;
    /** `ctx.schedule` (a `Date` survives the structured clone). */
    schedule: ScheduleContext | undefined;
    /** `ctx.resume`: the last durable checkpoint, or undefined. */
    resume: unknown;
  };
  /** The claim's token: sent with each checkpoint, which the main thread checks. */
  claimToken: string;
  /** `Int32Array(1)` stop flag shared with the main thread (see STOP_FLAG). */
  stopFlag: SharedArrayBuffer;
  /** The job's progress buffer (jobs/progress.ts), read by the worker's heartbeat. */
  progress: SharedArrayBuffer;
}

/** Load a handler module and check its export, without running it (worker start-up). */
export interface ThreadCheck {
  kind: "check";
  /** The handler module, a `file:` URL string. */
  module: string;
  exportName: string;
}

/**
 * What the runner returns: the handler's value, a snooze it asked for, or what it threw (as a
 * record: see thread-error.ts); or `not_started` when the thread took the task after its
 * `job_timeout` was recorded or the job was cancelled (a thread that is slow to start or to load
 * the handler module): the handler is then never called, so an attempt already recorded as
 * timed out never runs later beside its retry. A check returns `{ kind: "value", value: null }`
 * or the error.
 */
export type ThreadOutcome =
  | { kind: "value"; value: unknown }
  /** `scope`: the handler returned `ctx.rateLimited` (a snooze that pauses its scope). */
  | { kind: "snooze"; seconds: number; scope?: RateLimitScope }
  /** `invalidResult`: the handler returned a value that cannot be sent back (structured clone). */
  | { kind: "error"; error: ThreadErrorRecord; invalidResult?: boolean }
  | { kind: "not_started"; reason: "job_timeout" | "cancelled" };
