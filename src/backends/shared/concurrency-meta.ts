/**
 * Where a job's key, concurrency limit and rate limit are stored (docs/flow-control.md): in its
 * Soniq metadata, `meta` = `{"concurrency":{"key":"…","limit":n},"rate":{"limit":n,"per":ms}}`
 * (`limit` under `concurrency` absent for a job with a rate limit only; `rate` absent for a job
 * with a concurrency limit only), written at enqueue (src/jobs/build-new-job.ts) and read by the
 * claims of both engines through the expressions below, which the keyed indexes name exactly.
 * Each engine keeps the key in a column of its own, filled from `meta` (PostgreSQL: generated
 * columns, migration 034; SQLite: `concurrency_key`, migration 020), so a claim never parses the
 * JSON of the rows it walks. A job with a rate limit is a keyed job: the keyed claim takes it.
 */

/** What a keyed job stores in its metadata. */
export interface StoredConcurrency {
  /** The job's key (1 to 200 characters). */
  key: string;
  /** The most jobs of that key that may be processing at once (>= 1); undefined: no such limit. */
  limit: number | undefined;
  /** The job's rate limit: at most `limit` starts of its key per `perMs` milliseconds. */
  rate?: { limit: number; perMs: number } | undefined;
}

/** The `meta` JSON text of a keyed job. */
export function concurrencyMeta(stored: StoredConcurrency): string {
  const concurrency =
    stored.limit === undefined ? { key: stored.key } : { key: stored.key, limit: stored.limit };
  return JSON.stringify(
    stored.rate === undefined
      ? { concurrency }
      : { concurrency, rate: { limit: stored.rate.limit, per: stored.rate.perMs } },
  );
}

/** Whether a job's `meta` JSON text (or null) carries a concurrency key. Never throws. */
export function hasConcurrencyKey(meta: string | null | undefined): boolean {
  if (typeof meta !== "string" || !meta.includes('"concurrency"')) return false;
  try {
    const parsed = JSON.parse(meta) as { concurrency?: unknown } | null;
    return typeof parsed === "object" && parsed !== null && parsed.concurrency != null;
  } catch {
    return false;
  }
}

/** The key in a job's `meta` JSON text (or null): its concurrency/rate key, or null. Never throws. */
export function keyOfMeta(meta: string | null | undefined): string | null {
  if (typeof meta !== "string" || !meta.includes('"concurrency"')) return null;
  try {
    const parsed = JSON.parse(meta) as { concurrency?: { key?: unknown } } | null;
    const key = parsed?.concurrency?.key;
    return typeof key === "string" ? key : null;
  } catch {
    return null;
  }
}

/**
 * PostgreSQL: the key of row `alias` (text, NULL for a job without one): the generated column
 * `concurrency_key` (migration 034), on which the keyed claim and running indexes are built.
 */
export const pgKeyOf = (alias: string) => `${alias}.concurrency_key`;

/**
 * PostgreSQL: the limit of row `alias` (integer; NULL for a job with a rate limit only): the
 * generated column `concurrency_limit` (migration 034).
 */
export const pgLimitOf = (alias: string) => `${alias}.concurrency_limit`;

/** PostgreSQL: true for a row with a key (the keyed indexes' predicate, written the same way). */
export const pgKeyed = (alias: string) => `${alias}.concurrency_key IS NOT NULL`;

/**
 * PostgreSQL: true for a row with a key, read from `meta` (as `pgUnkeyed`): the condition of the
 * hand-off probe's index `soniq_jobs_keyed_queue_idx` (migration 027), which stays on `meta` so
 * that the previous version's probe still finds it during a rolling deploy (migration 034).
 */
export const pgKeyedInMeta = (alias: string) =>
  `${alias}.meta IS NOT NULL AND (${alias}.meta -> 'concurrency') IS NOT NULL`;

/**
 * PostgreSQL: true for a row without a key (what the ordinary claims add to their filter). The
 * `meta IS NULL` half is for the planner: it has statistics on `meta`'s NULLs but none on the
 * JSON expression, whose default estimate (0.5 %) made it sort every due row instead of walking
 * the claim index (test/postgres/query-plans.test.ts).
 */
export const pgUnkeyed = (alias: string) =>
  `(${alias}.meta IS NULL OR (${alias}.meta -> 'concurrency') IS NULL)`;

/**
 * SQLite: the key of the row (NULL for a job without one): the column `concurrency_key` (migration
 * 020), written at enqueue from `meta`'s key; the keyed indexes are built on it.
 */
export const SQLITE_KEY = "concurrency_key";

/** SQLite: the expression of `concurrency_key` for a job inserted with `meta` JSON text `m`. */
export const sqliteKeyOfMeta = (m: string) => `json_extract(${m}, '$.concurrency.key')`;

/** SQLite: the limit of the row (NULL for a job with a rate limit only). */
export const SQLITE_LIMIT = "json_extract(meta, '$.concurrency.limit')";

/**
 * PostgreSQL: the rate limit's starts per window of row `alias` (integer; NULL: none): the
 * generated column `rate_limit` (migration 034).
 */
export const pgRateLimitOf = (alias: string) => `${alias}.rate_limit`;

/** PostgreSQL: the rate limit's window of row `alias`, as an interval (NULL: none). */
export const pgRateWindowOf = (alias: string) =>
  `(((${alias}.meta -> 'rate' ->> 'per')::bigint) * interval '1 millisecond')`;

/** SQLite: the rate limit's starts per window of the row (NULL: none). */
export const SQLITE_RATE_LIMIT = "json_extract(meta, '$.rate.limit')";

/** SQLite: the rate limit's window of the row, in milliseconds (NULL: none). */
export const SQLITE_RATE_PER = "json_extract(meta, '$.rate.per')";
