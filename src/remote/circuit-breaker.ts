/**
 * A circuit breaker for one remote job's provider (docs/remote-jobs.md, "Independent controls": it
 * decides only whether the provider's health permits a new submission): `closed` until
 * `failureThreshold` provider failures fall within `windowSeconds`, then `open` for
 * `cooldownSeconds`, then `half_open` (one trial submission; its success closes the circuit, its
 * failure opens it again). Per worker process, in memory. An open circuit delays new submissions
 * without spending an attempt; it never stops polls of accepted tasks, and a planned drain is never
 * reported to it as a failure.
 */
import { SoniqError } from "../errors.js";

/** Settings of a {@link CircuitBreaker}; durations in **seconds**. */
export interface CircuitBreakerOptions {
  /** Failures within the window that open the circuit (integer >= 1). */
  failureThreshold: number;
  /** Seconds over which failures are counted (> 0). */
  windowSeconds: number;
  /** Seconds the circuit stays open before one trial is let through (> 0). */
  cooldownSeconds: number;
}

/** The breaker's state. */
export type CircuitState = "closed" | "open" | "half_open";

/**
 * Checks breaker options given to `soniq.remoteJob`.
 * @throws SoniqError `INVALID_OPTION` for a missing, non-positive or unknown field.
 */
export function assertCircuitOptions(options: unknown, job: string): CircuitBreakerOptions {
  if (typeof options !== "object" || options === null) {
    throw new SoniqError("INVALID_OPTION", `job ${job}: circuitBreaker must be an object`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!["failureThreshold", "windowSeconds", "cooldownSeconds"].includes(key)) {
      throw new SoniqError("INVALID_OPTION", `job ${job}: unknown circuitBreaker option ${key}`);
    }
  }
  if (!(Number.isInteger(o.failureThreshold) && (o.failureThreshold as number) >= 1)) {
    throw new SoniqError(
      "INVALID_OPTION",
      `job ${job}: circuitBreaker.failureThreshold must be an integer >= 1`,
    );
  }
  for (const key of ["windowSeconds", "cooldownSeconds"] as const) {
    const value = o[key];
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      throw new SoniqError(
        "INVALID_OPTION",
        `job ${job}: circuitBreaker.${key} must be > 0 seconds`,
      );
    }
  }
  return o as unknown as CircuitBreakerOptions;
}

/** See the module comment. */
export class CircuitBreaker {
  private failures: number[] = [];
  private openedAt: number | undefined;
  private trialInFlight = false;

  /** @param now - the clock, in milliseconds. */
  constructor(
    private readonly options: CircuitBreakerOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /** The state now. */
  get state(): CircuitState {
    if (this.openedAt === undefined) return "closed";
    return this.now() - this.openedAt >= this.options.cooldownSeconds * 1000 ? "half_open" : "open";
  }

  /**
   * Whether a new submission may start now. In `half_open` only one trial at a time is allowed.
   * @returns `retryInSeconds` when refused: the seconds until the cooldown ends (at least 1).
   */
  allow(): { allowed: true } | { allowed: false; retryInSeconds: number } {
    const state = this.state;
    if (state === "closed") return { allowed: true };
    if (state === "half_open" && !this.trialInFlight) {
      this.trialInFlight = true;
      return { allowed: true };
    }
    const openedAt = this.openedAt ?? this.now();
    const left = openedAt + this.options.cooldownSeconds * 1000 - this.now();
    return { allowed: false, retryInSeconds: Math.max(1, Math.ceil(left / 1000)) };
  }

  /** A submission got a usable answer (accepted, or a definite refusal that is not the provider's fault). */
  recordSuccess(): void {
    this.failures = [];
    this.openedAt = undefined;
    this.trialInFlight = false;
  }

  /** A provider failure (5xx, timeout, connection refused). Never call it for a planned drain. */
  recordFailure(): void {
    const now = this.now();
    if (this.state === "half_open") {
      this.openedAt = now;
      this.trialInFlight = false;
      return;
    }
    const since = now - this.options.windowSeconds * 1000;
    this.failures = this.failures.filter((t) => t > since);
    this.failures.push(now);
    if (this.failures.length >= this.options.failureThreshold) {
      this.openedAt = now;
      this.failures = [];
    }
  }
}
