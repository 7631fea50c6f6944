/**
 * Occurrence arithmetic of a schedule (pure): when a cron expression or an `every` interval
 * fires, in an IANA time zone, with the DST rules docs/schedules.md states. Cron fields are
 * matched by `croner` on the wall clock; this module turns wall-clock matches into instants:
 *
 * - a wall time skipped at a spring-forward gap fires once, at the first valid instant after
 *   the gap (the transition instant), however many skipped wall times matched;
 * - a wall time repeated at a fall-back fires once, at its first occurrence;
 * - `every` schedules are UTC intervals anchored at `startAt` (or the Unix epoch) and ignore DST.
 *
 * All instants are **milliseconds since the Unix epoch**; `every` is in **seconds**.
 */
import { Cron } from "croner";
import { SoniqError } from "../errors.js";
import { valueText } from "../value-text.js";

/** How a schedule recurs. */
export type Timing =
  | { kind: "cron"; expression: string; timezone: string }
  | { kind: "every"; seconds: number };

/** A compiled recurrence with optional bounds (milliseconds since the epoch). */
export interface Recurrence {
  /** The first occurrence strictly after `afterMs` within the bounds, or null when none is left. */
  next(afterMs: number): number | null;
}

/** Cron nicknames croner accepts, and the only `@` forms allowed. */
const NICKNAMES = new Set([
  "@yearly",
  "@annually",
  "@monthly",
  "@weekly",
  "@daily",
  "@midnight",
  "@hourly",
]);

/** A search for the next instant gives up after this many wall-clock candidates (a bug guard). */
const MAX_CANDIDATES = 10_000;

/**
 * Checks that `timezone` is an IANA zone name this runtime knows.
 * @throws SoniqError `INVALID_SCHEDULE` otherwise.
 */
export function assertTimezone(timezone: string): void {
  if (typeof timezone !== "string" || timezone.length === 0) {
    throw new SoniqError(
      "INVALID_SCHEDULE",
      "timezone must be an IANA zone name, e.g. Europe/Paris",
    );
  }
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: timezone });
  } catch (err) {
    throw new SoniqError("INVALID_SCHEDULE", `unknown time zone ${JSON.stringify(timezone)}`, {
      cause: err,
    });
  }
}

/**
 * Compiles `timing` bounded by `startAt`/`endAt` (epoch ms, inclusive; null = unbounded).
 * @throws SoniqError `INVALID_SCHEDULE` for an expression croner rejects, one with other than 5 or
 * 6 fields, an unknown `@` name, an expression that never fires, an unknown time zone, `every`
 * below 1 second or not finite, or `endAt` before `startAt`.
 */
export function compileRecurrence(
  timing: Timing,
  startAt: number | null = null,
  endAt: number | null = null,
): Recurrence {
  if (startAt !== null && endAt !== null && endAt < startAt) {
    throw new SoniqError("INVALID_SCHEDULE", "endAt is before startAt");
  }
  const raw = timing.kind === "cron" ? cronNext(timing) : everyNext(timing.seconds, startAt);
  const bounded: Recurrence = {
    next(afterMs) {
      const from = startAt !== null && afterMs < startAt ? startAt - 1 : afterMs;
      const at = raw(from);
      if (at === null || (endAt !== null && at > endAt)) return null;
      return at;
    },
  };
  if (timing.kind === "cron" && bounded.next(startAt ?? Date.UTC(2000, 0, 1)) === null) {
    throw new SoniqError(
      "INVALID_SCHEDULE",
      `cron ${JSON.stringify(timing.expression)} never fires${endAt !== null ? " before endAt" : ""}`,
    );
  }
  return bounded;
}

/** The next `count` occurrences strictly after `afterMs` (fewer when the recurrence ends). */
export function upcoming(recurrence: Recurrence, afterMs: number, count: number): number[] {
  const out: number[] = [];
  let at: number | null = afterMs;
  while (out.length < count) {
    at = recurrence.next(at);
    if (at === null) break;
    out.push(at);
  }
  return out;
}

/**
 * The occurrences in `(afterMs, untilMs]`, ascending, at most `limit` of them; `more` is true when
 * the limit cut the list short.
 */
export function between(
  recurrence: Recurrence,
  afterMs: number,
  untilMs: number,
  limit: number,
): { occurrences: number[]; more: boolean } {
  const occurrences: number[] = [];
  let at = recurrence.next(afterMs);
  while (at !== null && at <= untilMs) {
    if (occurrences.length === limit) return { occurrences, more: true };
    occurrences.push(at);
    at = recurrence.next(at);
  }
  return { occurrences, more: false };
}

/**
 * The schedule's period estimate in seconds: the gap between its next two occurrences after
 * `fromMs` (the `every` itself for intervals); null when it fires at most once more.
 */
export function periodSeconds(recurrence: Recurrence, fromMs: number): number | null {
  const [a, b] = upcoming(recurrence, fromMs, 2);
  return a === undefined || b === undefined ? null : (b - a) / 1000;
}

function everyNext(seconds: number, startAt: number | null): (afterMs: number) => number | null {
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 1) {
    throw new SoniqError(
      "INVALID_SCHEDULE",
      `every must be a number of seconds >= 1, got ${valueText(seconds)}`,
    );
  }
  const periodMs = Math.round(seconds * 1000);
  const anchor = startAt ?? 0;
  return (afterMs) => {
    const k = Math.floor((afterMs - anchor) / periodMs) + 1;
    return anchor + k * periodMs;
  };
}

function cronNext(timing: {
  expression: string;
  timezone: string;
}): (afterMs: number) => number | null {
  const expression = typeof timing.expression === "string" ? timing.expression.trim() : "";
  if (expression.startsWith("@")) {
    if (!NICKNAMES.has(expression.toLowerCase())) {
      throw new SoniqError(
        "INVALID_SCHEDULE",
        `unknown cron name ${JSON.stringify(expression)} (known: ${[...NICKNAMES].join(", ")})`,
      );
    }
  } else {
    const fields = expression.split(/\s+/).filter((f) => f.length > 0).length;
    if (fields !== 5 && fields !== 6) {
      throw new SoniqError(
        "INVALID_SCHEDULE",
        `cron ${JSON.stringify(timing.expression)} has ${fields} fields; 5 (minute…) or 6 (second minute…) are allowed`,
      );
    }
  }
  assertTimezone(timing.timezone);
  let pattern: Cron;
  try {
    // Matched on the wall clock: croner works in UTC here and this module maps wall times to
    // instants itself (the DST rules in the module comment).
    pattern = new Cron(expression, { timezone: "UTC", paused: true });
  } catch (err) {
    throw new SoniqError(
      "INVALID_SCHEDULE",
      `invalid cron ${JSON.stringify(timing.expression)}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  const wallNext = (wallMs: number): number | null =>
    pattern.nextRun(new Date(wallMs))?.getTime() ?? null;
  if (timing.timezone === "UTC" || timing.timezone === "Etc/UTC") return wallNext;
  const zone = new Zone(timing.timezone);
  return (afterMs) => {
    let wall = zone.wallOf(afterMs);
    for (let i = 0; i < MAX_CANDIDATES; i += 1) {
      const candidate = wallNext(wall);
      if (candidate === null) return null;
      const instant = zone.instantOf(candidate);
      // A repeated wall time whose first occurrence is already past: it fired (or was due) then.
      if (instant > afterMs) return instant;
      wall = candidate;
    }
    throw new Error(`no cron instant found after ${new Date(afterMs).toISOString()}`);
  };
}

/** Offsets of one IANA zone, from Intl (milliseconds). */
class Zone {
  private readonly format: Intl.DateTimeFormat;

  constructor(timezone: string) {
    this.format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  }

  /** The zone's offset at `instantMs` (wall minus UTC), in milliseconds. */
  offsetAt(instantMs: number): number {
    const whole = Math.floor(instantMs / 1000) * 1000;
    const parts: Record<string, number> = {};
    for (const part of this.format.formatToParts(new Date(whole))) {
      if (part.type !== "literal") parts[part.type] = Number(part.value);
    }
    const wall = Date.UTC(
      parts.year ?? 1970,
      (parts.month ?? 1) - 1,
      parts.day ?? 1,
      parts.hour ?? 0,
      parts.minute ?? 0,
      parts.second ?? 0,
    );
    return wall - whole;
  }

  /** The wall-clock time at `instantMs`, as milliseconds of a UTC-labelled clock. */
  wallOf(instantMs: number): number {
    return instantMs + this.offsetAt(instantMs);
  }

  /**
   * The instant of wall time `wallMs`: the earlier one when the wall time is repeated (fall-back);
   * the transition instant (first valid instant after the gap) when it is skipped (spring-forward).
   */
  instantOf(wallMs: number): number {
    const day = 86_400_000;
    const offsets = new Set([this.offsetAt(wallMs - day), this.offsetAt(wallMs + day)]);
    const valid = [...offsets]
      .map((offset) => wallMs - offset)
      .filter((instant) => this.offsetAt(instant) === wallMs - instant)
      .sort((a, b) => a - b);
    if (valid[0] !== undefined) return valid[0];
    // In a gap: the offset changes between these two instants; find where, to the millisecond.
    let lo = wallMs - Math.max(...offsets);
    let hi = wallMs - Math.min(...offsets);
    const before = this.offsetAt(lo);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.offsetAt(mid) === before) lo = mid;
      else hi = mid;
    }
    return hi;
  }
}
