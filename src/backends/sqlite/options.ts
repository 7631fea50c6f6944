/**
 * The SQLite backend's options: what each means, its unit and default, and their validation.
 */
import { SoniqError } from "../../errors.js";

/** Options of {@link SqliteBackend}. */
export interface SqliteBackendOptions {
  /**
   * Path of the database file, relative to the working directory or absolute. Missing parent
   * directories are created. `":memory:"` opens a private in-memory database (one connection,
   * so nothing is shared with other backends or processes), migrated when first used.
   */
  path: string;
  /**
   * How long, in **milliseconds**, a call waits for another connection's lock before it fails
   * with `SQLITE_BUSY`. Default 5000. A non-negative integer. The wait happens in short slices
   * with the event loop free in between (see connection.ts), so signals and timers still run.
   */
  busyTimeoutMs?: number;
}

/** The default {@link SqliteBackendOptions.busyTimeoutMs}: 5000 ms. */
export const DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * Checks `options` and fills in the defaults.
 * @returns The path as given and the busy timeout in milliseconds.
 * @throws SoniqError `INVALID_OPTION` for an empty path or a busy timeout that is not a
 * non-negative integer.
 */
export function validateOptions(options: SqliteBackendOptions): {
  path: string;
  busyTimeoutMs: number;
} {
  const { path } = options;
  if (typeof path !== "string" || path.trim().length === 0) {
    throw new SoniqError("INVALID_OPTION", "the SQLite backend needs a database file path", {
      details: { option: "path" },
    });
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_SQLITE_BUSY_TIMEOUT_MS;
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new SoniqError(
      "INVALID_OPTION",
      `busyTimeoutMs must be a non-negative integer (milliseconds), got ${String(busyTimeoutMs)}`,
      { details: { option: "busyTimeoutMs" } },
    );
  }
  return { path, busyTimeoutMs };
}
