/**
 * Runs an async handler on the event loop (docs/shutdown.md, "The states": the async branch). Its
 * `job_timeout` aborts `ctx.signal` and ends the run as a timeout (an attempt counted); when the
 * shutdown machine reaches FORCE_TIMEOUT_PATH the signal is aborted with a ShutdownTimeoutError and
 * the handler has until the FORCE_TIMEOUT_PATH instant + `settleSeconds` to unwind: returning in
 * that window is a success, anything else is "released" (NACK'd by the caller). A late result after
 * that is ignored here and fenced out. An operator's cancel (`entry.cancel`) aborts the signal with
 * a JobCancelledError and ends the run as "cancelled" when the handler settles, or after
 * `settleSeconds` if it does not. Which deadline comes first is the machine's decision
 * ({@link watchJobDeadlines}); this executor has no shutdown timer of its own.
 */
import type { DependencyReader } from "../jobs/context.js";
import { JobCancelledError, JobTimeoutError, ShutdownTimeoutError } from "../jobs/context.js";
import type { JobDefinition, JobHandler } from "../jobs/job-definition.js";
import { RateLimited } from "../jobs/rate-limited.js";
import { Snooze } from "../jobs/snooze.js";
import type { JobLogger } from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import { AsyncJobContext } from "./async-job-context.js";
import { errorText } from "./error-text.js";
import type { InFlight, Outcome } from "./in-flight.js";
import { type JobDeadlineHandlers, watchJobDeadlines } from "./job-deadline.js";
import type { ResumeDeps } from "./job-resume.js";
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

/** Does nothing (the initial unwatch functions). */
function noop(): void {}

/**
 * One run's state and its reactions (a class, not a dozen closures per job: this is the worker's
 * hot path). Its `onJobTimeout`/`onForce` are the deadline watch's handlers.
 */
class AsyncRun implements JobDeadlineHandlers {
  private settled = false;
  private recordedAs: LateResult["after"] | undefined;
  private forced = false;
  private cancelled = false;
  private settleTimer: NodeJS.Timeout | undefined;
  unwatch: () => void = noop;
  /** Set when an operator's cancel is watched (entry.cancel). */
  cancelWatch: (() => void) | undefined;

  constructor(
    private readonly resolve: (outcome: Outcome) => void,
    private readonly entry: InFlight,
    private readonly timeoutSeconds: number,
    private readonly log: JobLogger | Logger,
    private readonly settleSeconds: number,
    private readonly machine: ShutdownMachine,
    private readonly onLate: (late: LateResult) => void,
  ) {}

  finish(outcome: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    this.unwatch();
    if (this.cancelWatch) this.entry.cancel.offAbort(this.cancelWatch);
    clearTimeout(this.settleTimer);
    // Once cancelled, whatever the handler does ends as cancelled (a NACK included: the operator
    // asked for the job to stop, not to run again). An effect step whose outcome is unknown
    // freezes the job, whatever the handler did after (job-resume.ts).
    const frozen = this.entry.resume?.frozenStep;
    if (this.cancelled) this.resolve({ kind: "cancelled" });
    else if (frozen !== undefined) {
      this.resolve({
        kind: "frozen",
        step: frozen,
        steps: this.entry.resume?.frozenStepsText() ?? "{}",
      });
    } else this.resolve(outcome);
  }

  /**
   * An operator's cancel: abort the signal with its own reason; the handler has the settle
   * window to unwind, then the run is recorded cancelled (a late result is fenced out).
   */
  onCancel(): void {
    if (this.settled || this.cancelled) return;
    this.cancelled = true;
    this.entry.controller.abort(new JobCancelledError());
    if (this.settleTimer === undefined) {
      this.settleTimer = setTimeout(
        () => this.finish({ kind: "cancelled" }),
        this.settleSeconds * 1000,
      );
    }
  }

  onJobTimeout(): void {
    const error = new JobTimeoutError(this.timeoutSeconds);
    this.entry.controller.abort(error);
    this.recordedAs = "job_timeout";
    this.finish({ kind: "timeout", error });
  }

  /** FORCE_TIMEOUT_PATH, async branch: shutdown fired first → abort, settle, NACK. */
  onForce(): void {
    if (this.settled || this.forced) return;
    this.forced = true;
    this.entry.controller.abort(new ShutdownTimeoutError());
    const { machine, settleSeconds } = this;
    const settleEndsAt = (machine.forcedAt ?? machine.now()) + settleSeconds * 1000;
    clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(
      () => {
        if (!this.settled) {
          this.recordedAs = "shutdown_timeout";
          this.log.warn(
            { settle_s: settleSeconds },
            "the aborted handler is still running after the settle window: NACK'd; whatever it does later is discarded",
          );
        }
        this.finish({ kind: "released" });
      },
      Math.max(0, settleEndsAt - machine.now()),
    );
  }

  private late(result: Omit<LateResult, "after">): void {
    const after = this.recordedAs ?? "shutdown_timeout";
    this.log.warn(
      { after, settled: result.settled, err: result.error },
      `an abandoned handler ${result.settled} after its run was recorded (${after}): discarded, nothing written`,
    );
    this.onLate({ after, ...result });
  }

  onValue(value: unknown): void {
    if (this.settled) this.late({ settled: "returned" });
    else if (value instanceof Snooze) this.finish({ kind: "snooze", seconds: value.seconds });
    else if (value instanceof RateLimited) {
      this.finish({ kind: "snooze", seconds: value.retryAfterMs / 1000, scope: value.scope });
    } else this.finish({ kind: "success", value });
  }

  onError(error: unknown): void {
    if (this.settled) this.late({ settled: "threw", error: errorText(error, 300) });
    else if (this.forced) {
      this.log.warn(
        { err: errorText(error, 300), reason: "shutdown_timeout" },
        "the handler threw after its abort: NACK'd (no attempt counted)",
      );
      this.finish({ kind: "released" });
    } else this.finish({ kind: "error", error });
  }
}

/**
 * The handler runs inside the job's scope (job-scope.ts), so a rejection it leaves unhandled can be
 * traced to the job. An error it throws after its abort is logged (the run is NACK'd); a value or
 * error that arrives after the run was recorded is logged and reported to `onLate`, never written.
 * @param settleSeconds - `shutdownSettle`, in seconds, counted from the machine's
 *   FORCE_TIMEOUT_PATH instant.
 * @param machine - the worker's shutdown machine: the only source of the job's deadlines.
 * @param onLate - told of a late value or error (for the `late_result_discarded` event).
 * @param resumeDeps - what `ctx.checkpoint` and `ctx.step` write with (job-resume.ts).
 * @param dependencies - reads the job's dependencies for `ctx.dependencies()` (workflows).
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
  onLate: (late: LateResult) => void = noop,
  resumeDeps?: ResumeDeps,
  dependencies?: DependencyReader,
): Promise<Outcome> {
  const ctx = new AsyncJobContext(entry, log, workerId, resumeDeps, dependencies);
  return new Promise<Outcome>((resolve) => {
    const run = new AsyncRun(
      resolve,
      entry,
      definition.timeout,
      log,
      settleSeconds,
      machine,
      onLate,
    );
    if (entry.cancel.aborted) run.onCancel();
    else {
      run.cancelWatch = () => run.onCancel();
      entry.cancel.onAbort(run.cancelWatch);
    }
    run.unwatch = watchJobDeadlines(machine, definition.timeout, run);
    // Straight-line: the handler is called here; only a thenable it returns is waited on (one
    // settlement per job, no extra promise hops around it).
    let result: unknown;
    try {
      result = runInJobScope(workerId, entry.job, () =>
        (definition.handler as JobHandler<unknown, unknown>)(args, ctx),
      );
    } catch (error) {
      run.onError(error);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (value) => run.onValue(value),
        (error: unknown) => run.onError(error),
      );
    } else run.onValue(result);
  });
}
