// Every way a batch's member (or a flow's root) ends counts it, once (issue 29; docs/workflows.md,
// "Batches" and "Knowing when a flow or batch finished"), on a SQLite file and on PostgreSQL:
// - an operator's delete of a queued member (soniq.jobs.delete, a bulk delete) ends it as
//   `cancelled` for its batch: the batch finishes `failed` and its callbacks run, once;
// - a member completed with `resultRetention: 0` and no callback (nobody waits for it) still
//   counts down its batch, and a flow's root at retention 0 still finishes its flow;
// - a deleted waiting root finishes its flow `cancelled`;
// - a finished member run again (retry-now) ends once more for its batch, never twice.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { BatchView } from "../../src/admin/batches-admin.js";
import type { Backend } from "../../src/backends/contract/index.js";
import { batchText } from "../../src/cli/commands/batches.js";
import { Soniq } from "../../src/index.js";
import type { BatchFinishedEvent, FlowFinishedEvent } from "../../src/observability/events.js";
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

/** The events of `soniq`, collected. */
function collect(soniq: Soniq): { flows: FlowFinishedEvent[]; batches: BatchFinishedEvent[] } {
  const flows: FlowFinishedEvent[] = [];
  const batches: BatchFinishedEvent[] = [];
  soniq.events.on("flow_finished", (e) => void flows.push(e));
  soniq.events.on("batch_finished", (e) => void batches.push(e));
  return { flows, batches };
}

describeEachBackend("workflows: every end of a batch member counts", (target) => {
  it("batch › a queued member deleted (one by id, one in a bulk delete) › the batch finishes failed once, onComplete and onFailure run, onSuccess cancelled", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const seen = collect(soniq);
    const step = soniq.job({ name: "wf.mend.step", handler: async () => "ok" });
    const batch = await soniq.batch({
      jobs: [0, 1, 2].map(() => ({ job: step, args: {} })),
      onComplete: { job: step, args: {} },
      onSuccess: { job: step, args: {} },
      onFailure: { job: step, args: {} },
    });
    const plain = await soniq.batch({ jobs: [0, 1].map(() => ({ job: step, args: {} })) });
    await soniq.jobs.delete(batch.ids[0] as string);
    const bulk = await soniq.jobs.bulk({ action: "delete", ids: [...plain.ids] });
    expect(bulk.done).toBe(2);
    // Every member of `plain` is gone: it finished in the delete, before any worker ran.
    expect((await backend.flows.flowEndsTake({ limit: 10 })).map((e) => e.id)).toEqual([plain.id]);
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    const { onComplete, onSuccess, onFailure } = batch.callbacks as Record<string, string>;
    const status = async (id: string | undefined) => (await soniq.getJob(id as string))?.status;
    await waitFor(
      async () => (await status(onComplete)) === "done" && (await status(onFailure)) === "done",
      20_000,
    );
    await waitFor(() => seen.batches.length >= 1, 20_000);
    expect(await status(onSuccess)).toBe("cancelled");
    await worker.stop();
    expect(seen.batches.map((b) => [b.batch_id, b.outcome])).toEqual([[batch.id, "failed"]]);
    const counts = await backend.flows.flowEndCounts();
    expect(counts.map((c) => `${c.kind} ${c.outcome} ${c.n}`)).toEqual(["batch failed 2"]);
    const view = await soniq.batches.get(batch.id);
    expect(view?.state).toBe("finished");
    expect(view?.counts).toMatchObject({ total: 3, pending: 0, done: 2 });
    await soniq.close();
  });

  it("batch › a member added to the open batch is dead-lettered › the batch finishes failed, onFailure and onComplete run, onSuccess cancelled (it ran before: bug found by review)", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const seen = collect(soniq);
    const ok = soniq.job({ name: "wf.mend.ok", handler: async () => "ok" });
    const bad = soniq.job({
      name: "wf.mend.bad",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("boom");
      },
    });
    const callback = soniq.job({ name: "wf.mend.callback", handler: async () => "ran" });
    const batch = await soniq.batch({
      open: true,
      jobs: [{ job: ok, args: {} }],
      onComplete: { job: callback, args: { role: "complete" } },
      onSuccess: { job: callback, args: { role: "success" } },
      onFailure: { job: callback, args: { role: "failure" } },
    });
    const [added] = await batch.add([{ job: bad, args: {} }]);
    expect(added).toBeDefined();
    await batch.seal();
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    const { onComplete, onSuccess, onFailure } = batch.callbacks as Record<string, string>;
    const status = async (id: string | undefined) => (await soniq.getJob(id as string))?.status;
    await waitFor(
      async () => (await status(onComplete)) === "done" && (await status(onFailure)) === "done",
      20_000,
    );
    await waitFor(() => seen.batches.length >= 1, 20_000);
    await worker.stop();
    expect(await soniq.getDeadLetter(added as string)).toBeTruthy();
    expect(await status(onSuccess)).toBe("cancelled");
    expect(seen.batches.map((b) => [b.batch_id, b.outcome])).toEqual([[batch.id, "failed"]]);
    await soniq.close();
  });

  it("batch › a member replayed from the dead-letter queue after its batch finished › runs again, the batch finishes again; the callbacks run once and their counts stay at 0 (went below 0 before: found by review)", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const seen = collect(soniq);
    let failing = true;
    const ok = soniq.job({ name: "wf.mend.fine", handler: async () => "ok" });
    const flaky = soniq.job({
      name: "wf.mend.flaky",
      maxAttempts: 1,
      handler: async () => {
        if (failing) throw new Error("boom");
        return "fixed";
      },
    });
    const runs: string[] = [];
    const callback = soniq.job<{ role: string }, void>({
      name: "wf.mend.cb",
      handler: async ({ role }) => {
        runs.push(role);
      },
    });
    const batch = await soniq.batch({
      jobs: [
        { job: ok, args: {} },
        { job: flaky, args: {} },
      ],
      onComplete: { job: callback, args: { role: "complete" } },
      onSuccess: { job: callback, args: { role: "success" } },
      onFailure: { job: callback, args: { role: "failure" } },
    });
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(() => seen.batches.length >= 1 && runs.length >= 2, 20_000);
    failing = false;
    await soniq.deadLetters.replay(batch.ids[1] as string);
    await waitFor(() => seen.batches.length >= 2, 20_000);
    await waitFor(
      async () => (await soniq.getJob(batch.ids[1] as string))?.status === "done",
      20_000,
    );
    await worker.stop();
    expect(runs.sort()).toEqual(["complete", "failure"]);
    expect(seen.batches.map((b) => b.outcome)).toEqual(["failed", "succeeded"]);
    const nodes = await backend.flows.flowGet({ flowId: batch.id });
    const callbacks = nodes.filter((n) => n.role.startsWith("on_"));
    expect(callbacks.map((n) => [n.role, n.pending]).sort()).toEqual([
      ["on_complete", 0],
      ["on_failure", 0],
      ["on_success", 1],
    ]);
    await soniq.close();
  });

  it("batch › members completed with resultRetention 0, with and without callbacks › each batch finishes succeeded once; a flow's root at retention 0 finishes its flow", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const seen = collect(soniq);
    const brief = soniq.job({ name: "wf.mend.brief", resultRetention: 0, handler: async () => 1 });
    const bare = await soniq.batch({ jobs: [0, 1, 2].map(() => ({ job: brief, args: {} })) });
    const withCallback = await soniq.batch({
      jobs: [0, 1].map(() => ({ job: brief, args: {} })),
      onComplete: { job: brief, args: {} },
    });
    const flow = await soniq.flow({ job: brief, args: {}, children: [{ job: brief, args: {} }] });
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(() => seen.batches.length >= 2 && seen.flows.length >= 1, 20_000);
    await worker.stop();
    const byBatch = Object.fromEntries(seen.batches.map((b) => [b.batch_id, b.outcome]));
    expect(byBatch).toEqual({ [bare.id]: "succeeded", [withCallback.id]: "succeeded" });
    expect(seen.batches).toHaveLength(2);
    expect(seen.flows.map((f) => [f.flow_id, f.outcome])).toEqual([[flow.id, "done"]]);
    await soniq.close();
  });

  it("batch › one member with resultRetention 0 (nobody waits for it), two kept › counts done 2, gone 1, adding up to the total; the CLI text says so", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const seen = collect(soniq);
    const brief = soniq.job({ name: "wf.mend.brief0", resultRetention: 0, handler: async () => 1 });
    const kept = soniq.job({ name: "wf.mend.kept", handler: async () => 2 });
    const batch = await soniq.batch({
      jobs: [
        { job: brief, args: {} },
        { job: kept, args: {} },
        { job: kept, args: {} },
      ],
    });
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(() => seen.batches.length >= 1, 20_000);
    await worker.stop();
    const view = await soniq.batches.get(batch.id);
    expect(view?.state).toBe("finished");
    expect(view?.counts).toEqual({ total: 3, pending: 0, done: 2, dead: 0, cancelled: 0, gone: 1 });
    expect(batchText(view as BatchView)).toContain(
      "3/3 ended (done 2, dead 0, cancelled 0, gone 1)",
    );
    await soniq.close();
  });

  it("batch › a queued member with resultRetention 0 cancelled by id › the batch finishes failed, in the cancel", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const brief = soniq.job({ name: "wf.mend.gone", resultRetention: 0, handler: async () => 1 });
    const batch = await soniq.batch({ jobs: [{ job: brief, args: {} }] });
    await soniq.jobs.cancel(batch.ids[0] as string);
    const ends = await backend.flows.flowEndsTake({ limit: 10 });
    expect(ends.map((e) => [e.kind, e.id, e.outcome])).toEqual([["batch", batch.id, "failed"]]);
    expect((await soniq.batches.get(batch.id))?.counts).toMatchObject({ cancelled: 1 });
    await soniq.close();
  });

  it("flow › its waiting root deleted › the flow finishes cancelled, once", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const step = soniq.job({ name: "wf.mend.root", handler: async () => "ok" });
    const flow = await soniq.flow({ job: step, args: {}, children: [{ job: step, args: {} }] });
    await soniq.jobs.delete(flow.id);
    const ends = await backend.flows.flowEndsTake({ limit: 10 });
    expect(ends.map((e) => [e.kind, e.id, e.outcome])).toEqual([["flow", flow.id, "cancelled"]]);
    // Its child, deleted too: nothing more (the flow ended with its root).
    await soniq.jobs.delete(flow.ids[1] as string);
    expect(await backend.flows.flowEndsTake({ limit: 10 })).toEqual([]);
    await soniq.close();
  });

  it("batch › a done member run again (retry-now) while another is queued › the batch finishes once, when the last member ends", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const seen = collect(soniq);
    const step = soniq.job({
      name: "wf.mend.again",
      handler: async (args: { hold?: boolean }) => (args.hold ? "held" : "ok"),
    });
    const batch = await soniq.batch({
      jobs: [
        { job: step, args: {} },
        { job: step, args: { hold: true }, options: { runAt: new Date(Date.now() + 3_600_000) } },
      ],
    });
    const [first, later] = batch.ids as [string, string];
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(first))?.status === "done", 20_000);
    await soniq.jobs.retry(first);
    await waitFor(async () => {
      const j = await soniq.getJob(first);
      return j?.status === "done" && (j.attempts ?? 0) >= 2;
    }, 20_000);
    await worker.stop();
    // The later member has not run: the batch has not finished (no event, nothing left to take).
    expect((await soniq.getJob(later))?.status).toBe("queued");
    expect(seen.batches).toEqual([]);
    expect(await backend.flows.flowEndsTake({ limit: 10 })).toEqual([]);
    await soniq.jobs.retry(later);
    const again = soniq.worker({ concurrency: 2 });
    await again.start();
    await waitFor(() => seen.batches.length >= 1, 20_000);
    await again.stop();
    expect(seen.batches.map((b) => [b.batch_id, b.outcome])).toEqual([[batch.id, "succeeded"]]);
    await soniq.close();
  });
});
