import { SoniqError } from "../errors.js";
import { errorText } from "../worker/error-text.js";

/**
 * How long to wait before retrying a failed job, in **seconds**.
 * - `{ kind: "fixed", delay }`: always `delay` seconds.
 * - `{ kind: "exponential", base, factor, max, jitter }`: `base * factor^(attempt-1)` seconds,
 *   capped at `max`, then spread by ±`jitter` (a fraction, 0.1 = ±10%). Defaults: base 1,
 *   factor 2, max 3600, jitter 0.1.
 * - a function `(attempt, error) => seconds`: `attempt` is the 1-based number of the attempt that
 *   just failed, `error` the value the handler threw (the real object, not a copy).
 */
export type RetryPolicy =
  | { kind: "fixed"; delay: number }
  | { kind: "exponential"; base?: number; factor?: number; max?: number; jitter?: number }
  | ((attempt: number, error: unknown) => number);

/** The default policy: exponential from 1 s, doubling, capped at 1 hour, ±10% jitter. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { kind: "exponential" };

/**
 * Checks a policy's numbers when a job is defined.
 * @throws SoniqError `INVALID_OPTION`.
 */
export function assertRetryPolicy(policy: RetryPolicy, where: string): void {
  if (typeof policy === "function") return;
  const bad = (msg: string) => new SoniqError("INVALID_OPTION", `${where}: retry ${msg}`);
  if (policy.kind === "fixed") {
    if (!Number.isFinite(policy.delay) || policy.delay < 0) throw bad("delay must be >= 0 seconds");
    return;
  }
  if (policy.kind !== "exponential") throw bad(`kind must be "fixed" or "exponential"`);
  const { base = 1, factor = 2, max = 3600, jitter = 0.1 } = policy;
  if (!Number.isFinite(base) || base < 0) throw bad("base must be >= 0 seconds");
  if (!Number.isFinite(factor) || factor < 1) throw bad("factor must be >= 1");
  if (!Number.isFinite(max) || max < 0) throw bad("max must be >= 0 seconds");
  if (!Number.isFinite(jitter) || jitter < 0 || jitter > 1) throw bad("jitter must be within 0..1");
}

/**
 * The retry delay in seconds for the attempt that just failed (1-based).
 * @param random - source of randomness in [0, 1) (injectable for tests).
 * A custom policy that throws or returns a non-finite or negative number yields 0 and is reported
 * through the returned `problem`.
 */
export function retryDelaySeconds(
  policy: RetryPolicy,
  attempt: number,
  error: unknown,
  random: () => number = Math.random,
): { seconds: number; problem?: string } {
  if (typeof policy === "function") {
    try {
      const value = policy(attempt, error);
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        return {
          seconds: 0,
          problem: `custom retry policy returned ${String(value)}; retrying now`,
        };
      }
      return { seconds: value };
    } catch (err) {
      // errorText cannot throw: a value whose String() throws must not strand the job's row.
      return {
        seconds: 0,
        problem: `custom retry policy threw ${errorText(err, 300)}; retrying now`,
      };
    }
  }
  if (policy.kind === "fixed") return { seconds: policy.delay };
  const { base = 1, factor = 2, max = 3600, jitter = 0.1 } = policy;
  const raw = Math.min(max, base * factor ** Math.max(0, attempt - 1));
  const spread = raw * jitter * (random() * 2 - 1);
  return { seconds: Math.max(0, Math.min(max, raw + spread)) };
}
