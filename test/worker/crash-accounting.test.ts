/**
 * Crash accounting and the start gate on the memory backend: the happy path writes no start mark
 * (a count of every backend call per job), a job with a crash history writes one and runs alone,
 * nothing starts after FORCE_TIMEOUT_PATH, and the start isolation's lock keeps its order.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { StartIsolation } from "../../src/worker/start-isolation.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

/** The memory backend, with every call counted by method name. */
async function counted(): Promise<{ backend: Backend; calls: Map<string, number> }> {
  const inner = await memoryBackend();
  const calls = new Map<string, number>();
  const backend = new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function" || typeof key !== "string") return value;
      return (...args: unknown[]) => {
        calls.set(key, (calls.get(key) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { backend, calls };
}

function instance(backend: Backend, extra: Record<string, unknown> = {}) {
  return new Soniq({
    backend,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...extra,
  });
}

describe("crash accounting on the memory backend", () => {
  it("worker › jobs without a crash history › no start mark, one completion write per job", async () => {
    const { backend, calls } = await counted();
    const soniq = instance(backend);
    const job = soniq.job({ name: "work.it", handler: async () => "ok" });
    const ids = await Promise.all(Array.from({ length: 20 }, () => job.enqueue({})));
    const worker = soniq.worker({ concurrency: 5 });
    await worker.start();
    await waitFor(async () => (await soniq.stats()).done === 20, 10_000, "all done");
    await worker.stop();
    expect(calls.get("jobMarkStarted") ?? 0).toBe(0);
    // Per job, the only row write after the claim is its completion (batched).
    expect(calls.get("jobComplete") ?? 0).toBe(0);
    expect(calls.get("jobCompleteMany")).toBeLessThanOrEqual(20);
    for (const id of ids) {
      expect(await backend.jobGet({ id })).toMatchObject({ status: "done", startKnown: false });
    }
  });

  it("worker › a job with a crash history › one start mark before it runs, and it runs alone", async () => {
    const { backend, calls } = await counted();
    const soniq = instance(backend);
    let running = 0;
    let overlapWithSuspect = false;
    let suspectRunning = false;
    soniq.job({
      name: "work.it",
      handler: async (args: { suspect: boolean }) => {
        running += 1;
        if (args.suspect) suspectRunning = true;
        if (suspectRunning && running > 1) overlapWithSuspect = true;
        await new Promise((r) => setTimeout(r, 50));
        if (args.suspect) suspectRunning = false;
        running -= 1;
        return null;
      },
    });
    const suspect = await soniq.enqueue("work.it", { suspect: true }, { priority: 1 });
    // A crash while it was claimed (not known started): an uncharged recovery gives it history.
    await backend.jobClaim({ workerId: "gone", queues: null, limit: 1, deferStart: true });
    const r = await backend.jobRecoverStale({ crashLoop: crashLoopRule(3) });
    expect(r.requeued).toMatchObject([{ id: suspect, charged: false, interruptions: 0 }]);
    const others = await Promise.all(
      [0, 1, 2, 3].map(() => soniq.enqueue("work.it", { suspect: false }, { priority: 0 })),
    );
    const worker = soniq.worker({ concurrency: 5 });
    await worker.start();
    await waitFor(async () => (await soniq.stats()).done === 5, 10_000, "all done");
    await worker.stop();
    expect(calls.get("jobMarkStarted")).toBe(1);
    expect(overlapWithSuspect).toBe(false);
    expect(await backend.jobGet({ id: suspect })).toMatchObject({
      status: "done",
      interruptions: 0,
      unchargedRecoveries: 1,
      startKnown: true,
    });
    for (const id of others) expect(await backend.jobGet({ id })).toMatchObject({ status: "done" });
  });

  it("worker › FORCE_TIMEOUT_PATH while the argument schema still runs › abandoned, NACK'd, the handler never starts", async () => {
    const backend = await memoryBackend();
    const soniq = instance(backend);
    let started = false;
    soniq.job({
      name: "slow.schema",
      args: {
        "~standard": {
          version: 1,
          vendor: "test",
          validate: (value: unknown) =>
            new Promise<{ value: unknown }>((r) => setTimeout(() => r({ value }), 2000)),
        },
      },
      handler: async () => {
        started = true;
        return null;
      },
    });
    const id = await soniq.enqueue("slow.schema", {});
    const worker = soniq.worker({ shutdownTimeout: 0.2, shutdownSettle: 0.1 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing", 5000, "claimed");
    const t0 = Date.now();
    const exit = await worker.stop();
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(exit).toEqual({ reason: "shutdown_timeout", exitCode: 1, released: [id] });
    await new Promise((r) => setTimeout(r, 2100)); // the abandoned check ends; nothing follows
    expect(started).toBe(false);
    expect(await soniq.getJob(id)).toMatchObject({ status: "queued", attempts: 0 });
  });
});

describe("StartIsolation", () => {
  it("start isolation › an exclusive start › waits for shared ones and holds later ones back (FIFO)", async () => {
    const lock = new StartIsolation();
    const order: string[] = [];
    const a = await lock.acquire(false);
    const ex = lock.acquire(true).then((release) => {
      order.push("exclusive");
      return release;
    });
    const b = lock.acquire(false).then((release) => {
      order.push("shared-after");
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    a();
    const releaseEx = await ex;
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual(["exclusive"]);
    expect(lock.running).toBe(1);
    releaseEx();
    (await b)();
    expect(order).toEqual(["exclusive", "shared-after"]);
    expect(lock.running).toBe(0);
  });

  it("start isolation › an aborted wait › rejects and lets the next waiter in", async () => {
    const lock = new StartIsolation();
    const held = await lock.acquire(false);
    const abort = new AbortController();
    const ex = lock.acquire(true, abort.signal);
    const shared = lock.acquire(false);
    abort.abort(new Error("forced"));
    await expect(ex).rejects.toThrow("forced");
    (await shared)();
    held();
    expect(lock.running).toBe(0);
  });
});
