// Workflows' retention (issue 29; docs/workflows.md, "Retention") on a SQLite file and on
// PostgreSQL: a flow, a batch, or a job enqueued with `after` is kept (its nodes and edges) until
// its last job is gone; the pruner's walk forgets it then, resuming where it stopped, and never
// forgets an open batch or a group with one job still stored.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import { Pruner } from "../../src/maintenance/pruner.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

function instanceOn(backend: Backend): Soniq {
  return new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
  });
}

/** Walks the whole node table once in steps of `limit`. → nodes deleted. */
async function walk(backend: Backend, limit: number): Promise<number> {
  let after: string | null = null;
  let pruned = 0;
  for (let steps = 0; steps < 1000; steps += 1) {
    const step: { next: string | null; pruned: number } = await backend.flows.flowPrune({
      after,
      limit,
    });
    pruned += step.pruned;
    after = step.next;
    if (after === null) return pruned;
  }
  throw new Error("the walk did not end");
}

describeEachBackend("workflows: retention", (target) => {
  it("prune › flows, batches and after-edges whose jobs are all gone › forgotten; open batches and groups with a stored job kept", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const step = soniq.job({ name: "wf.keep.step", handler: async () => "ok" });
    const gone = await soniq.flow({
      job: step,
      args: {},
      children: [0, 1, 2].map(() => ({ job: step, args: {} })),
    });
    const batch = await soniq.batch({
      jobs: [
        { job: step, args: {} },
        { job: step, args: {} },
      ],
      onComplete: { job: step, args: {} },
      onFailure: { job: step, args: {} },
    });
    const a = await step.enqueue({});
    const x = await step.enqueue({}, { after: [a] });
    const open = await soniq.batch({ jobs: [{ job: step, args: {} }], open: true });
    const kept = await soniq.flow({ job: step, args: {}, children: [{ job: step, args: {} }] });
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    const ended = async (id: string) => {
      const s = (await soniq.getJob(id))?.status;
      return s === "done" || s === "cancelled";
    };
    const all = [
      ...gone.ids,
      ...batch.ids,
      batch.callbacks.onComplete as string,
      batch.callbacks.onFailure as string,
      a,
      x,
      ...open.ids,
      ...kept.ids,
    ];
    await waitFor(async () => (await Promise.all(all.map(ended))).every(Boolean), 20_000);
    await worker.stop();
    expect(await walk(backend, 2)).toBe(0); // every job is still stored
    for (const id of all) if (id !== kept.id) await soniq.jobs.delete(id);
    // Steps of 2 nodes: groups straddle the windows.
    const pruned = await walk(backend, 2);
    // The flow's 4 nodes, the batch's 5 (itself, 2 members, 2 callbacks), x's.
    expect(pruned).toBe(10);
    expect(await backend.flows.flowGet({ flowId: gone.id })).toEqual([]);
    expect(await backend.flows.flowGet({ flowId: batch.id })).toEqual([]);
    expect(await backend.flows.flowDependencies({ jobId: x })).toEqual([]);
    expect(await backend.flows.flowDependencies({ jobId: gone.id })).toEqual([]);
    expect(await soniq.batches.get(open.id)).not.toBeNull();
    const stillKept = await soniq.flows.get(kept.id);
    expect(stillKept?.jobs.map((j) => j.state).sort()).toEqual(["done", "gone"]);
    // The last job goes: the pruner's next tick forgets the flow.
    await soniq.jobs.delete(kept.id);
    const pruner = new Pruner({ backend, logger: silent, intervalMs: 3_600_000 });
    await pruner.start();
    await pruner.runNow();
    await pruner.stop();
    expect(await soniq.flows.get(kept.id)).toBeNull();
    expect(await soniq.batches.get(open.id)).not.toBeNull();
    await soniq.close();
  });

  it("prune › a flow whose jobs' results expire › the pruner forgets the jobs (PostgreSQL: past the prune mark), then the flow", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const step = soniq.job({ name: "wf.keep.brief", resultRetention: 1, handler: async () => 1 });
    const flow = await soniq.flow({ job: step, args: {}, children: [{ job: step, args: {} }] });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await soniq.flows.get(flow.id))?.state === "done", 20_000);
    await worker.stop();
    const pruner = new Pruner({ backend, logger: silent, intervalMs: 3_600_000 });
    await pruner.start();
    await waitFor(async () => {
      await pruner.runNow();
      return (await soniq.flows.get(flow.id)) === null;
    }, 20_000);
    await pruner.stop();
    expect(await soniq.getJob(flow.id)).toBeNull();
    await soniq.close();
  });
});
