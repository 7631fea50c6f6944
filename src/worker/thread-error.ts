/**
 * Carries an error thrown on a worker thread to the main thread with its name, message, stack and
 * code intact. Structured cloning keeps only the message of an `Error` subclass (its name becomes
 * "Error", its own properties are dropped) and turns some errors (tsx's `TransformError`) into bare
 * objects, so the runner sends a plain record and the main thread rebuilds a {@link ThreadError}.
 */
import { errorText } from "./error-text.js";

/** An error as it crosses from a worker thread: plain strings only. */
export interface ThreadErrorRecord {
  name: string;
  message: string;
  /** The stack as the thread saw it (the cause chain appended), or the text of a non-Error. */
  stack: string;
  /** The error's `code` (e.g. `ERR_MODULE_NOT_FOUND`, `MODULE_LOAD`), when it had one. */
  code?: string;
}

function read(value: unknown, key: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/**
 * Records `error` (any thrown value) for the trip to the main thread. Total: never throws.
 * @param error - what the handler or the module load threw.
 */
export function toThreadErrorRecord(error: unknown): ThreadErrorRecord {
  const name = read(error, "name");
  const message = read(error, "message");
  const code = read(error, "code");
  return {
    name: typeof name === "string" && name.length > 0 ? name : "Error",
    message: typeof message === "string" ? message : errorText(error, 2000),
    stack: errorText(error, 8000),
    ...(typeof code === "string" || typeof code === "number" ? { code: String(code) } : {}),
  };
}

/** An error rebuilt on the main thread from a {@link ThreadErrorRecord}: same name, message, stack. */
export class ThreadError extends Error {
  /** The original error's `code`, if it had one. */
  readonly code: string | undefined;

  constructor(record: ThreadErrorRecord) {
    super(record.message);
    this.name = record.name;
    this.stack = record.stack;
    this.code = record.code;
  }
}
