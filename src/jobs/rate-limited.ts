/**
 * Back-pressure from a downstream (docs/flow-control.md, "Back-pressure: ctx.rateLimited"): a
 * handler that got a 429 or "slow down" returns `ctx.rateLimited(retryAfterMs, { scope })`. The
 * job goes back to `queued`, due in `retryAfterMs`, without spending an attempt (recorded as a
 * snooze: not a NACK, not an interruption, not a retry), and the scope pauses for that long on
 * every worker: `"job"` this job only, `"key"` every job of its key (its `concurrency`/`rateLimit`
 * key; stored in `soniq_rate_pauses`), `"queue"` every job of its queue (`soniq_queues.paused`
 * until `paused_until`). The pause is stored in the database.
 */
import { SoniqError } from "../errors.js";
import { valueText } from "../value-text.js";

/** What a {@link RateLimited} pauses. */
export type RateLimitScope = "job" | "key" | "queue";

/** The options of `ctx.rateLimited`. */
export interface RateLimitedOptions {
  /** What pauses (default `"job"`): see {@link RateLimitScope} and the module comment. */
  scope?: RateLimitScope;
}

/** The longest `retryAfterMs`, in milliseconds (one day). */
export const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * Returned by a handler (`return ctx.rateLimited(5000, { scope: "key" })`): see the module
 * comment. Create it with `ctx.rateLimited` or {@link rateLimited}.
 */
export class RateLimited {
  constructor(
    /** How long the job waits and the scope pauses, in **milliseconds**. */
    readonly retryAfterMs: number,
    /** What pauses. */
    readonly scope: RateLimitScope,
  ) {}
}

/**
 * The value a handler returns to be rate limited by a downstream (what `ctx.rateLimited` calls).
 * @param retryAfterMs - how long, in **milliseconds** (finite, 0 to 86,400,000).
 * @throws SoniqError `INVALID_OPTION` for a bad delay or scope, or an unknown option.
 */
export function rateLimited(retryAfterMs: number, options: RateLimitedOptions = {}): RateLimited {
  if (
    typeof retryAfterMs !== "number" ||
    !Number.isFinite(retryAfterMs) ||
    retryAfterMs < 0 ||
    retryAfterMs > MAX_RETRY_AFTER_MS
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `rateLimited(${valueText(retryAfterMs)}): retryAfterMs must be milliseconds from 0 to ${MAX_RETRY_AFTER_MS}`,
    );
  }
  const opts = options as { scope?: unknown } | null;
  const scope = opts?.scope ?? "job";
  if (
    typeof opts !== "object" ||
    opts === null ||
    (scope !== "job" && scope !== "key" && scope !== "queue") ||
    Object.keys(opts).some((k) => k !== "scope")
  ) {
    throw new SoniqError(
      "INVALID_OPTION",
      `rateLimited: options must be { scope?: "job" | "key" | "queue" }, got ${valueText(options)}`,
    );
  }
  return new RateLimited(retryAfterMs, scope);
}
