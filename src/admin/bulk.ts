/**
 * Bulk actions over ids or over everything a filter matches (docs/operations.md, "Bulk actions"):
 * the matching set is counted first and checked against the caller's `expectedCount` (a mismatch
 * changes nothing), then walked page by page (newest first, by a stable cursor — rows the action
 * changes do not shift later pages) and acted on one row at a time, so no statement holds many row
 * locks. Rows enqueued after the action began are not touched (the filter is bounded by the instant
 * it started).
 */
import { SoniqError } from "../errors.js";

/** Options shared by every bulk action. */
export interface BulkOptions {
  /** Refuse (`COUNT_MISMATCH`, nothing changed) unless exactly this many rows match now. */
  expectedCount?: number;
  /** Count only: change nothing. */
  dryRun?: boolean;
  /** Rows per page, 1–1000. Default 500. */
  batchSize?: number;
  /**
   * Told the running totals once the matching rows are counted (done and skipped 0) and after
   * each page; awaited before the next page (the dashboard yields to its HTTP server here). A
   * throw stops the action where it is and is raised by the action.
   */
  onProgress?: (progress: Readonly<BulkResult>) => void | Promise<void>;
}

/** What a bulk action did. */
export interface BulkResult {
  /** Rows the ids or the filter matched when the action began. */
  matched: number;
  /** Rows the action changed. */
  done: number;
  /** Rows left alone (already in a state the action does not apply to, or gone meanwhile). */
  skipped: number;
  /** True when nothing was changed on purpose (`dryRun`). */
  dryRun: boolean;
}

/** The source of a bulk action: how to count the matching rows and page through their ids. */
export interface BulkSource {
  count(): Promise<number>;
  page(cursor: string | null, limit: number): Promise<{ ids: string[]; nextCursor: string | null }>;
}

/** The option keys every bulk request takes (besides its `ids`/`filter` and, for jobs, `action`). */
const BULK_OPTION_KEYS = ["expectedCount", "dryRun", "batchSize", "onProgress"] as const;

/**
 * Checks that a bulk request is an object with only the keys it takes: `fields` (its own, such
 * as `ids`, `filter`, `action`) and the {@link BulkOptions}. An unknown key (a misspelt
 * `expectedCount`, say) is refused rather than ignored — ignoring it would drop the guard it meant.
 * @throws SoniqError `INVALID_OPTION` (its `details.option` names the unknown key).
 */
export function assertBulkRequest(
  request: unknown,
  fields: readonly string[],
): asserts request is object {
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw new SoniqError("INVALID_OPTION", "a bulk action takes { ids } or { filter } and options");
  }
  const known = [...fields, ...BULK_OPTION_KEYS];
  const unknown = Object.keys(request).find((key) => !known.includes(key));
  if (unknown !== undefined) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${JSON.stringify(unknown)} is not a bulk action option (known: ${known.join(", ")})`,
      { details: { option: unknown } },
    );
  }
}

/**
 * The upper bound of a bulk action's filter on its rows' instant (`createdBefore` for jobs,
 * `deadBefore` for dead letters): the instant the action began (`now()`, the store's clock) + 1 ms,
 * or the caller's own bound if that is earlier — so rows that arrive while it runs are never
 * touched, whatever bound the caller gave. It resolves only once the store's clock has reached
 * that bound (a millisecond or two; at most about 100 ms if the clock stalls): a row written after
 * that has an instant at or past the bound, so one that arrives in the same millisecond as the
 * action's start cannot slip under it.
 */
export async function bulkBound(now: () => Promise<Date>, given: Date | undefined): Promise<Date> {
  const began = (await now()).getTime() + 1;
  const bound = new Date(given === undefined ? began : Math.min(given.getTime(), began));
  for (let tries = 0; tries < 100 && (await now()).getTime() < bound.getTime(); tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return bound;
}

/**
 * The distinct ids of a bulk action given by ids.
 * @throws SoniqError `INVALID_OPTION` unless `ids` is a list of non-empty text.
 */
export function bulkIds(ids: unknown): string[] {
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== "string" || id.length === 0)) {
    throw new SoniqError("INVALID_OPTION", "ids must be a list of non-empty job ids");
  }
  return [...new Set(ids as string[])];
}

/**
 * Runs `act` on every row `source` yields.
 * @param act - true when it changed the row.
 * @throws SoniqError `COUNT_MISMATCH` when `expectedCount` differs; `INVALID_OPTION` for a bad
 * `expectedCount` or `batchSize`.
 */
export async function runBulk(
  source: BulkSource,
  options: BulkOptions,
  act: (id: string) => Promise<boolean>,
): Promise<BulkResult> {
  const batch = options.batchSize ?? 500;
  if (!Number.isInteger(batch) || batch < 1 || batch > 1000) {
    throw new SoniqError("INVALID_OPTION", `batchSize must be an integer from 1 to 1000`);
  }
  const expected = options.expectedCount;
  if (expected !== undefined && (!Number.isInteger(expected) || expected < 0)) {
    throw new SoniqError("INVALID_OPTION", "expectedCount must be an integer >= 0");
  }
  const matched = await source.count();
  if (expected !== undefined && expected !== matched) {
    throw new SoniqError(
      "COUNT_MISMATCH",
      `expected ${expected} matching rows but ${matched} match now; nothing was changed`,
      { details: { expected, matched } },
    );
  }
  const result: BulkResult = { matched, done: 0, skipped: 0, dryRun: options.dryRun === true };
  if (result.dryRun) return result;
  await options.onProgress?.({ ...result });
  let cursor: string | null = null;
  let seen = 0;
  do {
    const page = await source.page(cursor, batch);
    for (const id of page.ids) {
      if (seen >= matched) break;
      seen += 1;
      if (await act(id)) result.done += 1;
      else result.skipped += 1;
    }
    cursor = page.nextCursor;
    if (cursor !== null && seen < matched) await options.onProgress?.({ ...result });
  } while (cursor !== null && seen < matched);
  return result;
}
