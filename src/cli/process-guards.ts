/**
 * `soniq worker`'s process-wide guards against handler mistakes (docs/reliability.md, "Handler
 * mistakes"): an unhandled promise rejection is logged — with the job whose code created the
 * promise, when job-scope.ts knows it — and the process goes on (Node's default would end it with
 * code 1, the code of the deadline path); an uncaught exception leaves the process in an undefined
 * state (Node's guidance), so after a synchronous log line it exits with its own code,
 * {@link EXIT.UNCAUGHT_EXCEPTION}, leaving its claimed rows `processing` for crash recovery.
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
 * Installs the guards on `process` (once per process).
 * @param exit - ends the process (default `process.exit`); tests pass their own.
 * @returns Removes them.
 */
export function installProcessGuards(
  logger: Logger,
  events: EventBus<SoniqEventMap>,
  exit: (code: number) => void = (code) => process.exit(code),
): () => void {
  const onRejection = (reason: unknown) => {
    const fields = { ...jobFields(), err: errorText(reason, 1000) };
    logger.error(
      fields,
      "unhandled promise rejection (a promise rejected and nobody awaited or caught it): logged; the worker goes on — await or catch it in the handler",
    );
    events.emit("unhandled_rejection", { ...jobFields(), error: errorText(reason, 500) });
  };
  const onException = (err: unknown) => {
    // The process is in an undefined state: only synchronous work from here on.
    try {
      logger.fatal(
        { ...jobFields(), err: errorText(err, 2000), exit_code: EXIT.UNCAUGHT_EXCEPTION },
        `uncaught exception: the process is in an undefined state and exits now with code ${EXIT.UNCAUGHT_EXCEPTION}; its claimed jobs stay processing and are recovered (run again) by crash recovery`,
      );
    } finally {
      exit(EXIT.UNCAUGHT_EXCEPTION);
    }
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
