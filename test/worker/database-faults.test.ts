/**
 * Database faults seen by a worker (memory backend behind a switch that makes calls fail like an
 * unreachable server): transient write failures are retried, never recorded as job failures; a
 * drain while the database is down stays bounded and ends with exit code 3.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

/**
 * A backend whose calls reject with ECONNREFUSED while `down` is true, or never answer while
 * `blackHole` is true (a network path that drops everything).
 */
function switchable<T extends object>(
  inner: T,
  state = { down: false, blackHole: false, failures: 0 },
) {
  const backend = new Proxy(inner, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      // The operations store shares the database: it is down (or a black hole) with it.
      if (prop === "admin") return switchable(value as object, state).backend;
      if (typeof value !== "function" || prop === "notifier" || prop === "subscribeCancel")
        return value;
      return (...args: unknown[]) => {
        if (state.blackHole) return new Promise(() => undefined);
        if (state.down) {
          state.failures += 1;
          return Promise.reject(
            Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
              code: "ECONNREFUSED",
            }),
          );
        }
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { backend, state };
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

/** A worker (shutdown_timeout 0.2 s) running a 100 ms job, behind a switchable backend. */
async function shortJobRunning() {
  const memory = await memoryBackend();
  const { backend, state } = switchable(memory);
  // The worker declares a heartbeat timeout of 0.3 s: recovery judges it by that.
  const soniq = instance(backend, {
    shutdownTimeout: 0.2,
    shutdownSettle: 0.1,
    heartbeatTimeout: 0.3,
  });
  const job = soniq.job({
    name: "short.job",
    handler: async () => new Promise((r) => setTimeout(() => r("ok"), 100)),
  });
  const id = await job.enqueue({});
  const worker = soniq.worker();
  await worker.start();
  await waitFor(async () => (await memory.jobGet({ id }))?.status === "processing");
  return { memory, state, worker, id };
}

describe("database faults", () => {
  it("an outcome that cannot be written while the database is away is written when it returns", async () => {
    const memory = await memoryBackend();
    const { backend, state } = switchable(memory);
    const soniq = instance(backend);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const job = soniq.job({
      name: "wait.gate",
      maxAttempts: 1,
      handler: async () => gate.then(() => "ok"),
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await memory.jobGet({ id }))?.status === "processing");
    state.down = true;
    release();
    await waitFor(() => state.failures >= 3, 5000, "failed writes");
    expect(await memory.jobGet({ id })).toMatchObject({ status: "processing", attempts: 0 });
    state.down = false;
    await waitFor(
      async () => (await memory.jobGet({ id }))?.status === "done",
      10_000,
      "written after recovery",
    );
    // Recorded once, as a success: the outage did not count as a failure or an attempt.
    expect(await memory.jobGet({ id })).toMatchObject({
      status: "done",
      attempts: 1,
      result: JSON.stringify("ok"),
      lastError: null,
    });
    expect(await memory.deadLetterGet({ id })).toBeNull();
    await expect(worker.stop()).resolves.toMatchObject({ exitCode: 0 });
  });

  it("a checkpoint written while the database is away resolves once it is back; no attempt is spent", async () => {
    // Found by chaos (PostgreSQL restart): ctx.checkpoint rejected with the connection error, the
    // handler failed and the job spent an attempt on the database's outage.
    const memory = await memoryBackend();
    const { backend, state } = switchable(memory);
    const soniq = instance(backend);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let checkpointed = false;
    const job = soniq.job({
      name: "walk.outage",
      maxAttempts: 1,
      handler: async (_args, ctx) => {
        await gate;
        await ctx.checkpoint({ at: 5 });
        checkpointed = true;
        return "walked";
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await memory.jobGet({ id }))?.status === "processing");
    state.down = true;
    release();
    await waitFor(() => state.failures >= 3, 5000, "failed writes");
    expect(checkpointed).toBe(false);
    expect(await memory.jobGet({ id })).toMatchObject({ status: "processing", attempts: 0 });
    state.down = false;
    await waitFor(
      async () => (await memory.jobGet({ id }))?.status === "done",
      10_000,
      "done after the database returned",
    );
    expect(checkpointed).toBe(true);
    expect(await memory.jobGet({ id })).toMatchObject({
      status: "done",
      attempts: 1,
      result: JSON.stringify("walked"),
      lastError: null,
    });
    await expect(worker.stop()).resolves.toMatchObject({ exitCode: 0 });
  });

  it("a drain while the database is down stays bounded and exits 3; the row is left for recovery", async () => {
    const { memory, state, worker, id } = await shortJobRunning();
    state.down = true;
    const t0 = Date.now();
    const exit = await worker.stop("SIGTERM");
    const elapsed = Date.now() - t0;
    expect(exit).toMatchObject({ reason: "record_failed", exitCode: 3 });
    // Bound: shutdown_timeout 0.2 s + 10 s record grace + 2 s for the worker row, with margin.
    expect(elapsed).toBeGreaterThan(5_000);
    expect(elapsed).toBeLessThan(0.2 * 1000 + 10_000 + 2_000 + 2_000);
    state.down = false;
    expect(await memory.jobGet({ id })).toMatchObject({ status: "processing", attempts: 0 });
    // Its worker is not live, so recovery hands the job back.
    const recovered = await memory.jobRecoverStale({
      staleAfterSeconds: 0.05,
      crashLoop: crashLoopRule(3),
    });
    expect(recovered.requeued.map((j) => j.id)).toEqual([id]);
  }, 30_000);

  it("a database that stops answering (black hole) cannot hang the drain: exit 3, bounded", async () => {
    const { memory, state, worker, id } = await shortJobRunning();
    state.blackHole = true;
    const t0 = Date.now();
    const exit = await worker.stop("SIGTERM");
    const elapsed = Date.now() - t0;
    expect(exit).toMatchObject({ reason: "record_failed", exitCode: 3 });
    // One write try times out at 10 s (past the 10 s record grace), the worker row at 2 s.
    expect(elapsed).toBeLessThan(10_000 + 2_000 + 3_000);
    expect(await memory.jobGet({ id })).toMatchObject({ status: "processing" });
  }, 30_000);

  it("rows taken by a claim whose answer was lost are released and run (the worker is live, so recovery would not)", async () => {
    const memory = await memoryBackend();
    let loseNextClaimAnswer = false;
    const backend = new Proxy(memory, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== "jobClaim" || typeof value !== "function")
          return typeof value === "function" ? value.bind(target) : value;
        return async (...args: unknown[]) => {
          const claimed = await (value as (...a: unknown[]) => Promise<unknown>).apply(
            target,
            args,
          );
          if (loseNextClaimAnswer && Array.isArray(claimed) && claimed.length > 0) {
            loseNextClaimAnswer = false;
            return new Promise(() => undefined); // committed, but the answer never arrives
          }
          return claimed;
        };
      },
    });
    const soniq = instance(backend);
    const job = soniq.job({ name: "lost.claim", handler: async () => "ran" });
    const worker = soniq.worker();
    await worker.start();
    loseNextClaimAnswer = true;
    const id = await job.enqueue({});
    await waitFor(async () => (await memory.jobGet({ id }))?.status === "processing");
    const done = await waitFor(
      async () => {
        const j = await memory.jobGet({ id });
        return j?.status === "done" ? j : null;
      },
      20_000,
      "released and run",
    );
    expect(done).toMatchObject({ attempts: 1, interruptions: 0 });
    await worker.stop();
  }, 30_000);

  it("after an outage longer than heartbeatTimeout, live workers' jobs are not 'recovered' (no duplicate runs)", async () => {
    const memory = await memoryBackend();
    const { backend, state } = switchable(memory);
    const soniq = instance(backend, { heartbeatInterval: 0.1, heartbeatTimeout: 0.5 });
    let runs = 0;
    const job = soniq.job({
      name: "long.job",
      handler: async () => {
        runs += 1;
        await new Promise((r) => setTimeout(r, 2500));
        return "ok";
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await memory.jobGet({ id }))?.status === "processing");
    await new Promise((r) => setTimeout(r, 300));
    state.down = true; // every heartbeat goes stale, this worker's too
    await new Promise((r) => setTimeout(r, 1200));
    state.down = false;
    await waitFor(async () => (await memory.jobGet({ id }))?.status === "done", 10_000, "done");
    expect(await memory.jobGet({ id })).toMatchObject({ attempts: 1, interruptions: 0 });
    expect(runs).toBe(1);
    await worker.stop();
  }, 30_000);
});
