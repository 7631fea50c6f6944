/**
 * Per-key concurrency (docs/flow-control.md): a job definition's `concurrency: { key, limit }`
 * gives each job a key at enqueue, and at most `limit` jobs of one key are `processing` at once,
 * across every worker process. The key and the limit are stored in the job's Soniq metadata
 * (`meta`, JSON: `{"concurrency":{"key":"…","limit":n}}`), so a dead letter and its replay keep
 * them; the claims read them there (src/backends/postgres/keyed-claim.ts, sqlite/sql.ts).
 */
import { SoniqError } from "../errors.js";

export { concurrencyMeta, type StoredConcurrency } from "../backends/shared/concurrency-meta.js";

import { valueText } from "../value-text.js";

/** The longest concurrency key, in characters. */
export const MAX_CONCURRENCY_KEY_LENGTH = 200;

/** The highest per-key limit (a 32-bit integer, like every count Soniq stores). */
export const MAX_CONCURRENCY_LIMIT = 2_147_483_647;

/**
 * A job definition's per-key concurrency limit.
 * @typeParam TInput - The job's arguments as given at enqueue.
 */
export interface ConcurrencySettings<TInput> {
  /**
   * The key of a job, from its arguments as given at enqueue (before the argument schema runs):
   * a string of 1 to 200 characters, e.g. `(args) => args.tenantId`. Jobs of one key share the
   * limit, whatever their name. An enqueue's `concurrencyKey` option overrides it.
   */
  key: (args: TInput) => string;
  /**
   * At most this many jobs of one key run at once, across every worker process (an integer
   * >= 1). Jobs over it stay queued, attempts untouched, and start when a job of their key
   * leaves `processing`. Jobs that share a key should share a limit: each job is admitted
   * against its own stored limit.
   */
  limit: number;
}

/**
 * Checks a definition's `concurrency` option (`what` names it in the message).
 * @throws SoniqError `INVALID_OPTION` when it is not `{ key: function, limit: integer >= 1 }`.
 */
export function assertConcurrencySettings(value: unknown, what: string): void {
  const v = value as { key?: unknown; limit?: unknown } | null;
  if (
    typeof v !== "object" ||
    v === null ||
    typeof v.key !== "function" ||
    typeof v.limit !== "number" ||
    !Number.isInteger(v.limit) ||
    v.limit < 1 ||
    v.limit > MAX_CONCURRENCY_LIMIT ||
    Object.keys(v).some((k) => k !== "key" && k !== "limit")
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${what} must be { key: (args) => string, limit: integer >= 1 }, got ${valueText(value)}`,
    );
  }
}

/**
 * Checks a concurrency key (from the definition's `key` function or the enqueue's
 * `concurrencyKey` option; `what` names it in the message).
 * @throws SoniqError `INVALID_ENQUEUE_OPTION` unless a string of 1 to 200 characters.
 */
export function assertConcurrencyKey(key: unknown, what: string): asserts key is string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_CONCURRENCY_KEY_LENGTH) {
    throw new SoniqError(
      "INVALID_ENQUEUE_OPTION",
      `${what} must be a string of 1 to ${MAX_CONCURRENCY_KEY_LENGTH} characters, got ${valueText(key)}`,
    );
  }
}
