/**
 * The fake clock of `soniq/testing`: the time the in-memory store reads as "now" (due times,
 * delays, retries' back-off, snoozes, leases), moved only when a test says so.
 */
import { SoniqError } from "../errors.js";

/**
 * A clock that stands still until told to move. Every time the store writes or compares
 * (`scheduledAt`, a retry's back-off, a snooze, heartbeats, leases, retention) is read from it;
 * timers in the worker (job timeouts, the poll interval) still run on real time.
 *
 * ```ts
 * await sendReminder.enqueue({ userId: 7 }, { delay: 3600 }); // seconds
 * testing.clock.advance(3_600_000); // milliseconds
 * await testing.drain(); // the reminder is due now: it runs
 * ```
 */
export class TestClock {
  private at: number;

  /**
   * @param start - where the clock starts: a `Date` or milliseconds since the epoch.
   * @throws SoniqError `INVALID_OPTION` when `start` is not a finite instant.
   */
  constructor(start: Date | number) {
    this.at = instant(start, "now");
  }

  /** Now, in milliseconds since the epoch. */
  now(): number {
    return this.at;
  }

  /** Now, as a `Date`. */
  get date(): Date {
    return new Date(this.at);
  }

  /**
   * Moves the clock forward by `ms` **milliseconds** (job options such as `delay` are in
   * seconds: `delay: 60` is `advance(60_000)`). Nothing runs by itself: call `drain()` to run
   * what became due.
   * @returns The new now, as a `Date`.
   * @throws SoniqError `INVALID_OPTION` when `ms` is negative or not a finite number.
   */
  advance(ms: number): Date {
    if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
      throw new SoniqError(
        "INVALID_OPTION",
        `clock.advance(ms) takes a finite number of milliseconds >= 0, not ${String(ms)}`,
      );
    }
    this.at += ms;
    return this.date;
  }

  /**
   * Sets the clock to `at` (a `Date` or milliseconds since the epoch), forward only.
   * @returns The new now, as a `Date`.
   * @throws SoniqError `INVALID_OPTION` when `at` is not a finite instant or is before now.
   */
  set(at: Date | number): Date {
    const next = instant(at, "clock.set(at)");
    if (next < this.at) {
      throw new SoniqError(
        "INVALID_OPTION",
        `clock.set(at) moves forward only: ${new Date(next).toISOString()} is before ${this.date.toISOString()}`,
      );
    }
    this.at = next;
    return this.date;
  }
}

/** `value` as milliseconds since the epoch, or `INVALID_OPTION` naming `what`. */
function instant(value: Date | number, what: string): number {
  const ms = value instanceof Date ? value.getTime() : value;
  if (typeof ms !== "number" || !Number.isFinite(ms)) {
    throw new SoniqError(
      "INVALID_OPTION",
      `${what} must be a Date or milliseconds since the epoch`,
    );
  }
  return Math.round(ms);
}
