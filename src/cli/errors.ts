/**
 * Every CLI failure carries a Soniq error code: this turns what a command threw into a
 * {@link SoniqError} — driver errors of a refused connection, a missing database or role, a file
 * that is not a SQLite database, a file that does not exist — keeping one that already is.
 */

import { redactUrl } from "../backends/select.js";
import { isSoniqError, SoniqError } from "../errors.js";

/** Network errors meaning the server cannot be reached. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
]);

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * The error as a SoniqError with a code.
 * @param context - what the command was connecting to (a redacted URL or a path), for messages.
 */
export function toSoniqError(err: unknown, context?: string): SoniqError {
  if (isSoniqError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  const where = context ? ` (${redactUrl(context)})` : "";
  const code = codeOf(err);
  if (code !== undefined && UNREACHABLE.has(code)) {
    return new SoniqError("DATABASE_UNREACHABLE", `cannot reach the database${where}: ${message}`, {
      cause: err,
    });
  }
  if (
    /timeout|terminated unexpectedly|Connection terminated/i.test(message) &&
    code === undefined
  ) {
    return new SoniqError(
      "DATABASE_UNREACHABLE",
      `the database did not answer${where}: ${message}`,
      {
        cause: err,
      },
    );
  }
  if (code === "3D000") {
    return new SoniqError("DATABASE_NOT_FOUND", `${message}${where}: create it, or fix the URL`, {
      cause: err,
    });
  }
  if (code === "28000" || code === "28P01") {
    return new SoniqError("DATABASE_AUTH", `${message}${where}`, { cause: err });
  }
  if (code === "ENOENT") {
    const path = (err as { path?: unknown }).path;
    return new SoniqError(
      "FILE_NOT_FOUND",
      typeof path === "string" ? `${path}: no such file` : message,
      { cause: err },
    );
  }
  if (code === "SQLITE_NOTADB") {
    return new SoniqError("NOT_A_DATABASE", `${context ?? "the file"} is not a SQLite database`, {
      cause: err,
    });
  }
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) {
    return new SoniqError("DATABASE_ERROR", `${message}${where}`, {
      cause: err,
      details: { sqlstate: code },
    });
  }
  return new SoniqError("UNEXPECTED", message, { cause: err });
}
