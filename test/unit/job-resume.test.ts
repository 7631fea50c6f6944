/**
 * The write policy of checkpoints (worker/job-resume.ts, docs/checkpoints.md "Write policy"): at
 * most one write in flight per job; calls made meanwhile are coalesced into one next write that
 * carries the latest state; every call's promise resolves once a write carrying its state (or a
 * later one) is durable. The store is a recording function here (the fenced SQL itself is
 * covered on both engines by test/worker/checkpoints.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { JobCheckpointParams } from "../../src/backends/contract/index.js";
import { JobResume } from "../../src/worker/job-resume.js";
import { LazyAbortController } from "../../src/worker/lazy-abort-controller.js";

const OWNER = { workerId: "w1", claimToken: "01a2484d-04d6-706f-b1e2-2cdc457fdf7f" };

/** A store whose writes finish when the test says so. */
function gatedStore(answer = true) {
  const writes: JobCheckpointParams[] = [];
  const gates: Array<() => void> = [];
  const write = (params: JobCheckpointParams) =>
    new Promise<boolean>((resolve) => {
      writes.push(params);
      gates.push(() => resolve(answer));
    });
  return { writes, gates, deps: { write, maxPayloadBytes: 1000 } };
}

describe("JobResume write policy", () => {
  it("checkpoint › ten calls in one tick, then five while that write is in flight › two writes in all, each with the latest state; every call resolves once its state or a later one is durable", async () => {
    const store = gatedStore();
    const resume = new JobResume("j1", OWNER, undefined, new LazyAbortController(), store.deps);
    const settled: number[] = [];
    const call = (i: number) => resume.checkpoint({ i }).then(() => settled.push(i));
    const first = Array.from({ length: 10 }, (_, i) => call(i));
    await new Promise((r) => setTimeout(r, 0));
    expect(store.writes.map((w) => w.checkpoint)).toEqual(['{"i":9}']);
    const second = Array.from({ length: 5 }, (_, i) => call(10 + i));
    await new Promise((r) => setTimeout(r, 0));
    expect(store.writes).toHaveLength(1); // one write in flight at a time
    store.gates[0]?.();
    await Promise.all(first);
    expect(settled.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await new Promise((r) => setTimeout(r, 0));
    expect(store.writes.map((w) => w.checkpoint)).toEqual(['{"i":9}', '{"i":14}']);
    store.gates[1]?.();
    await Promise.all(second);
    expect(settled).toHaveLength(15);
    expect(store.writes).toHaveLength(2);
  });

  it("checkpoint › the store refuses the fence › CLAIM_LOST, the signal aborted with it, later calls refused without a write", async () => {
    const store = gatedStore(false);
    const controller = new LazyAbortController();
    const resume = new JobResume("j1", OWNER, undefined, controller, store.deps);
    const first = resume.checkpoint({ i: 1 });
    await Promise.resolve();
    store.gates[0]?.();
    await expect(first).rejects.toMatchObject({ code: "CLAIM_LOST" });
    expect(controller.signal.aborted).toBe(true);
    await expect(resume.checkpoint({ i: 2 })).rejects.toMatchObject({ code: "CLAIM_LOST" });
    expect(store.writes).toHaveLength(1);
  });

  it("step › options with a misspelt key, a non-boolean effect, a reconcile that is not a function or without effect › INVALID_ARGS, fn not run, nothing written", async () => {
    const store = gatedStore();
    const resume = new JobResume("j1", OWNER, undefined, new LazyAbortController(), store.deps);
    let ran = 0;
    const fn = async () => {
      ran += 1;
      return 1;
    };
    const bad = [
      { effekt: true },
      { effect: "yes" },
      { effect: true, reconcile: 5 },
      { reconcile: async () => ({ rerun: true as const }) },
      null,
    ];
    for (const [i, options] of bad.entries()) {
      await expect(resume.step(`s${i}`, fn, options as never)).rejects.toMatchObject({
        code: "INVALID_ARGS",
      });
    }
    expect(ran).toBe(0);
    expect(store.writes).toHaveLength(0);
  });
});
