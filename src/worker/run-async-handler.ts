/**
 * Runs an async handler on the event loop (shutdown contract, async branch, DESIGN.md §2). Its
 * `job_timeout` aborts `ctx.signal` and ends the run as a timeout (an attempt counted); when the
 * shutdown machine reaches FORCE_TIMEOUT_PATH the signal is aborted with a ShutdownTimeoutError and
 * the handler has until the FORCE_TIMEOUT_PATH instant + `settleSeconds` to unwind: returning in
 * that window is a success, anything else is "released" (NACK'd by the caller). A late result after
 * that is ignored here and fenced out. Which deadline comes first is the machine's decision
 * ({@link watchJobDeadlines}); this executor has no shutdown timer of its own.
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
import { watchJobDeadlines } from "./job-deadline.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

/**
 * @param settleSeconds - `shutdownSettle`, in seconds, counted from the machine's
 *   FORCE_TIMEOUT_PATH instant.
 * @param machine - the worker's shutdown machine: the only source of the job's deadlines.
 * @returns How the run ended; never rejects.
 */
export function runAsyncHandler(
  entry: InFlight,
  definition: JobDefinition<unknown, unknown, unknown>,
  args: unknown,
  log: Logger,
  workerId: string,
  settleSeconds: number,
  machine: ShutdownMachine,
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
    let settleTimer: NodeJS.Timeout | undefined;
    let unwatch: () => void = () => undefined;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      unwatch();
      clearTimeout(settleTimer);
      resolve(outcome);
    };
    unwatch = watchJobDeadlines(machine, definition.timeout, {
      onJobTimeout: () => {
        const error = new JobTimeoutError(definition.timeout);
        controller.abort(error);
        finish({ kind: "timeout", error });
      },
      // FORCE_TIMEOUT_PATH, async branch: shutdown fired first → abort, settle, NACK.
      onForce: () => {
        if (settled || forced) return;
        forced = true;
        controller.abort(new ShutdownTimeoutError());
        const settleEndsAt = (machine.forcedAt ?? machine.now()) + settleSeconds * 1000;
        settleTimer = setTimeout(
          () => finish({ kind: "released" }),
          Math.max(0, settleEndsAt - machine.now()),
        );
      },
    });
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
