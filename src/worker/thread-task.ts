import type { ScheduleContext } from "../jobs/context.js";

/** The message a sync job sends to the worker-thread runner, and what comes back. */
export interface ThreadTask {
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
  };
  /** `Int32Array(1)` stop flag shared with the main thread (see STOP_FLAG). */
  stopFlag: SharedArrayBuffer;
}

/** What the runner returns: the handler's value, or a snooze it asked for. */
export type ThreadOutcome = { kind: "value"; value: unknown } | { kind: "snooze"; seconds: number };
