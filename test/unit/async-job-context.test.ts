// The async handler's ctx: its lazy parts (signal, logger) behave like plain properties —
// destructured, spread, assigned, read twice — and create nothing until read.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../../src/backends/contract/index.js";
import { AsyncJobContext } from "../../src/worker/async-job-context.js";
import type { InFlight } from "../../src/worker/in-flight.js";
import { LazyAbortController } from "../../src/worker/lazy-abort-controller.js";

function entryOf(meta: string | null): InFlight {
  const job: ClaimedJob = {
    id: "0192f0c4-0000-7000-8000-000000000001",
    name: "ctx.job",
    queue: "default",
    args: "{}",
    priority: 0,
    attempts: 2,
    maxAttempts: 5,
    interruptions: 0,
    unchargedRecoveries: 0,
    scheduledAt: new Date(1_000),
    createdAt: new Date(500),
    workerId: "w1",
    claimToken: "0192f0c4-0000-7000-8000-000000000002",
    meta,
    traceContext: null,
    version: 1,
  };
  return {
    job,
    owner: { workerId: "w1", claimToken: job.claimToken },
    controller: new LazyAbortController(),
    cancel: new LazyAbortController(),
    holdsSlot: true,
    progress: null,
    progressDirty: false,
    progressSeq: 0,
    done: Promise.resolve(),
  };
}

describe("AsyncJobContext", () => {
  it("carries the job's fields; a destructured progress reports into the entry", () => {
    const entry = entryOf(null);
    const ctx = new AsyncJobContext(entry, pino({ level: "silent" }), "w1");
    expect(ctx).toMatchObject({
      jobId: entry.job.id,
      name: "ctx.job",
      attempt: 3,
      maxAttempts: 5,
      queue: "default",
      workerId: "w1",
      createdAt: new Date(500),
      scheduledAt: new Date(1_000),
    });
    expect(ctx.schedule).toBeUndefined();
    const { progress } = ctx;
    expect(ctx.progress).toBe(progress);
    progress(0.5, "half");
    expect(entry.progress).toEqual({ fraction: 0.5, message: "half" });
    expect(entry.progressDirty).toBe(true);
    expect(() => progress(2)).toThrow(/0/);
  });

  it("signal: the entry's (created on first read, aborted with it) until assigned", () => {
    const entry = entryOf(null);
    const ctx = new AsyncJobContext(entry, pino({ level: "silent" }), "w1");
    const first = ctx.signal;
    expect(first).toBe(entry.controller.signal);
    const reason = new Error("deadline");
    entry.controller.abort(reason);
    expect(ctx.signal.reason).toBe(reason);
    const own = new AbortController();
    ctx.signal = own.signal;
    expect(ctx.signal).toBe(own.signal);
  });

  it("schedule: read from the job's meta; logger: the job logger's child", () => {
    const entry = entryOf(
      JSON.stringify({ schedule: { id: "nightly", occurrence: "2026-01-01T00:00:00.000Z" } }),
    );
    const parent = pino({ level: "silent" });
    const ctx = new AsyncJobContext(entry, parent, "w1");
    expect(ctx.schedule).toEqual({
      id: "nightly",
      occurrence: new Date("2026-01-01T00:00:00.000Z"),
      late: false,
      manual: false,
    });
    expect(ctx.schedule).toBe(ctx.schedule);
    expect(ctx.logger).toBe(parent);
  });

  it("a spread copy or Object.keys sees every field, the lazy ones included (found by a breaker)", () => {
    const entry = entryOf(null);
    const parent = pino({ level: "silent" });
    const ctx = new AsyncJobContext(entry, parent, "w1");
    expect(Object.keys(ctx).sort()).toEqual(
      [
        "attempt",
        "checkpoint",
        "createdAt",
        "jobId",
        "logger",
        "maxAttempts",
        "name",
        "progress",
        "queue",
        "resume",
        "schedule",
        "scheduledAt",
        "signal",
        "step",
        "workerId",
      ].sort(),
    );
    const copy = { ...ctx, step: 1 };
    expect(copy.signal).toBe(entry.controller.signal);
    expect(copy.logger).toBe(parent);
    copy.progress(0.25);
    expect(entry.progress).toEqual({ fraction: 0.25, message: null });
    expect("schedule" in copy).toBe(true);
  });
});
