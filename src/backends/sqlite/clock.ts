/**
 * The database clock for the SQLite backend (docs/backends.md, "Time"): every stored time is
 * INTEGER milliseconds since the Unix epoch, computed by SQLite itself.
 */

/**
 * SQL expression for the database's current time in whole milliseconds since the epoch.
 * SQLite keeps `'now'` fixed for the length of one statement step, so every use inside one
 * statement yields the same value.
 */
export const NOW_MS = "CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER)";

/** Seconds (possibly fractional, e.g. a delay) to whole milliseconds, as the memory backend rounds. */
export function secondsToMs(seconds: number): number {
  return Math.round(seconds * 1000);
}

/** A stored instant (ms) as a `Date`, or null. */
export const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));
