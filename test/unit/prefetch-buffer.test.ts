/**
 * The prefetch buffer against an injected clock: the adaptive target (start rate × the larger of
 * two claim times and the batch window, capped; 0 when starts are rare or claims slow), the
 * low-water refill, FIFO takes, the TTL checked at take time, the sweep of parked rows, and close
 * at drain start.
 */
import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../../src/backends/contract/index.js";
import {
  BATCH_WINDOW_MS,
  PREFETCH_TTL_CAP_MS,
  PrefetchBuffer,
  prefetchTtlMs,
  RATE_WINDOW_MS,
} from "../../src/worker/prefetch-buffer.js";

function job(n: number): ClaimedJob {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`,
    name: "j",
    queue: "default",
    args: "{}",
    priority: 0,
    attempts: 0,
    maxAttempts: 3,
    interruptions: 0,
    unchargedRecoveries: 0,
    scheduledAt: new Date(0),
    createdAt: new Date(0),
    workerId: "w",
    claimToken: "t",
    meta: null,
    traceContext: null,
    version: 1,
  };
}

function buffer(max = 500, ttlMs = 2000) {
  const clock = { t: 1_000_000 };
  const b = new PrefetchBuffer({ max, ttlMs, now: () => clock.t });
  return { b, clock };
}

/** Starts `perMs` jobs per millisecond for `ms` milliseconds, in 1 ms steps. */
function steadyStarts(b: PrefetchBuffer, clock: { t: number }, perMs: number, ms: number): void {
  for (let i = 0; i < ms; i += 1) {
    clock.t += 1;
    b.noteStarts(perMs);
  }
}

describe("PrefetchBuffer", () => {
  it("target › before any claim was timed › 0 (the first claim asks for free slots only)", () => {
    const { b, clock } = buffer();
    steadyStarts(b, clock, 10, 100);
    expect(b.target()).toBe(0);
    expect(b.room()).toBe(0);
  });

  it("target › steady 10 starts/ms and 2 ms claims › at least the batch window's starts (500)", () => {
    const { b, clock } = buffer(1000);
    b.noteClaim(2);
    steadyStarts(b, clock, 10, 5 * RATE_WINDOW_MS);
    const target = b.target();
    // 2 × rate × claim time would be 40: too few rows to spread a claim's fixed cost.
    expect(target).toBeGreaterThanOrEqual(0.9 * 10 * BATCH_WINDOW_MS);
    expect(target).toBeLessThanOrEqual(10 * BATCH_WINDOW_MS);
    expect(b.room()).toBe(target); // empty: below the low-water mark
  });

  it("target › steady 2 starts/ms and 30 ms claims › about 2 × rate × claim time (120)", () => {
    const { b, clock } = buffer();
    b.noteClaim(30);
    steadyStarts(b, clock, 2, 5 * RATE_WINDOW_MS);
    const target = b.target();
    expect(target).toBeGreaterThanOrEqual(108);
    expect(target).toBeLessThanOrEqual(120);
  });

  it("target › capped by the prefetch setting", () => {
    const { b, clock } = buffer(25);
    b.noteClaim(5);
    steadyStarts(b, clock, 20, 5 * RATE_WINDOW_MS);
    expect(b.target()).toBe(25);
  });

  it("target › starts become rare (long jobs) › falls to 0 within a few rate windows", () => {
    const { b, clock } = buffer();
    b.noteClaim(2);
    steadyStarts(b, clock, 10, 5 * RATE_WINDOW_MS);
    expect(b.target()).toBeGreaterThan(0);
    // Then one start per second: long jobs. Nothing is parked behind them.
    for (let i = 0; i < 5; i += 1) {
      clock.t += 1000;
      b.noteStarts(1);
    }
    expect(b.target()).toBe(0);
  });

  it("target › 10 slots of 1 s jobs with 1 ms claims › 0 (the worker claims for free slots only)", () => {
    const { b, clock } = buffer();
    for (let i = 0; i < 20; i += 1) {
      b.noteClaim(1);
      clock.t += 100;
      b.noteStarts(1); // 10 starts per second
    }
    expect(b.target()).toBe(0);
  });

  it("target › claims slower than half the TTL › 0 (rows would expire before they start)", () => {
    const { b, clock } = buffer(500, 200);
    b.noteClaim(150);
    steadyStarts(b, clock, 10, 5 * RATE_WINDOW_MS);
    expect(b.target()).toBe(0);
  });

  it("target › prefetch 0 › never buffers", () => {
    const { b, clock } = buffer(0);
    b.noteClaim(2);
    steadyStarts(b, clock, 10, 1000);
    expect(b.target()).toBe(0);
  });

  it("room › at or above half the target › 0; under it › what the buffer lacks", () => {
    const { b, clock } = buffer();
    b.noteClaim(2);
    steadyStarts(b, clock, 10, 5 * RATE_WINDOW_MS);
    const target = b.target();
    b.offer(
      Array.from({ length: Math.ceil(target / 2) }, (_, i) => job(i)),
      clock.t,
    );
    expect(b.room()).toBe(0);
    b.take();
    const size = b.size;
    if (size * 2 < b.target()) expect(b.room()).toBe(b.target() - size);
  });

  it("take › FIFO within the TTL; a row past it (fresh clock) is set aside, not returned", () => {
    const { b, clock } = buffer(500, 2000);
    b.offer([job(1), job(2)], clock.t);
    clock.t += 500;
    b.offer([job(3)], clock.t);
    expect(b.take()?.id).toBe(job(1).id);
    clock.t += 1600; // job 2 is 2100 ms old, job 3 1600 ms
    expect(b.take()?.id).toBe(job(3).id);
    expect(b.takeExpired().map((j) => j.id)).toEqual([job(2).id]);
    expect(b.takeExpired()).toEqual([]);
    expect(b.take()).toBeUndefined();
  });

  it("TTL › a row expires › the start rate is dropped: target 0 until jobs start again", () => {
    const { b, clock } = buffer(500, 2000);
    b.noteClaim(2);
    steadyStarts(b, clock, 10, 5 * RATE_WINDOW_MS);
    b.offer([job(1)], clock.t);
    clock.t += 2001;
    b.sweep();
    expect(b.takeExpired()).toHaveLength(1);
    expect(b.target()).toBe(0);
    steadyStarts(b, clock, 10, 5 * RATE_WINDOW_MS);
    expect(b.target()).toBeGreaterThan(0);
  });

  it("sweep › rows parked past their TTL › set aside without a take; msUntilExpiry says when", () => {
    const { b, clock } = buffer(500, 2000);
    b.offer([job(1)], clock.t);
    clock.t += 300;
    b.offer([job(2)], clock.t);
    expect(b.msUntilExpiry()).toBe(1700);
    clock.t += 1800;
    b.sweep();
    expect(b.takeExpired().map((j) => j.id)).toEqual([job(1).id]);
    expect(b.size).toBe(1);
    expect(b.msUntilExpiry()).toBe(200);
  });

  it("close › drain start › every row returned in claim order, later offers refused", () => {
    const { b, clock } = buffer();
    b.offer([job(1), job(2), job(3)], clock.t);
    b.take();
    expect(b.close().map((j) => j.id)).toEqual([job(2).id, job(3).id]);
    expect(b.size).toBe(0);
    expect(b.offer([job(4)], clock.t).map((j) => j.id)).toEqual([job(4).id]);
    expect(b.take()).toBeUndefined();
    expect(b.close()).toEqual([]);
    expect(b.target()).toBe(0);
  });

  it("remove and has › a cancelled buffered row › taken out", () => {
    const { b, clock } = buffer();
    b.offer([job(1), job(2)], clock.t);
    expect(b.has(job(2).id)).toBe(true);
    expect(b.remove(job(2).id)?.id).toBe(job(2).id);
    expect(b.has(job(2).id)).toBe(false);
    expect(b.remove(job(2).id)).toBeUndefined();
    expect(b.size).toBe(1);
  });

  it("prefetchTtlMs › defaults and tight heartbeats › min(2 s, half the stale margin)", () => {
    expect(prefetchTtlMs(5, 30)).toBe(PREFETCH_TTL_CAP_MS);
    expect(prefetchTtlMs(0.2, 1)).toBe(400);
    expect(prefetchTtlMs(0.09, 0.1)).toBeCloseTo(5, 5);
  });
});
