/** The pure occurrence arithmetic (src/scheduler/recurrence.ts): cron, every, bounds, DST rules. */
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../../src/errors.js";
import { compileRecurrence, periodSeconds, upcoming } from "../../src/scheduler/recurrence.js";

const iso = (ms: number) => new Date(ms).toISOString();
const at = (text: string) => Date.parse(text);
const cron = (expression: string, timezone = "UTC") => ({
  kind: "cron" as const,
  expression,
  timezone,
});

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isSoniqError(err) ? err.code : "not a SoniqError";
  }
  return undefined;
}

describe("recurrence › cron", () => {
  it("recurrence › a 5-field expression › fires on each matching minute strictly after the instant", () => {
    const r = compileRecurrence(cron("*/15 * * * *"));
    expect(upcoming(r, at("2026-01-01T00:00:00Z"), 3).map(iso)).toEqual([
      "2026-01-01T00:15:00.000Z",
      "2026-01-01T00:30:00.000Z",
      "2026-01-01T00:45:00.000Z",
    ]);
  });

  it("recurrence › a 6-field expression › has second resolution", () => {
    const r = compileRecurrence(cron("*/10 * * * * *"));
    expect(upcoming(r, at("2026-01-01T00:00:05.500Z"), 2).map(iso)).toEqual([
      "2026-01-01T00:00:10.000Z",
      "2026-01-01T00:00:20.000Z",
    ]);
  });

  it("recurrence › @hourly › fires at each hour", () => {
    const r = compileRecurrence(cron("@hourly"));
    expect(upcoming(r, at("2026-01-01T00:30:00Z"), 2).map(iso)).toEqual([
      "2026-01-01T01:00:00.000Z",
      "2026-01-01T02:00:00.000Z",
    ]);
    expect(periodSeconds(r, at("2026-01-01T00:30:00Z"))).toBe(3600);
  });

  it("recurrence › a time zone › fires on that zone's wall clock", () => {
    const r = compileRecurrence(cron("0 9 * * *", "Asia/Tokyo"));
    expect(iso(r.next(at("2026-06-01T00:00:00Z")) ?? 0)).toBe("2026-06-02T00:00:00.000Z");
  });

  it("recurrence › bad input › INVALID_SCHEDULE", () => {
    expect(code(() => compileRecurrence(cron("61 * * * *")))).toBe("INVALID_SCHEDULE");
    expect(code(() => compileRecurrence(cron("* * *")))).toBe("INVALID_SCHEDULE");
    expect(code(() => compileRecurrence(cron("* * * * * * *")))).toBe("INVALID_SCHEDULE");
    expect(code(() => compileRecurrence(cron("@every")))).toBe("INVALID_SCHEDULE");
    expect(code(() => compileRecurrence(cron("0 0 31 2 *")))).toBe("INVALID_SCHEDULE");
    expect(code(() => compileRecurrence(cron("0 * * * *", "Mars/Olympus")))).toBe(
      "INVALID_SCHEDULE",
    );
    expect(code(() => compileRecurrence({ kind: "every", seconds: 0.5 }))).toBe("INVALID_SCHEDULE");
    expect(code(() => compileRecurrence({ kind: "every", seconds: Number.NaN }))).toBe(
      "INVALID_SCHEDULE",
    );
    expect(code(() => compileRecurrence({ kind: "every", seconds: 1 }, 10, 5))).toBe(
      "INVALID_SCHEDULE",
    );
  });
});

describe("recurrence › DST", () => {
  it("recurrence › Europe/Paris 2026-03-29 02:30 is skipped › fires once at 03:00 local, the first valid instant after the gap", () => {
    const r = compileRecurrence(cron("30 2 * * *", "Europe/Paris"));
    expect(upcoming(r, at("2026-03-27T12:00:00Z"), 3).map(iso)).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST: the gap's end
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
  });

  it("recurrence › several wall times inside the gap › fire once together at the gap's end", () => {
    const r = compileRecurrence(cron("*/15 2-3 * * *", "Europe/Paris"));
    expect(upcoming(r, at("2026-03-29T00:50:00Z"), 3).map(iso)).toEqual([
      "2026-03-29T01:00:00.000Z", // 02:00–02:45 collapse onto 03:00, which also matches
      "2026-03-29T01:15:00.000Z",
      "2026-03-29T01:30:00.000Z",
    ]);
  });

  it("recurrence › America/New_York 2026-11-01 01:30 is repeated › fires once, at its first occurrence", () => {
    const r = compileRecurrence(cron("30 1 * * *", "America/New_York"));
    expect(upcoming(r, at("2026-10-31T12:00:00Z"), 2).map(iso)).toEqual([
      "2026-11-01T05:30:00.000Z", // 01:30 EDT; 01:30 EST (06:30Z) does not fire
      "2026-11-02T06:30:00.000Z",
    ]);
    // Resuming from inside the repeated hour does not fire the second 01:30.
    expect(iso(r.next(at("2026-11-01T06:10:00Z")) ?? 0)).toBe("2026-11-02T06:30:00.000Z");
  });

  it("recurrence › every 3600 across both transitions › stays 3600 s apart", () => {
    const r = compileRecurrence({ kind: "every", seconds: 3600 });
    for (const from of ["2026-03-29T00:00:00Z", "2026-11-01T04:00:00Z"]) {
      const list = upcoming(r, at(from), 4);
      for (let i = 1; i < list.length; i += 1)
        expect((list[i] ?? 0) - (list[i - 1] ?? 0)).toBe(3_600_000);
    }
  });
});

describe("recurrence › every and bounds", () => {
  it("recurrence › every without startAt › is anchored at the epoch", () => {
    const r = compileRecurrence({ kind: "every", seconds: 60 });
    expect(iso(r.next(at("2026-01-01T00:00:30Z")) ?? 0)).toBe("2026-01-01T00:01:00.000Z");
    expect(iso(r.next(at("2026-01-01T00:01:00Z")) ?? 0)).toBe("2026-01-01T00:02:00.000Z");
  });

  it("recurrence › every with startAt › is anchored there and starts no earlier", () => {
    const start = at("2026-01-01T00:00:07Z");
    const r = compileRecurrence({ kind: "every", seconds: 10 }, start);
    expect(iso(r.next(at("2025-01-01T00:00:00Z")) ?? 0)).toBe("2026-01-01T00:00:07.000Z");
    expect(iso(r.next(start) ?? 0)).toBe("2026-01-01T00:00:17.000Z");
  });

  it("recurrence › endAt passed › no next occurrence", () => {
    const r = compileRecurrence(cron("0 * * * *"), null, at("2026-01-01T05:00:00Z"));
    expect(iso(r.next(at("2026-01-01T04:30:00Z")) ?? 0)).toBe("2026-01-01T05:00:00.000Z");
    expect(r.next(at("2026-01-01T05:00:00Z"))).toBeNull();
  });
});
