/** Crash recovery driven by workers: at start-up and from the leader's heartbeat clock. */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { memoryBackend } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

async function instance(extra: Record<string, unknown> = {}) {
  const backend = await memoryBackend();
  const soniq = new Soniq({
    backend,
    logger: pino({ level: "silent" }),
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    heartbeatTimeout: 0.5,
    ...extra,
  });
  return { soniq, backend };
}

describe("recovery through the worker", () => {
  it("a worker starting up requeues and runs a dead worker's job; attempts count only the run", async () => {
    const { soniq, backend } = await instance();
    const job = soniq.job({ name: "work.it", handler: async () => "ran" });
    const id = await job.enqueue({});
    // A worker that claimed it and died without a trace (no worker row).
    await backend.jobClaim({ workerId: "dead-incarnation", queues: null, limit: 1 });
    const worker = soniq.worker();
    await worker.start();
    const done = await waitFor(async () => {
      const j = await soniq.getJob(id);
      return j?.status === "done" ? j : null;
    });
    await worker.stop();
    expect(done).toMatchObject({ attempts: 1, interruptions: 1, result: "ran" });
  });

  it("the leader requeues the job of a worker that stopped heartbeating, within the stale window", async () => {
    const { soniq, backend } = await instance();
    const job = soniq.job({ name: "work.it", handler: async () => "ran" });
    // A zombie: registered (live for now), claims the job, then never heartbeats again.
    await backend.workerRegister({
      id: "zombie",
      hostname: "h",
      pid: 9,
      queues: null,
      concurrency: 1,
    });
    const id = await job.enqueue({});
    const [claimed] = await backend.jobClaim({ workerId: "zombie", queues: null, limit: 1 });
    expect(claimed?.id).toBe(id);
    const t0 = Date.now();
    const worker = soniq.worker();
    await worker.start(); // the zombie is still live: start-up recovery leaves its row alone
    expect(await soniq.getJob(id)).toMatchObject({ status: "processing", workerId: "zombie" });
    const done = await waitFor(async () => {
      const j = await soniq.getJob(id);
      return j?.status === "done" ? j : null;
    }, 10_000);
    // Stale after heartbeatTimeout (0.5 s), then one maintenance tick (0.1 s) and a claim.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(done).toMatchObject({ attempts: 1, interruptions: 1 });
    await worker.stop();
  });

  it("a job that keeps killing its worker ends in the DLQ as crash_loop", async () => {
    const { soniq, backend } = await instance({ maxInterruptions: 1 });
    soniq.job({ name: "poison.pill", handler: async () => "never" });
    const id = await soniq.enqueue("poison.pill", {});
    await backend.jobClaim({ workerId: "victim-1", queues: null, limit: 1 });
    expect(
      (await backend.jobRecoverStale({ staleAfterSeconds: 0.5, crashLoop: crashLoopRule(1) }))
        .requeued,
    ).toHaveLength(1);
    await backend.jobClaim({ workerId: "victim-2", queues: null, limit: 1 });
    const worker = soniq.worker();
    await worker.start(); // start-up recovery: second interruption > maxInterruptions
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await worker.stop();
    expect(dead).toMatchObject({ reason: "crash_loop", attempts: 0, interruptions: 2 });
  });
});
