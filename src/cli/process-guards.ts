/**
 * `soniq worker`'s process-wide guards against handler mistakes (docs/reliability.md, "Handler
 * mistakes"): an unhandled promise rejection is logged — with the job whose code created the
 * promise, when job-scope.ts knows it — and the process goes on (Node's default would end it with
 * code 1, the code of the deadline path); an uncaught exception leaves the process in an undefined
 * state (Node's guidance), so after a synchronous log line it makes one bounded last write — the
 * worker row marked `stopped`, so crash recovery requeues its claimed rows at the next pass (the
 * leader's within seconds, or the next worker's start) instead of after `heartbeatTimeout` — and
 * exits with its own code, {@link EXIT.UNCAUGHT_EXCEPTION}, leaving its claimed rows `processing`.
 */
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "../worker/error-text.js";
import { currentJobScope, wantJobScopes } from "../worker/job-scope.js";
import { EXIT } from "./exit-codes.js";

/** The job fields of the scope the current code runs in (empty outside any job). */
function jobFields(): { job_id?: string; job_name?: string; worker_id?: string } {
  const scope = currentJobScope();
  return scope ? { job_id: scope.jobId, job_name: scope.jobName, worker_id: scope.workerId } : {};
}

/**
 * Longest wait, in milliseconds, for the last write before exit 4 (the worker row marked
 * `stopped`): a database that stopped answering must not keep a broken process alive.
 */
export const LAST_WRITE_BOUND_MS = 2000;

/** Options of {@link installProcessGuards}. */
export interface ProcessGuardOptions {
  /** Ends the process (default `process.exit`); tests pass their own. */
  exit?: (code: number) => void;
  /**
   * The one write made before exit 4: marks the worker row `stopped` (`WorkerStore
   * .workerMarkStopped`). Best effort: a rejection is logged, and the process exits after
   * `lastWriteBoundMs` whether or not it settled.
   */
  markStopped?: () => Promise<void>;
  /** Milliseconds `markStopped` may take. Default {@link LAST_WRITE_BOUND_MS}. */
  lastWriteBoundMs?: number;
}

/**
 * Installs the guards on `process` (once per process).
 * @returns Removes them.
 */
export function installProcessGuards(
  logger: Logger,
  events: EventBus<SoniqEventMap>,
  options: ProcessGuardOptions = {},
): () => void {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let exiting = false;
  const onRejection = (reason: unknown) => {
    const fields = { ...jobFields(), err: errorText(reason, 1000) };
    logger.error(
      fields,
      "unhandled promise rejection (a promise rejected and nobody awaited or caught it): logged; the worker goes on — await or catch it in the handler",
    );
    events.emit("unhandled_rejection", { ...jobFields(), error: errorText(reason, 500) });
  };
  const onException = (err: unknown) => {
    // The process is in an undefined state: a synchronous log line, then only the bounded
    // stopped mark (a second exception meanwhile changes nothing: the exit is already on its way).
    if (exiting) return;
    exiting = true;
    const markStopped = options.markStopped;
    try {
      logger.fatal(
        { ...jobFields(), err: errorText(err, 2000), exit_code: EXIT.UNCAUGHT_EXCEPTION },
        `uncaught exception: the process is in an undefined state and exits now with code ${EXIT.UNCAUGHT_EXCEPTION}; its worker row is marked stopped and its claimed jobs stay processing until crash recovery requeues them (run again)`,
      );
    } finally {
      if (!markStopped) exit(EXIT.UNCAUGHT_EXCEPTION);
    }
    if (!markStopped) return;
    const timer = setTimeout(() => {
      logger.error(
        { bound_ms: options.lastWriteBoundMs ?? LAST_WRITE_BOUND_MS },
        "marking the worker row stopped took too long; exiting without it (its jobs are recovered once its heartbeat is stale)",
      );
      exit(EXIT.UNCAUGHT_EXCEPTION);
    }, options.lastWriteBoundMs ?? LAST_WRITE_BOUND_MS);
    let write: Promise<void>;
    try {
      write = markStopped();
    } catch (cause) {
      write = Promise.reject(cause);
    }
    write.then(
      () => {
        clearTimeout(timer);
        exit(EXIT.UNCAUGHT_EXCEPTION);
      },
      (cause: unknown) => {
        clearTimeout(timer);
        logger.error(
          { err: errorText(cause, 500) },
          "marking the worker row stopped failed; exiting without it (its jobs are recovered once its heartbeat is stale)",
        );
        exit(EXIT.UNCAUGHT_EXCEPTION);
      },
    );
  };
  // The guards name the job behind a rejection: ask for job scopes (job-scope.ts) while installed.
  const unwantScopes = wantJobScopes();
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  return () => {
    unwantScopes();
    process.off("unhandledRejection", onRejection);
    process.off("uncaughtException", onException);
  };
}
