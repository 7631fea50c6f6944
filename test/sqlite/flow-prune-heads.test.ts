// SQLite migration 023 (docs/workflows.md, "Retention"): the flow-retention walk reads each
// group's head only (a flow's root, a batch's own node, a job enqueued with `after`), so a batch
// of many members is one row of the walk, not one per member — its statements run on the worker's
// own thread. The walk still forgets a group whose jobs are all gone and keeps the others.
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

describe("sqlite: the flow-retention walk reads group heads", () => {
  it("a batch of 200 members, a flow of 3 and two after-jobs › one step of 5 reads the 4 groups and ends; a group whose jobs are gone is forgotten, the rest kept", async () => {
    const backend = new SqliteBackend({ path: join(tempDir("soniq-flow-heads-"), "q.db") });
    const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
    await soniq.setup();
    const step = soniq.job({ name: "wf.heads.step", handler: async () => "ok" });
    const batch = await soniq.batch({
      jobs: Array.from({ length: 200 }, (_, i) => ({ job: step, args: { i } })),
      onComplete: { job: step, args: {} },
    });
    const flow = await soniq.flow({
      job: step,
      args: {},
      children: [0, 1, 2].map((i) => ({ job: step, args: { i } })),
    });
    const a = await step.enqueue({});
    const waiting = await step.enqueue({}, { after: [a] });
    const other = await step.enqueue({}, { after: [a] });
    // Every job is live: every group is kept, and the walk's one step covers them all.
    const first = await backend.flows.flowPrune({ after: null, limit: 5 });
    expect(first).toEqual({ next: null, pruned: 0 });
    // One group's only job gone (deleted while waiting): forgotten by the next walk.
    await soniq.jobs.delete(other);
    const second = await backend.flows.flowPrune({ after: null, limit: 5 });
    expect(second).toEqual({ next: null, pruned: 1 });
    const nodes = await backend.flows.flowGet({ flowId: batch.id });
    expect(nodes.filter((n) => n.role === "member")).toHaveLength(200);
    expect((await backend.flows.flowGet({ flowId: flow.id })).length).toBe(4);
    expect(await soniq.getJob(waiting)).not.toBeNull();
    await soniq.close();
  });
});
