/**
 * Runs an async handler on the event loop (shutdown contract, async branch, DESIGN.md §2). Its
 * `job_timeout` aborts `ctx.signal` and ends the run as a timeout (an attempt counted); at
 * FORCE_TIMEOUT_PATH `entry.force()` aborts the signal with a ShutdownTimeoutError and gives the
 * handler `settleSeconds` to unwind: returning in that window is a success, anything else is
 * "released" (NACK'd by the caller). A late result after that is ignored here and fenced out.
 */
import {
  type JobContext,
  JobTimeoutError,
  ShutdownTimeoutError,
  scheduleContextOf,
} from "../jobs/context.js";
import type { JobDefinition, JobHandler } from "../jobs/job-definition.js";
import { Snooze } from "../jobs/snooze.js";
import type { Logger } from "../observability/logger.js";
import type { InFlight, Outcome } from "./in-flight.js";

/**
 * @param settleSeconds - `shutdownSettle`, seconds.
 * @returns How the run ended; never rejects.
 */
export function runAsyncHandler(
  entry: InFlight,
  definition: JobDefinition<unknown, unknown, unknown>,
  args: unknown,
  log: Logger,
  workerId: string,
  settleSeconds: number,
): Promise<Outcome> {
  const { job, controller } = entry;
  // ctx.signal is read lazily (LazyAbortController) but stays assignable like a plain property.
  let assignedSignal: AbortSignal | undefined;
  const ctx: JobContext = {
    get signal() {
      return assignedSignal ?? controller.signal;
    },
    set signal(value: AbortSignal) {
      assignedSignal = value;
    },
    jobId: job.id,
    name: job.name,
    attempt: job.attempts + 1,
    maxAttempts: job.maxAttempts,
    queue: job.queue,
    workerId,
    createdAt: job.createdAt,
    scheduledAt: job.scheduledAt,
    logger: log,
    schedule: scheduleContextOf(job.meta),
  };
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    let forced = false;
    let jobTimer: NodeJS.Timeout | undefined;
    let settleTimer: NodeJS.Timeout | undefined;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      entry.force = undefined;
      clearTimeout(jobTimer);
      clearTimeout(settleTimer);
      resolve(outcome);
    };
    if (definition.timeout > 0) {
      jobTimer = setTimeout(() => {
        const error = new JobTimeoutError(definition.timeout);
        controller.abort(error);
        finish({ kind: "timeout", error });
      }, definition.timeout * 1000);
    }
    // FORCE_TIMEOUT_PATH, async branch: shutdown fired first → abort, settle, NACK.
    entry.force = () => {
      if (settled || forced) return;
      forced = true;
      clearTimeout(jobTimer);
      controller.abort(new ShutdownTimeoutError());
      settleTimer = setTimeout(() => finish({ kind: "released" }), settleSeconds * 1000);
    };
    Promise.resolve()
      .then(() => (definition.handler as JobHandler<unknown, unknown>)(args, ctx))
      .then(
        (value) => {
          if (value instanceof Snooze) finish({ kind: "snooze", seconds: value.seconds });
          else finish({ kind: "success", value });
        },
        (error: unknown) => finish(forced ? { kind: "released" } : { kind: "error", error }),
      );
  });
}
