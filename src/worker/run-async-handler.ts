/**
 * Runs an async handler on the event loop (shutdown contract, async branch, DESIGN.md §2). Its
 * `job_timeout` aborts `ctx.signal` and ends the run as a timeout (an attempt counted); when the
 * shutdown machine reaches FORCE_TIMEOUT_PATH the signal is aborted with a ShutdownTimeoutError and
 * the handler has until the FORCE_TIMEOUT_PATH instant + `settleSeconds` to unwind: returning in
 * that window is a success, anything else is "released" (NACK'd by the caller). A late result after
 * that is ignored here and fenced out. An operator's cancel (`entry.cancel`) aborts the signal with
 * a JobCancelledError and ends the run as "cancelled" when the handler settles, or after
 * `settleSeconds` if it does not. Which deadline comes first is the machine's decision
 * ({@link watchJobDeadlines}); this executor has no shutdown timer of its own.
 */
import {
  JobCancelledError,
  type JobContext,
  JobTimeoutError,
  ShutdownTimeoutError,
  scheduleContextOf,
} from "../jobs/context.js";
import type { JobDefinition, JobHandler } from "../jobs/job-definition.js";
import { checkProgress } from "../jobs/progress.js";
import { Snooze } from "../jobs/snooze.js";
import type { JobLogger } from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import type { InFlight, Outcome } from "./in-flight.js";
import { watchJobDeadlines } from "./job-deadline.js";
import { runInJobScope } from "./job-scope.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/** An abandoned handler settled after its run was recorded; its value or error is discarded. */
export interface LateResult {
  /** What the run had been recorded as. */
  after: "shutdown_timeout" | "job_timeout";
  settled: "returned" | "threw";
  /** The error's text (at most 300 characters) when it threw. */
  error?: string;
}

/**
 * The handler runs inside the job's scope (job-scope.ts), so a rejection it leaves unhandled can be
 * traced to the job. An error it throws after its abort is logged (the run is NACK'd); a value or
 * error that arrives after the run was recorded is logged and reported to `onLate`, never written.
 * @param settleSeconds - `shutdownSettle`, in seconds, counted from the machine's
 *   FORCE_TIMEOUT_PATH instant.
 * @param machine - the worker's shutdown machine: the only source of the job's deadlines.
 * @param onLate - told of a late value or error (for the `late_result_discarded` event).
 * @returns How the run ended; never rejects.
 */
export function runAsyncHandler(
  entry: InFlight,
  definition: JobDefinition<unknown, unknown, unknown>,
  args: unknown,
  log: JobLogger | Logger,
  workerId: string,
  settleSeconds: number,
  machine: ShutdownMachine,
  onLate: (late: LateResult) => void = () => undefined,
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
    get logger() {
      // Created only when the handler reads it (lazy-child-logger.ts).
      return "logger" in log ? log.logger : log;
    },
    progress: (fraction, message) => {
      // Kept for the next heartbeat: no write per call.
      entry.progress = checkProgress(fraction, message);
      entry.progressDirty = true;
    },
    schedule: scheduleContextOf(job.meta),
  };
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    let recordedAs: LateResult["after"] | undefined;
    let forced = false;
    let cancelled = false;
    let settleTimer: NodeJS.Timeout | undefined;
    let unwatch: () => void = () => undefined;
    let unwatchCancel: () => void = () => undefined;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      unwatch();
      unwatchCancel();
      clearTimeout(settleTimer);
      // Once cancelled, whatever the handler does ends as cancelled (a NACK included: the operator
      // asked for the job to stop, not to run again).
      resolve(cancelled ? { kind: "cancelled" } : outcome);
    };
    // An operator's cancel: abort the signal with its own reason; the handler has the settle
    // window to unwind, then the run is recorded cancelled (a late result is fenced out).
    const onCancel = () => {
      if (settled || cancelled) return;
      cancelled = true;
      controller.abort(new JobCancelledError());
      if (settleTimer === undefined) {
        settleTimer = setTimeout(() => finish({ kind: "cancelled" }), settleSeconds * 1000);
      }
    };
    if (entry.cancel.aborted) onCancel();
    else unwatchCancel = entry.cancel.onAbort(onCancel);
    unwatch = watchJobDeadlines(machine, definition.timeout, {
      onJobTimeout: () => {
        const error = new JobTimeoutError(definition.timeout);
        controller.abort(error);
        recordedAs = "job_timeout";
        finish({ kind: "timeout", error });
      },
      // FORCE_TIMEOUT_PATH, async branch: shutdown fired first → abort, settle, NACK.
      onForce: () => {
        if (settled || forced) return;
        forced = true;
        controller.abort(new ShutdownTimeoutError());
        const settleEndsAt = (machine.forcedAt ?? machine.now()) + settleSeconds * 1000;
        clearTimeout(settleTimer);
        settleTimer = setTimeout(
          () => {
            if (!settled) {
              recordedAs = "shutdown_timeout";
              log.warn(
                { settle_s: settleSeconds },
                "the aborted handler is still running after the settle window: NACK'd; whatever it does later is discarded",
              );
            }
            finish({ kind: "released" });
          },
          Math.max(0, settleEndsAt - machine.now()),
        );
      },
    });
    const late = (result: Omit<LateResult, "after">) => {
      const after = recordedAs ?? "shutdown_timeout";
      log.warn(
        { after, settled: result.settled, err: result.error },
        `an abandoned handler ${result.settled} after its run was recorded (${after}): discarded, nothing written`,
      );
      onLate({ after, ...result });
    };
    const onValue = (value: unknown) => {
      if (settled) return late({ settled: "returned" });
      if (value instanceof Snooze) finish({ kind: "snooze", seconds: value.seconds });
      else finish({ kind: "success", value });
    };
    const onError = (error: unknown) => {
      if (settled) return late({ settled: "threw", error: errorText(error, 300) });
      if (forced) {
        log.warn(
          { err: errorText(error, 300), reason: "shutdown_timeout" },
          "the handler threw after its abort: NACK'd (no attempt counted)",
        );
        finish({ kind: "released" });
      } else finish({ kind: "error", error });
    };
    // Straight-line: the handler is called here; only a thenable it returns is waited on (one
    // settlement per job, no extra promise hops around it).
    let result: unknown;
    try {
      result = runInJobScope(workerId, job, () =>
        (definition.handler as JobHandler<unknown, unknown>)(args, ctx),
      );
    } catch (error) {
      onError(error);
      return;
    }
    if (isThenable(result)) result.then(onValue, onError);
    else onValue(result);
  });
}
