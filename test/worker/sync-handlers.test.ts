/** Sync (worker-thread) handlers on the memory backend: the contract's sync branch. */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { type MetricsSink, Soniq } from "../../src/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const HANDLERS = new URL("../fixtures/thread-handlers.mjs", import.meta.url);
const TS_HANDLER = new URL("../fixtures/thread-handler.ts", import.meta.url);

async function instance(extra: Record<string, unknown> = {}) {
  const backend = await memoryBackend();
  const events: Array<{ name: string; payload: Record<string, unknown> }> = [];
  const metrics: MetricsSink = { emit: (name, payload) => void events.push({ name, payload }) };
  const soniq = new Soniq({
    backend,
    metrics,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...extra,
  });
  return { soniq, backend, events };
}

type Block = { ms: number; cooperative?: boolean };

describe("sync handlers on worker threads", () => {
  it("run on a thread with their context; TypeScript handler modules work without a build", async () => {
    const { soniq } = await instance();
    const block = soniq.syncJob<Block>({
      name: "t.block",
      handlerModule: HANDLERS,
      exportName: "block",
    });
    const cpu = soniq.syncJob<{ n: number }>({ name: "t.cpu", handlerModule: HANDLERS });
    const greet = soniq.syncJob<{ who: string }>({ name: "t.greet", handlerModule: TS_HANDLER });
    const a = await block.enqueue({ ms: 20 });
    const b = await cpu.enqueue({ n: 1000 });
    const c = await greet.enqueue({ who: "ts" });
    let done = 0;
    const threeDone = waitForEvent(soniq, "job_done", () => ++done === 3, 20_000);
    const worker = soniq.worker();
    await worker.start();
    await threeDone;
    await worker.stop();
    expect((await soniq.getJob(a))?.result).toMatchObject({ slept: 20, attempt: 1, jobId: a });
    expect((await soniq.getJob(b))?.result).toEqual({ total: 21066 });
    expect((await soniq.getJob(c))?.result).toBe("hello ts from attempt 1");
  });

  it("a thrown error fails the attempt and reaches the DLQ like any failure", async () => {
    const { soniq } = await instance();
    const bad = soniq.syncJob({
      name: "t.explode",
      handlerModule: HANDLERS,
      exportName: "explode",
      maxAttempts: 1,
    });
    const id = await bad.enqueue({});
    const deadLettered = waitForEvent(soniq, "job_dead_lettered", (e) => e.job_id === id, 20_000);
    const worker = soniq.worker();
    await worker.start();
    await deadLettered;
    const dead = (await soniq.getDeadLetter(id))!;
    await worker.stop();
    expect(dead).toMatchObject({ attempts: 1, reason: "max_attempts_exceeded" });
    expect(dead.lastError).toContain("thread exploded");
  });

  it("at most syncHandlerPoolSize run at once; the permit is taken after the claim", async () => {
    const { soniq } = await instance({ syncHandlerPoolSize: 1, concurrency: 4 });
    const block = soniq.syncJob<Block>({
      name: "t.block",
      handlerModule: HANDLERS,
      exportName: "block",
    });
    const ids = await Promise.all([
      block.enqueue({ ms: 200 }),
      block.enqueue({ ms: 200 }),
      block.enqueue({ ms: 200 }),
    ]);
    let done = 0;
    const threeDone = waitForEvent(soniq, "job_done", () => ++done === 3, 20_000);
    const worker = soniq.worker();
    await worker.start();
    // All three are claimed (processing) while only one runs.
    await waitFor(async () => (await soniq.stats()).processing === 3, 10_000, "three claimed");
    await threeDone;
    await worker.stop();
    const spans = await Promise.all(
      ids.map(async (id) => (await soniq.getJob(id))?.result as { start: number; end: number }),
    );
    spans.sort((x, y) => x.start - y.start);
    for (let i = 1; i < spans.length; i++)
      expect(spans[i]!.start).toBeGreaterThanOrEqual(spans[i - 1]!.end);
  });

  it("job_timeout records a failure (attempt counted); the thread keeps its permit; its late result is discarded", async () => {
    const { soniq } = await instance({ syncHandlerPoolSize: 1 });
    const slow = soniq.syncJob<Block>({
      name: "t.slow",
      handlerModule: HANDLERS,
      exportName: "block",
      timeout: 0.5,
      maxAttempts: 3,
      retry: { kind: "fixed", delay: 3600 },
    });
    const quick = soniq.syncJob<Block>({
      name: "t.quick",
      handlerModule: HANDLERS,
      exportName: "block",
    });
    const worker = soniq.worker();
    await worker.start();
    // The pool's one thread is started and has loaded the module before the slow job comes: a
    // timeout that fires while the task still waits for a thread takes it back unstarted and
    // frees the permit at once (on a loaded machine the thread's start took over 0.2 s).
    const warm = waitForEvent(soniq, "job_done", (e) => e.job_name === "t.quick");
    await quick.enqueue({ ms: 1 });
    await warm;
    // The thread blocks 3 s, so the quick job waits for its permit well past the timeout's
    // event even when that event comes late.
    const slowId = await slow.enqueue({ ms: 3000 });
    const timedOut = waitForEvent(soniq, "job_failed", (e) => e.job_id === slowId);
    await timedOut;
    const t0 = Date.now();
    const quickDone = waitForEvent(soniq, "job_done", (e) => e.job_name === "t.quick");
    const quickId = await quick.enqueue({ ms: 1 });
    expect(await soniq.getJob(slowId)).toMatchObject({ status: "queued", attempts: 1 });
    expect((await soniq.getJob(slowId))?.lastError).toContain("JobTimeoutError");
    // The quick job waits for the permit the timed-out thread still holds.
    expect((await quickDone).job_id).toBe(quickId);
    expect(Date.now() - t0).toBeGreaterThan(500);
    await worker.stop();
    expect(await soniq.getJob(slowId)).toMatchObject({
      status: "queued",
      attempts: 1,
      result: null,
    });
  });

  it("shutdown: a thread that returns inside the grace is recorded done, never NACK'd (exit 1)", async () => {
    const { soniq, events } = await instance({ shutdownTimeout: 0.2, syncHandlerGraceSeconds: 5 });
    const block = soniq.syncJob<Block>({
      name: "t.block",
      handlerModule: HANDLERS,
      exportName: "block",
    });
    const id = await block.enqueue({ ms: 1000 });
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing");
    await new Promise((r) => setTimeout(r, 100));
    const exit = await worker.stop("SIGTERM");
    expect(exit).toEqual({ reason: "shutdown_timeout", exitCode: 1, released: [] });
    expect(await soniq.getJob(id)).toMatchObject({ status: "done", attempts: 1 });
    expect(events.map((e) => e.name)).toContain("wait_for_thread");
    expect(events.map((e) => e.name)).not.toContain("shutdown_nack");
  });

  it("shutdown: a thread that outlives the flat grace is still waited for, then recorded", async () => {
    const { soniq } = await instance({ shutdownTimeout: 0.2, syncHandlerGraceSeconds: 0.2 });
    const block = soniq.syncJob<Block>({
      name: "t.block",
      handlerModule: HANDLERS,
      exportName: "block",
    });
    const id = await block.enqueue({ ms: 1500 });
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing");
    const t0 = Date.now();
    const stopping = worker.stop("SIGTERM");
    await new Promise((r) => setTimeout(r, 700)); // past shutdown_timeout + grace
    expect(worker.state).toBe("WAIT_FOR_THREAD");
    expect(await soniq.getJob(id)).toMatchObject({ status: "processing" });
    const exit = await stopping;
    expect(Date.now() - t0).toBeGreaterThan(900);
    expect(exit.exitCode).toBe(1);
    expect(await soniq.getJob(id)).toMatchObject({ status: "done", attempts: 1 });
  });

  it("shutdown: the thread can observe the stop request; a job still waiting for a permit is NACK'd", async () => {
    const { soniq, events } = await instance({
      shutdownTimeout: 0.3,
      syncHandlerPoolSize: 1,
      concurrency: 2,
    });
    const block = soniq.syncJob<Block>({
      name: "t.block",
      handlerModule: HANDLERS,
      exportName: "block",
    });
    const running = await block.enqueue({ ms: 10_000, cooperative: true });
    const waiting = await block.enqueue({ ms: 10_000, cooperative: true }, { priority: 5 });
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.stats()).processing === 2, 10_000, "both claimed");
    const exit = await worker.stop("SIGTERM");
    expect(exit.exitCode).toBe(1);
    expect(exit.released).toEqual([waiting]);
    expect(await soniq.getJob(running)).toMatchObject({
      status: "done",
      result: { stopped: "shutdown_timeout" },
    });
    expect(await soniq.getJob(waiting)).toMatchObject({
      status: "queued",
      attempts: 0,
      workerId: null,
    });
    expect(events.find((e) => e.name === "shutdown_nack")?.payload).toMatchObject({
      job_id: waiting,
      reason: "shutdown_timeout",
    });
  });

  it("a thread handler can return snooze(): run again later, attempt not spent", async () => {
    const { soniq } = await instance();
    const { tempDir, removeTempDirs } = await import("../helpers/temp.js");
    const marker = `${tempDir()}/marker`;
    const later = soniq.syncJob<{ marker: string }>({
      name: "t.snooze",
      handlerModule: HANDLERS,
      exportName: "snoozeOnce",
    });
    const id = await later.enqueue({ marker });
    const finished = waitForEvent(soniq, "job_done", (e) => e.job_id === id, 20_000);
    const worker = soniq.worker();
    await worker.start();
    await finished;
    const done = await soniq.getJob(id);
    await worker.stop();
    removeTempDirs();
    expect(done).toMatchObject({ attempts: 1, result: "finished after a snooze" });
  });

  it("rejects a missing or relative handler module at definition", async () => {
    const { soniq } = await instance();
    expect(() =>
      soniq.syncJob({ name: "t.missing", handlerModule: new URL("./nope.mjs", HANDLERS) }),
    ).toThrow(/INVALID_OPTION/);
    expect(() =>
      soniq.syncJob({ name: "t.relative", handlerModule: "./thread-handlers.mjs" }),
    ).toThrow(/INVALID_OPTION/);
  });
});
