/**
 * Rate limits (docs/flow-control.md, "Rate limits"): a job definition's
 * `rateLimit: { limit, per, key? }` lets at most `limit` jobs of one key start per `per` seconds,
 * across every worker process. The limit is stored with each job, in its Soniq metadata (`meta`,
 * `{"concurrency":{"key":"…"},"rate":{"limit":n,"per":ms}}`), so a rate-limited job is a keyed
 * job and the keyed claim admits it (src/backends/postgres/keyed-claim.ts, sqlite/sql.ts) against
 * the starts of its key recorded in `soniq_rate_starts`.
 */
import { SoniqError } from "../errors.js";
import { valueText } from "../value-text.js";
import { MAX_CONCURRENCY_LIMIT } from "./concurrency.js";

/** The longest rate-limit window, in seconds (one day). */
export const MAX_RATE_WINDOW_SECONDS = 86_400;

/**
 * A job definition's rate limit (docs/flow-control.md).
 * @typeParam TInput - The job's arguments as given at enqueue.
 */
export interface RateLimitSettings<TInput> {
  /** At most this many jobs of one key start per window (an integer >= 1). */
  limit: number;
  /**
   * The window, in **seconds** (like every duration of a job definition), fractional allowed:
   * `0.5` is 500 ms. From 0.001 (one millisecond) to 86,400 (one day). A job is started only
   * while fewer than `limit` jobs of its key were started in the `per` seconds before.
   */
  per: number;
  /**
   * The key of a job, from its arguments as given at enqueue (1 to 200 characters), e.g.
   * `(args) => args.accountId`. Omitted: the definition's `concurrency.key` when it declares
   * one, else the job's name (one bucket for the job). Not allowed next to `concurrency` (a job
   * has one key, which both limits count). An enqueue's `concurrencyKey` option overrides it.
   */
  key?: (args: TInput) => string;
}

/**
 * Checks a definition's `rateLimit` option (`what` names it in the message).
 * @param hasConcurrency - whether the definition declares `concurrency` too (then no `key`).
 * @throws SoniqError `INVALID_OPTION` unless `{ limit: integer >= 1, per: seconds in
 * [0.001, 86400], key?: function }`, or when `key` is given next to `concurrency`.
 */
export function assertRateLimitSettings(
  value: unknown,
  what: string,
  hasConcurrency: boolean,
): void {
  const v = value as { limit?: unknown; per?: unknown; key?: unknown } | null;
  if (
    typeof v !== "object" ||
    v === null ||
    typeof v.limit !== "number" ||
    !Number.isInteger(v.limit) ||
    v.limit < 1 ||
    v.limit > MAX_CONCURRENCY_LIMIT ||
    typeof v.per !== "number" ||
    !Number.isFinite(v.per) ||
    Math.round(v.per * 1000) < 1 ||
    v.per > MAX_RATE_WINDOW_SECONDS ||
    (v.key !== undefined && typeof v.key !== "function") ||
    Object.keys(v).some((k) => k !== "limit" && k !== "per" && k !== "key")
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${what} must be { limit: integer >= 1, per: seconds from 0.001 to ${MAX_RATE_WINDOW_SECONDS}, key?: (args) => string }, got ${valueText(value)}`,
    );
  }
  if (hasConcurrency && v.key !== undefined) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${what}: key is not allowed next to concurrency (a job has one key: concurrency.key, which the rate limit counts too)`,
    );
  }
}

/** A rate limit's window in whole milliseconds, as stored (`per` seconds, checked). */
export function rateWindowMs(perSeconds: number): number {
  return Math.round(perSeconds * 1000);
}
