// The claim loop on the memory backend: fills the free slots only, wakes on a freed slot, stops;
// a claim answered past the start TTL starts none of its rows. The hand-off's delivery past the
// start TTL likewise.
import { describe, expect, it } from "vitest";
import type { ClaimedJob } from "../../src/backends/contract/index.js";
import { ClaimLoop, type ClaimLoopOptions } from "../../src/worker/claim-loop.js";
import { WorkerHandOff } from "../../src/worker/hand-off.js";
import { waitFor } from "../helpers/wait.js";
import { silent, workerParts } from "../helpers/worker-parts.js";

/** The options every loop here shares: worker `w1`, 2 slots, a 20 ms poll, no logs. */
function baseOptions(parts: Pick<ClaimLoopOptions, "backend" | "table" | "latch">) {
  return {
    ...parts,
    workerId: "w1",
    queues: null,
    names: () => null,
    concurrency: 2,
    pollIntervalSeconds: 0.02,
    logger: silent,
  };
}

describe("ClaimLoop", () => {
  it("run › more jobs than slots › claims only the free slots, the rest after a slot frees", async () => {
    const { soniq, backend, table, latch } = await workerParts((s) => {
      s.job({ name: "claim.job", handler: async () => 1 });
    });
    for (let i = 0; i < 3; i += 1) await soniq.enqueue("claim.job", { i });
    const release: Array<() => void> = [];
    const dispatched: ClaimedJob[] = [];
    const loop = new ClaimLoop({
      ...baseOptions({ backend, table, latch }),
      dispatch: (job) => {
        dispatched.push(job);
        table.track(
          job,
          () => new Promise<void>((r) => release.push(r)),
          async () => {},
        );
      },
      releaseLate: () => undefined,
    });
    await loop.start();
    await waitFor(() => dispatched.length === 2);
    expect(table.busySlots).toBe(2);
    expect((await backend.jobStats()).queued).toBe(1);
    release.shift()?.();
    await waitFor(() => dispatched.length === 3, 5_000, "third claim after a slot freed");
    await loop.stop();
    expect(loop.state).toBe("idle");
    for (const r of release) r();
    await table.settled();
  });

  it("run › a claim answered past the start TTL (a freeze) › none of its rows starts, all NACK'd (ttl) in one write", async () => {
    // Found by the prefetch e2e run: a worker frozen with a claim in flight started that claim's
    // rows straight into free slots after SIGCONT, though recovery had requeued them meanwhile.
    const { soniq, backend, table, latch } = await workerParts((s) => {
      s.job({ name: "claim.job", handler: async () => 1 });
    });
    for (let i = 0; i < 3; i += 1) await soniq.enqueue("claim.job", { i });
    const clock = { t: 1_000_000 };
    const claim = backend.jobClaim.bind(backend);
    let frozenOnce = false;
    backend.jobClaim = async (params) => {
      const rows = await claim(params);
      if (!frozenOnce && rows.length > 0) {
        frozenOnce = true;
        clock.t += 3000; // the answer comes 3 s after the claim was sent
      }
      return rows;
    };
    const dispatched: ClaimedJob[] = [];
    const released: Array<{ jobs: ClaimedJob[]; reason: string }> = [];
    const loop = new ClaimLoop({
      ...baseOptions({ backend, table, latch }),
      now: () => clock.t,
      startTtlMs: 2000,
      dispatch: (job) => {
        dispatched.push(job);
        table.track(
          job,
          async () => undefined,
          async () => {},
        );
      },
      releaseLate: () => undefined,
      releaseUnstarted: async (jobs, reason) => {
        released.push({ jobs, reason });
        await backend.jobNackMany({
          items: jobs.map((j) => ({
            id: j.id,
            owner: { workerId: j.workerId, claimToken: j.claimToken },
          })),
        });
      },
    });
    await loop.start();
    await waitFor(() => released.length === 1 && dispatched.length > 0, 5_000, "NACK, then runs");
    const nacked = released[0]?.jobs ?? [];
    expect(released[0]?.reason).toBe("ttl");
    expect(nacked).toHaveLength(2);
    // Back to queued and claimed again by the next, timely claims: run then, never from the late one.
    await waitFor(() => dispatched.length === 3, 5_000, "every job run");
    const lateTokens = new Set(nacked.map((j) => j.claimToken));
    expect(dispatched.filter((j) => lateTokens.has(j.claimToken))).toEqual([]);
    expect(new Set(dispatched.map((j) => j.id)).size).toBe(3);
    await loop.stop();
    await table.settled();
  });

  it("hand-off › a job name the worker has no definition for › no reservation (it would never claim it)", async () => {
    const { table, machine } = await workerParts(() => undefined);
    const handOff = new WorkerHandOff({
      workerId: "w1",
      queues: null,
      canRun: (name) => name === "known.job",
      concurrency: 2,
      table,
      machine,
      logger: silent,
      idle: () => true,
      dispatch: () => undefined,
      releaseLate: () => undefined,
    });
    expect(handOff.reserve("default", "new.job")).toBeUndefined();
    const granted = handOff.reserve("default", "known.job");
    expect(granted?.workerId).toBe("w1");
    granted?.cancel();
  });

  it("hand-off › a row delivered past the start TTL › released unstarted, never dispatched", async () => {
    const { table, machine } = await workerParts(() => undefined);
    const clock = { t: 1_000_000 };
    const dispatched: string[] = [];
    const releasedLate: string[] = [];
    const handOff = new WorkerHandOff({
      workerId: "w1",
      queues: null,
      canRun: () => true,
      concurrency: 2,
      table,
      machine,
      logger: silent,
      idle: () => true,
      dispatch: (job) => dispatched.push(job.id),
      releaseLate: (job) => releasedLate.push(job.id),
      startTtlMs: 2000,
      now: () => clock.t,
    });
    const job = (id: string) => ({ id }) as ClaimedJob;
    const timely = handOff.reserve("default", "any.job");
    timely?.deliver(job("timely"));
    await waitFor(() => dispatched.length === 1, 2_000, "the timely row dispatched");
    const late = handOff.reserve("default", "any.job");
    clock.t += 2500; // frozen between the reservation and the reply
    late?.deliver(job("late"));
    await waitFor(() => dispatched.length + releasedLate.length === 2, 2_000, "both settled");
    expect(dispatched).toEqual(["timely"]);
    expect(releasedLate).toEqual(["late"]);
  });
});
