// Job ids (src/jobs/job-id.ts): UUID version 7, time first, strictly increasing within a process.
import { describe, expect, it } from "vitest";
import { newJobId } from "../../src/jobs/job-id.js";

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit millisecond time an id carries. */
function msOf(id: string): number {
  return Number.parseInt(id.replaceAll("-", "").slice(0, 12), 16);
}

describe("newJobId", () => {
  it("is a version 7, variant 10 UUID carrying the time in milliseconds", () => {
    const before = Date.now();
    const id = newJobId();
    const after = Date.now();
    expect(id).toMatch(SHAPE);
    expect(msOf(id)).toBeGreaterThanOrEqual(before);
    expect(msOf(id)).toBeLessThanOrEqual(after);
  });

  it("strictly increases within a process across a burst, and every id is distinct", () => {
    const ids = Array.from({ length: 50_000 }, () => newJobId());
    const misshapen = ids.filter((id) => !SHAPE.test(id));
    expect(misshapen).toEqual([]);
    for (let i = 1; i < ids.length; i++) {
      if (!((ids[i] as string) > (ids[i - 1] as string))) {
        throw new Error(`id ${i} (${ids[i]}) is not above id ${i - 1} (${ids[i - 1]})`);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("keeps the order when the clock stands still or steps back, borrowing at most a few ms", () => {
    const base = Date.UTC(2030, 0, 1);
    const first = newJobId(base);
    // 10,000 ids in one "millisecond" overflow the 12-bit counter at least twice.
    const frozen = Array.from({ length: 10_000 }, () => newJobId(base));
    const back = newJobId(base - 5_000);
    const all = [first, ...frozen, back];
    for (let i = 1; i < all.length; i++)
      expect((all[i] as string) > (all[i - 1] as string)).toBe(true);
    expect(msOf(back) - base).toBeGreaterThanOrEqual(2);
    expect(msOf(back) - base).toBeLessThanOrEqual(5);
  });

  it("spreads 62 random bits over the tail: no two bursts share it", () => {
    const tails = new Set(Array.from({ length: 20_000 }, () => newJobId().slice(19)));
    expect(tails.size).toBe(20_000);
  });
});
