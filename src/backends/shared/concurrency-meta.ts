/**
 * Where a job's concurrency key and limit are stored (docs/flow-control.md): in its Soniq
 * metadata, `meta` = `{"concurrency":{"key":"…","limit":n}}`, written at enqueue
 * (src/jobs/build-new-job.ts) and read by the claims of both engines through the expressions
 * below, which the indexes of the flow-control migration name exactly.
 */

/** What a keyed job stores under `concurrency` in its metadata. */
export interface StoredConcurrency {
  /** The job's key (1 to 200 characters). */
  key: string;
  /** The most jobs of that key that may be processing at once (>= 1). */
  limit: number;
}

/** The `meta` JSON text of a keyed job. */
export function concurrencyMeta(stored: StoredConcurrency): string {
  return JSON.stringify({ concurrency: { key: stored.key, limit: stored.limit } });
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

/** PostgreSQL: the key of row `alias` (text, NULL for a job without one). */
export const pgKeyOf = (alias: string) => `(${alias}.meta -> 'concurrency' ->> 'key')`;

/** PostgreSQL: the limit of row `alias` (integer). */
export const pgLimitOf = (alias: string) => `((${alias}.meta -> 'concurrency' ->> 'limit')::int)`;

/** PostgreSQL: true for a row with a key (the keyed indexes' predicate, written the same way). */
export const pgKeyed = (alias: string) => `(${alias}.meta -> 'concurrency') IS NOT NULL`;

/**
 * PostgreSQL: true for a row without a key (what the ordinary claims add to their filter). The
 * `meta IS NULL` half is for the planner: it has statistics on `meta`'s NULLs but none on the
 * JSON expression, whose default estimate (0.5 %) made it sort every due row instead of walking
 * the claim index (test/postgres/query-plans.test.ts).
 */
export const pgUnkeyed = (alias: string) =>
  `(${alias}.meta IS NULL OR (${alias}.meta -> 'concurrency') IS NULL)`;

/** SQLite: the key of the row (NULL for a job without one); the keyed indexes name it exactly. */
export const SQLITE_KEY = "json_extract(meta, '$.concurrency.key')";

/** SQLite: the limit of the row. */
export const SQLITE_LIMIT = "json_extract(meta, '$.concurrency.limit')";
