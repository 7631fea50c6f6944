// The admin API's input rules and the small pure pieces under it: filters, page limits, cursors,
// the progress buffer a sync handler's thread writes and the heartbeat reads.
import { describe, expect, it } from "vitest";
import { pageLimit, toDeadLetterFilter, toJobFilter } from "../../src/admin/filters.js";
import { timeline } from "../../src/admin/views.js";
import { decodeCursor, encodeCursor } from "../../src/backends/shared/cursor.js";
import {
  checkProgress,
  MAX_PROGRESS_MESSAGE_BYTES,
  newProgressBuffer,
  readProgress,
  writeProgress,
} from "../../src/jobs/progress.js";

describe("admin input", () => {
  it("toJobFilter › friendly input › the contract's filter", () => {
    expect(
      toJobFilter({
        status: "queued",
        queue: ["a", "b"],
        args: { path: "user.id", equals: 42 },
        createdAfter: "2026-12-01T09:00:00+01:00",
      }),
    ).toEqual({
      status: ["queued"],
      queue: ["a", "b"],
      args: { path: ["user", "id"], value: "42" },
      createdAfter: new Date("2026-12-01T08:00:00Z"),
    });
  });

  it("toJobFilter › bad input › INVALID_OPTION naming the field", () => {
    expect(() => toJobFilter({ status: "running" as never })).toThrow(/status/);
    expect(() => toJobFilter({ createdAfter: "2026-12-01 09:00" })).toThrow(/zone/);
    expect(() => toJobFilter({ nope: 1 } as never)).toThrow(/unknown filter/);
    expect(() => toJobFilter({ args: { path: "", equals: 1 } })).toThrow(/args.path/);
    expect(() => toDeadLetterFilter({ reason: [""] })).toThrow(/reason/);
    expect(() => pageLimit(0)).toThrow(/limit/);
    expect(pageLimit(undefined)).toBe(50);
  });

  it("cursor › round trip › same key; garbage › INVALID_OPTION", () => {
    const text = encodeCursor({ time: "1764576000123456", id: "abc" });
    expect(decodeCursor(text)).toEqual({ time: "1764576000123456", id: "abc" });
    expect(decodeCursor(null)).toBeNull();
    expect(() => decodeCursor("not a cursor")).toThrow(/INVALID_OPTION/);
  });

  it("timeline › row and events › time order, the start before an event of the same instant", () => {
    const t = (ms: number) => new Date(1_000_000 + ms);
    const entries = timeline(
      {
        createdAt: t(0),
        startedAt: t(50),
        finishedAt: t(90),
        attempts: 1,
        workerId: "w",
        status: "done",
      },
      [
        {
          seq: 1,
          jobId: "j",
          at: t(50),
          kind: "cancel_requested",
          attempt: 1,
          workerId: "w",
          detail: null,
        },
        {
          seq: 2,
          jobId: "j",
          at: t(20),
          kind: "nack",
          attempt: 1,
          workerId: "v",
          detail: "shutdown",
        },
      ],
    );
    expect(entries.map((e) => e.kind)).toEqual([
      "enqueued",
      "nack",
      "started",
      "cancel_requested",
      "done",
    ]);
  });
});

describe("progress", () => {
  it("checkProgress › outside 0..1 or a non-text message › INVALID_ARGS; a long message is cut", () => {
    expect(() => checkProgress(1.5, undefined)).toThrow(/INVALID_ARGS/);
    expect(() => checkProgress(Number.NaN, undefined)).toThrow(/INVALID_ARGS/);
    expect(() => checkProgress(0.5, 3)).toThrow(/INVALID_ARGS/);
    const long = checkProgress(0.5, "é".repeat(2000));
    expect(Buffer.byteLength(long.message ?? "")).toBeLessThanOrEqual(MAX_PROGRESS_MESSAGE_BYTES);
    expect(long.message?.endsWith("é")).toBe(true);
  });

  it("progress buffer › writes then a read › the latest report and a new sequence each time", () => {
    const buffer = newProgressBuffer();
    expect(readProgress(buffer)).toBeNull();
    writeProgress(buffer, { fraction: 0.25, message: "a quarter" });
    const first = readProgress(buffer);
    expect(first).toMatchObject({ fraction: 0.25, message: "a quarter" });
    writeProgress(buffer, { fraction: 1, message: null });
    const second = readProgress(buffer);
    expect(second).toMatchObject({ fraction: 1, message: null });
    expect(second?.seq).toBeGreaterThan(first?.seq ?? 0);
  });
});
