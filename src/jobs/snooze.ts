import { SoniqError } from "../errors.js";

/**
 * Returned by a handler to run the job again later without spending an attempt (the row goes
 * back to `queued`, due in `seconds`). Create it with {@link snooze}.
 */
export class Snooze {
  constructor(
    /** Delay in seconds. */
    readonly seconds: number,
  ) {}
}

/**
 * `return snooze(30)` from a handler: run this job again in 30 seconds; the attempt is not spent.
 * @param seconds - delay in seconds (>= 0, finite).
 * @throws SoniqError `INVALID_OPTION` for a negative or non-finite delay.
 */
export function snooze(seconds: number): Snooze {
  if (!Number.isFinite(seconds) || seconds < 0) {
    throw new SoniqError(
      "INVALID_OPTION",
      `snooze(${seconds}): seconds must be a finite number >= 0`,
    );
  }
  return new Snooze(seconds);
}
