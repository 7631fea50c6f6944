// A bulk action's bound on its rows' instant (src/admin/bulk.ts): it is the action's start + 1 ms
// (or the caller's earlier bound), and it is handed out only once the store's clock has reached
// it — so a row enqueued in the same millisecond as the action's start, while the action runs, is
// never under it (found in CI: SQLite, a newcomer created 0 ms after the start was cancelled).
import { describe, expect, it } from "vitest";
import { bulkBound } from "../../src/admin/bulk.js";

/** A clock that reads each of `readings` (ms) in turn, then stays at the last one. */
function steppingClock(readings: number[]): { now: () => Promise<Date>; reads: () => number } {
  let i = 0;
  return {
    now: async () => new Date(readings[Math.min(i++, readings.length - 1)] as number),
    reads: () => i,
  };
}

describe("bulkBound", () => {
  it("start + 1 ms, returned only after the clock has reached it", async () => {
    const clock = steppingClock([1000, 1000, 1000, 1001]);
    const bound = await bulkBound(clock.now, undefined);
    expect(bound.getTime()).toBe(1001);
    // Read at the start, twice more still at 1000, then at 1001: four reads, no more.
    expect(clock.reads()).toBe(4);
  });

  it("a caller's earlier bound wins; a later one is capped at the start + 1 ms", async () => {
    expect((await bulkBound(steppingClock([5000]).now, new Date(10))).getTime()).toBe(10);
    expect((await bulkBound(steppingClock([5000, 5001]).now, new Date(9e12))).getTime()).toBe(5001);
  });

  it("a clock that never moves cannot hang the action (bounded wait)", async () => {
    const t0 = Date.now();
    expect((await bulkBound(steppingClock([7]).now, undefined)).getTime()).toBe(8);
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
