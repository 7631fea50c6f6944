/**
 * Runs a sync handler on the worker-thread pool (docs/shutdown.md, "The states": the sync branch).
 * The permit is taken after the claim and outside the job timeout; a job still waiting for one when
 * the shutdown machine reaches FORCE_TIMEOUT_PATH is "released" (NACK'd by the caller).
 * `job_timeout` ends the run as a timeout while the thread keeps its permit until it returns;
 * FORCE_TIMEOUT_PATH only raises the thread's stop flag — a running sync job is never released.
 * Both instants come from the machine ({@link watchJobDeadlines}); this executor has no shutdown
 * timer of its own. `entry.thread` settles when the thread has returned, whatever was recorded. An
 * operator's cancel (`entry.cancel`) raises the stop flag (reason `cancelled`) and the run ends as
 * "cancelled" when the thread returns; a job still waiting for a permit ends as "cancelled" at
 * once.
 */
import {
  JobCancelledError,
  JobTimeoutError,
  ShutdownTimeoutError,
  scheduleContextOf,
} from "../jobs/context.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { newProgressBuffer } from "../jobs/progress.js";
import { STOP_FLAG } from "../jobs/thread-context.js";
import type { LogLines } from "../observability/lazy-child-logger.js";
import { errorText } from "./error-text.js";
import type { InFlight, Outcome } from "./in-flight.js";
import { watchJobDeadlines } from "./job-deadline.js";
import { resumeValue } from "./job-resume.js";
import type { Permits } from "./permits.js";
import type { LateResult } from "./run-async-handler.js";
import type { ShutdownMachine } from "./shutdown-machine.js";
import { ThreadError } from "./thread-error.js";
import type { ThreadPool } from "./thread-pool.js";
import type { ThreadTask } from "./thread-task.js";

/** What the sync executor needs from its worker. */
export interface ThreadRunner {
  workerId: string;
  /** `sync_handler_pool_size` permits. */
  permits: Permits;
  /** The pool, created on first use. */
  pool(): ThreadPool;
  /** A thread started for `jobId`; `thread` settles when it returns. */
  threadStarted(jobId: string, thread: Promise<void>): void;
  /** A thread given to `threadStarted` returned (its permit is already released). */
  threadEnded(thread: Promise<void>): void;
}

/** The job runner's hooks into a sync run. */
export interface SyncRunHooks {
  /**
   * The start gate, after the permit and before the thread starts: false means do not start
   * (FORCE_TIMEOUT_PATH came, or the start mark could not be written); the job is released.
   */
  begin(): boolean | Promise<boolean>;
  /** Told when a timed-out thread's later value or error is discarded. */
  onLate(late: LateResult): void;
}

/**
 * @param machine - the worker's shutdown machine: the only source of the job's deadlines.
 * @param hooks - the start gate and the late-result report; default: always start, report nothing.
 * @returns How the run ended (the thread may still be running after a timeout); never rejects.
 */
export async function runSyncHandler(
  entry: InFlight,
  definition: JobDefinition<unknown, unknown, unknown>,
  args: unknown,
  log: LogLines,
  runner: ThreadRunner,
  machine: ShutdownMachine,
  hooks: SyncRunHooks = { begin: async () => true, onLate: () => undefined },
): Promise<Outcome> {
  const { job } = entry;
  // Claimed-not-yet-running: async-cancellable at FORCE_TIMEOUT_PATH (the machine says when).
  const waiting = new AbortController();
  const unwatchWait = watchJobDeadlines(machine, 0, {
    onJobTimeout: () => undefined,
    onForce: () => waiting.abort(new ShutdownTimeoutError()),
  });
  const cancelWait = () => waiting.abort(new JobCancelledError());
  entry.cancel.signal.addEventListener("abort", cancelWait, { once: true });
  try {
    if (entry.cancel.signal.aborted) throw new JobCancelledError();
    await runner.permits.acquire(waiting.signal);
  } catch {
    if (entry.cancel.signal.aborted) {
      log.info("cancelled while waiting for a thread permit");
      return { kind: "cancelled" };
    }
    log.info("claimed but still waiting for a thread permit at the deadline: releasing it");
    return { kind: "released" };
  } finally {
    unwatchWait();
    entry.cancel.signal.removeEventListener("abort", cancelWait);
  }
  if (!(await hooks.begin())) {
    runner.permits.release();
    return { kind: "released" };
  }
  const flag = new Int32Array(new SharedArrayBuffer(4));
  entry.progressBuffer = newProgressBuffer();
  const task: ThreadTask = {
    module: definition.handlerModule as string,
    exportName: definition.exportName,
    args,
    ctx: {
      jobId: job.id,
      name: job.name,
      attempt: job.attempts + 1,
      maxAttempts: job.maxAttempts,
      queue: job.queue,
      workerId: runner.workerId,
      createdAt: job.createdAt.getTime(),
      scheduledAt: job.scheduledAt.getTime(),
      schedule: scheduleContextOf(job.meta),
      resume: resumeValue(entry.resumeState),
    },
    claimToken: job.claimToken,
    stopFlag: flag.buffer as SharedArrayBuffer,
    progress: entry.progressBuffer,
  };
  let running: ReturnType<ThreadPool["run"]>;
  try {
    running = runner.pool().run(task);
  } catch (err) {
    runner.permits.release();
    return { kind: "error", error: err };
  }
  const thread = running.then(
    () => undefined,
    () => undefined,
  );
  entry.thread = thread;
  runner.threadStarted(job.id, thread);
  void thread.then(() => {
    runner.permits.release();
    runner.threadEnded(thread);
  });
  // The stop flag is raised at FORCE_TIMEOUT_PATH even after a job_timeout was recorded: the
  // thread runs on until it returns, and it may read the flag.
  const unwatchFlag = watchJobDeadlines(machine, 0, {
    onJobTimeout: () => undefined,
    onForce: () => Atomics.store(flag, 0, STOP_FLAG.shutdown_timeout),
  });
  void thread.then(unwatchFlag);
  // An operator's cancel raises the stop flag; the run is recorded cancelled when the thread
  // returns, whatever it returns (never NACK'd, as the sync branch of the contract says).
  let cancelled = false;
  const onCancel = () => {
    cancelled = true;
    Atomics.store(flag, 0, STOP_FLAG.cancelled);
  };
  if (entry.cancel.signal.aborted) onCancel();
  else entry.cancel.signal.addEventListener("abort", onCancel, { once: true });
  void thread.then(() => entry.cancel.signal.removeEventListener("abort", onCancel));
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    let unwatch: () => void = () => undefined;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      unwatch();
      resolve(cancelled && outcome.kind !== "timeout" ? { kind: "cancelled" } : outcome);
    };
    unwatch = watchJobDeadlines(machine, definition.timeout, {
      onJobTimeout: () => {
        Atomics.store(flag, 0, STOP_FLAG.job_timeout);
        log.warn(
          { timeout_s: definition.timeout },
          "job_timeout on a sync handler: recorded as a failure; the thread keeps running and holds its permit until it returns",
        );
        finish({ kind: "timeout", error: new JobTimeoutError(definition.timeout) });
      },
      // Sync branch: never released once running; the flag above is the whole of it.
      onForce: () => undefined,
    });
    running.then(
      (result) => {
        if (result.kind === "not_started") {
          // After a recorded job_timeout this changes nothing; after a cancel the run ends
          // cancelled. Either way the handler never ran.
          log.info(
            { reason: result.reason },
            "the sync handler was not started: its thread took the job after the run had ended",
          );
          finish({ kind: "cancelled" });
          return;
        }
        if (result.kind === "error") {
          const error = new ThreadError(result.error);
          if (settled) {
            log.warn(
              { err: errorText(error, 300) },
              "a timed-out sync handler failed later; ignored",
            );
            hooks.onLate({ after: "job_timeout", settled: "threw", error: errorText(error, 300) });
          }
          finish(
            result.invalidResult === true
              ? { kind: "error", error, invalidResult: true }
              : { kind: "error", error },
          );
          return;
        }
        if (settled) {
          log.warn(
            "a sync handler returned after its job_timeout was recorded; its result is discarded",
          );
          hooks.onLate({ after: "job_timeout", settled: "returned" });
        }
        finish(
          result.kind === "snooze"
            ? result.scope === undefined
              ? { kind: "snooze", seconds: result.seconds }
              : { kind: "snooze", seconds: result.seconds, scope: result.scope }
            : { kind: "success", value: result.value },
        );
      },
      (error: unknown) => {
        if (settled) {
          log.warn(
            { err: errorText(error, 300) },
            "a timed-out sync handler failed later; ignored",
          );
          hooks.onLate({ after: "job_timeout", settled: "threw", error: errorText(error, 300) });
        }
        finish({ kind: "error", error });
      },
    );
  });
}
