import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DeadlineQueue } from "../../src/worker/deadline-queue.js";

describe("DeadlineQueue (one timer for every job_timeout)", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("fires each entry at its deadline, never before, in deadline order; removed ones never", async () => {
    const queue = new DeadlineQueue(() => Date.now());
    const t0 = Date.now();
    const fired: string[] = [];
    queue.add(t0 + 300, () => fired.push("c"));
    queue.add(t0 + 100, () => fired.push("a"));
    const gone = queue.add(t0 + 150, () => fired.push("removed"));
    queue.add(t0 + 200, () => fired.push("b"));
    queue.remove(gone);
    queue.remove(gone); // idempotent
    await vi.advanceTimersByTimeAsync(99);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(["a"]);
    await vi.advanceTimersByTimeAsync(199);
    expect(fired).toEqual(["a", "b"]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual(["a", "b", "c"]);
    expect(queue.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("keeps one timer however many entries, and none once the last entry is removed", () => {
    const queue = new DeadlineQueue(() => Date.now());
    const t0 = Date.now();
    const entries = Array.from({ length: 1000 }, (_, i) =>
      queue.add(t0 + 300_000 + i, () => undefined),
    );
    expect(vi.getTimerCount()).toBe(1);
    // Finished out of order: the heap stays consistent (the earliest left is still found).
    for (let i = 0; i < 1000; i += 2) queue.remove(entries[i] as (typeof entries)[number]);
    expect(queue.size).toBe(500);
    for (let i = 1; i < 1000; i += 2) queue.remove(entries[i] as (typeof entries)[number]);
    expect(queue.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("re-arms for the earliest remaining deadline when the one it was armed for was removed", async () => {
    const queue = new DeadlineQueue(() => Date.now());
    const t0 = Date.now();
    const fired: number[] = [];
    const first = queue.add(t0 + 50, () => fired.push(50));
    queue.add(t0 + 500, () => fired.push(500));
    queue.remove(first);
    await vi.advanceTimersByTimeAsync(499);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(fired).toEqual([500]);
  });
});
