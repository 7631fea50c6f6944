/**
 * Every error Soniq throws on purpose is a {@link SoniqError} with a stable `code`, so callers
 * can branch on `err.code` instead of parsing messages.
 */

/** The stable error codes. Each is documented where it is thrown. */
export type SoniqErrorCode =
  /** An option or `SONIQ_*` variable is unknown, mistyped or out of range. */
  | "INVALID_OPTION"
  /** A job name is not dotted lower-case (`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`). */
  | "INVALID_JOB_NAME"
  /** Two job definitions in one instance use the same name. */
  | "DUPLICATE_JOB"
  /** Enqueue by a name that no job definition registered. */
  | "UNKNOWN_JOB"
  /** Job arguments failed the job's argument schema. */
  | "INVALID_ARGS"
  /** Arguments, a result or an error do not round-trip through JSON, or exceed the size limit. */
  | "INVALID_PAYLOAD"
  /** An enqueue option (delay, runAt, priority, queue, dedupKey) is invalid. */
  | "INVALID_ENQUEUE_OPTION"
  /** The database URL names no backend Soniq knows. */
  | "INVALID_DATABASE_URL"
  /** The feature needs a backend the instance does not use (e.g. `connection` off PostgreSQL). */
  | "UNSUPPORTED"
  /** The schema is missing or older than this version of Soniq: run `soniq setup`. */
  | "SCHEMA_NOT_READY"
  /**
   * Workflows: a dependency (`after`, a flow's children) names no job the store has — never
   * enqueued, or finished and no longer kept (docs/workflows.md). Nothing was written.
   */
  | "UNKNOWN_DEPENDENCY"
  /** Workflows: the dependencies given form a cycle (a job would wait for itself). */
  | "DEPENDENCY_CYCLE"
  /** Replay would create a second live job with the same dedup key. */
  | "DEDUP_CONFLICT"
  /** The job (or dead-letter entry) does not exist. */
  | "NOT_FOUND"
  /** The job is not in a state that allows the operation (e.g. cancelling a running job). */
  | "INVALID_STATE"
  /** The backend was closed; no further calls are accepted. */
  | "CLOSED"
  /** A worker refused to start (no registered jobs, already started, ...). */
  | "WORKER_START"
  /** The user module given to `soniq worker` could not be loaded or exports no Soniq instance. */
  | "MODULE_LOAD"
  /** A bulk action's `expectedCount` differs from what its filter matches now (nothing changed). */
  | "COUNT_MISMATCH"
  /**
   * Input that cannot be read or stored: for the CLI a file that cannot be opened, text that is
   * not valid JSON, a bad flag value; for any caller on PostgreSQL, text holding U+0000 (NUL) given
   * as an id, a name or a key (PostgreSQL text cannot hold it).
   */
  | "INVALID_INPUT"
  /**
   * The database server cannot be reached (connection refused, unknown host, timeout), or the
   * SQLite file (named in the message) cannot be opened or written: a read-only file, directory or
   * file system, or missing permissions.
   */
  | "DATABASE_UNREACHABLE"
  /** The server answered but the database named in the URL does not exist. */
  | "DATABASE_NOT_FOUND"
  /** The server refused the role or its password. */
  | "DATABASE_AUTH"
  /** The SQLite path names a file that is not a SQLite database. */
  | "NOT_A_DATABASE"
  /** A file the command was given (a manifest, an output directory) does not exist. */
  | "FILE_NOT_FOUND"
  /** The database reported an error Soniq has no more specific code for (its SQLSTATE in `details`). */
  | "DATABASE_ERROR"
  /** Anything else: a bug or an error from outside Soniq (the CLI reports it with this code). */
  | "UNEXPECTED"
  /** A remote job's handler returned something unusable (e.g. `accepted` without a task id). */
  | "INVALID_RESULT"
  /** A remote submission cannot move between these phases (src/backends/contract/phases.ts). */
  | "ILLEGAL_PHASE"
  /** A submission phase that Soniq does not know. */
  | "UNKNOWN_PHASE"
  /**
   * A schedule definition is invalid: a bad cron expression, an unknown time zone, `every` below
   * 1 second, bad bounds or policies, or a schedule id that is not dotted lower-case.
   */
  | "INVALID_SCHEDULE"
  /** Two schedule definitions in one instance use the same id. */
  | "DUPLICATE_SCHEDULE"
  /**
   * `soniq/testing`: a drain ran its bound of jobs (`maxJobs`) and jobs were still due (a handler
   * that keeps enqueuing, or a bound set too low).
   */
  | "DRAIN_LIMIT"
  /** `waitFor`: the job ended in the dead-letter queue (its last error is the message). */
  | "JOB_FAILED"
  /** `waitFor`: the job was cancelled. */
  | "JOB_CANCELLED"
  /** `waitFor`: the job did not finish within the wait's `timeout`. */
  | "WAIT_TIMEOUT"
  /**
   * `ctx.checkpoint` / `ctx.step` could not write: this worker no longer holds the job's claim
   * (recovered, cancelled or finished elsewhere). The handler's `ctx.signal` is aborted with it.
   */
  | "CLAIM_LOST"
  /** `ctx.step` was called twice with one name in one attempt (names are unique per job). */
  | "DUPLICATE_STEP"
  /**
   * An effect step (`ctx.step(name, fn, { effect: true })`) was running when an earlier attempt
   * ended: its outcome is unknown, so the job is frozen for an operator (docs/checkpoints.md).
   */
  | "STEP_OUTCOME_UNKNOWN"
  /** `waitFor`: the wait's `signal` was aborted (its reason is the error's `cause`). */
  | "WAIT_ABORTED";

/**
 * Marks a SoniqError across copies of this module: a job module the CLI loads through tsx's
 * CommonJS hook gets its own copy of Soniq, whose errors are not `instanceof` this class.
 */
const SONIQ_ERROR = Symbol.for("soniq.SoniqError");

/** An error raised by Soniq on purpose, carrying a stable {@link SoniqErrorCode}. */
export class SoniqError extends Error {
  /** Stable machine-readable code. */
  readonly code: SoniqErrorCode;
  /** Optional structured details (e.g. the failing option path). */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: SoniqErrorCode,
    message: string,
    options?: { cause?: unknown; details?: Record<string, unknown> },
  ) {
    super(
      `${code}: ${message}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "SoniqError";
    Object.defineProperty(this, SONIQ_ERROR, { value: true });
    this.code = code;
    this.details = options?.details;
  }
}

/** True when `err` is a {@link SoniqError}, optionally with the given code. */
export function isSoniqError(err: unknown, code?: SoniqErrorCode): err is SoniqError {
  const soniqError =
    err instanceof SoniqError ||
    (typeof err === "object" &&
      err !== null &&
      (err as { [SONIQ_ERROR]?: unknown })[SONIQ_ERROR] === true);
  return soniqError && (code === undefined || (err as SoniqError).code === code);
}
