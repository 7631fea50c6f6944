/** A worker's typed events on the memory backend: their order, payloads, and that no listener can strand a job. */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq, snooze } from "../../src/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

async function instance(extra: Record<string, unknown> = {}) {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "warn" },
    { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const soniq = new Soniq({
    backend: await memoryBackend(),
    logger,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...extra,
  });
  return { soniq, logs };
}

describe("worker events", () => {
  it("worker events › a job done, one snoozed, one failed to the DLQ, then stop › each reported once, in order, with its fields", async () => {
    const { soniq } = await instance();
    const seen: Array<{ name: string; payload: Readonly<Record<string, unknown>> }> = [];
    soniq.events.onAny((name, payload) => void seen.push({ name, payload }));
    let snoozed = false;
    const ok = soniq.job({ name: "e.ok", handler: async () => "fine" });
    const later = soniq.job({
      name: "e.later",
      handler: async () => {
        if (snoozed) return "woke";
        snoozed = true;
        return snooze(0.05);
      },
    });
    const bad = soniq.job({
      name: "e.bad",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("no");
      },
    });
    const okId = await ok.enqueue({});
    const laterId = await later.enqueue({});
    const badId = await bad.enqueue({});
    seen.length = 0; // job_enqueued × 3, checked below
    let done = 0;
    const twoDone = waitForEvent(soniq, "job_done", () => ++done === 2);
    const dead = waitForEvent(soniq, "job_dead_lettered", (e) => e.job_id === badId);
    const worker = soniq.worker();
    await worker.start();
    await Promise.all([twoDone, dead]);
    const exit = await worker.stop("SIGTERM");
    expect(exit.exitCode).toBe(0);
    const names = seen.map((e) => e.name);
    expect(names[0]).toBe("worker_started");
    expect(names.slice(-2)).toEqual(["drain_started", "worker_stopped"]);
    expect(seen[0]?.payload).toEqual({
      worker_id: worker.id,
      concurrency: soniq.settings.concurrency,
      queues: null,
      backend: "memory",
    });
    const forJob = (id: string) => seen.filter((e) => e.payload.job_id === id).map((e) => e.name);
    expect(forJob(okId)).toEqual(["job_started", "job_done"]);
    expect(forJob(laterId)).toEqual(["job_started", "job_snoozed", "job_started", "job_done"]);
    expect(forJob(badId)).toEqual(["job_started", "job_dead_lettered"]);
    expect(
      seen.find((e) => e.payload.job_id === badId && e.name === "job_dead_lettered")?.payload,
    ).toMatchObject({ queue: "default", reason: "max_attempts_exceeded" });
    expect(seen.find((e) => e.name === "job_started")?.payload).toMatchObject({
      worker_id: worker.id,
      queue: "default",
      attempt: 1,
      wait_ms: expect.any(Number),
      trace_context: null,
    });
    const doneEvent = seen.find((e) => e.name === "job_done")?.payload;
    expect(doneEvent).toMatchObject({ worker_id: worker.id, job_name: expect.any(String) });
    expect(typeof doneEvent?.duration_ms).toBe("number");
    expect(seen.at(-2)?.payload).toMatchObject({ worker_id: worker.id, signal: "SIGTERM" });
    expect(seen.at(-1)?.payload).toEqual({
      worker_id: worker.id,
      exit_reason: "drained",
      exit_code: 0,
    });
  });

  it("worker events › every listener throws or rejects › jobs are still recorded, the worker drains cleanly, failures are logged", async () => {
    const { soniq, logs } = await instance();
    soniq.events.onAny(() => {
      throw new Error("sync listener broke");
    });
    soniq.events.onAny(async () => {
      throw new Error("async listener broke");
    });
    const ok = soniq.job({ name: "e.ok", handler: async () => "fine" });
    const id = await ok.enqueue({});
    const done = waitForEvent(soniq, "job_done", (e) => e.job_id === id);
    const worker = soniq.worker();
    await worker.start();
    await done;
    await expect(worker.stop()).resolves.toMatchObject({ exitCode: 0, reason: "drained" });
    expect(await soniq.getJob(id)).toMatchObject({ status: "done", result: "fine" });
    await new Promise((resolve) => setImmediate(resolve));
    const failures = logs.filter((l) => l.msg === "event listener failed; ignored");
    expect(failures.map((l) => l.event)).toContain("job_done");
    expect(failures.map((l) => l.event)).toContain("worker_stopped");
  });
});
