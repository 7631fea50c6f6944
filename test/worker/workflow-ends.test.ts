// Flows and batches that finished (issue 29 item 4; docs/workflows.md, "Knowing when a flow or
// batch finished") on a SQLite file and on PostgreSQL, with real workers: the database's triggers
// record each finish in the statement that makes it, the maintenance leader reports each once as
// `flow_finished` / `batch_finished` and counts it (soniq_flow_counts), and the Prometheus
// exporter shows the counts from the leader's sample.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import type { BatchFinishedEvent, FlowFinishedEvent } from "../../src/observability/events.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
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
    metricsInterval: 1,
  });
}

describeEachBackend("worker: flows and batches finished", (target) => {
  it("flows and batches › done, failed, cancelled; batches succeeded, failed, sealed after their members ended › one event each, exact counters, exported", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const metrics = prometheusMetrics(soniq);
    const flows: FlowFinishedEvent[] = [];
    const batches: BatchFinishedEvent[] = [];
    soniq.events.on("flow_finished", (e) => void flows.push(e));
    soniq.events.on("batch_finished", (e) => void batches.push(e));
    const step = soniq.job({
      name: "wf.end.step",
      maxAttempts: 1,
      handler: async (args: { fail?: boolean }) => {
        if (args.fail) throw new Error("step failed");
        return "ok";
      },
    });
    const doneFlow = await soniq.flow({
      job: step,
      args: {},
      children: Array.from({ length: 12 }, () => ({ job: step, args: {} })),
    });
    const failedFlow = await soniq.flow({
      job: step,
      args: {},
      children: [
        { job: step, args: { fail: true } },
        { job: step, args: {} },
      ],
    });
    const cancelledFlow = await soniq.flow(
      { job: step, args: {}, children: [{ job: step, args: { fail: true } }] },
      { onFailure: "cancel" },
    );
    const good = await soniq.batch({
      jobs: Array.from({ length: 20 }, () => ({ job: step, args: {} })),
    });
    const bad = await soniq.batch({
      jobs: [
        { job: step, args: {} },
        { job: step, args: { fail: true } },
      ],
      onComplete: { job: step, args: {} },
    });
    const open = await soniq.batch({ jobs: [{ job: step, args: {} }], open: true });
    const worker = soniq.worker({ concurrency: 8 });
    await worker.start();
    await waitFor(() => flows.length >= 3 && batches.length >= 2, 20_000);
    // The open batch's member ended: nothing until the seal, which finishes it.
    await waitFor(async () => (await soniq.batches.get(open.id))?.counts.done === 1, 20_000);
    expect(batches.map((b) => b.batch_id)).not.toContain(open.id);
    await open.seal();
    await waitFor(() => batches.length >= 3, 20_000);
    const byFlow = Object.fromEntries(flows.map((f) => [f.flow_id, f.outcome]));
    expect(byFlow).toEqual({
      [doneFlow.id]: "done",
      [failedFlow.id]: "failed",
      [cancelledFlow.id]: "cancelled",
    });
    const byBatch = Object.fromEntries(batches.map((b) => [b.batch_id, b.outcome]));
    expect(byBatch).toEqual({ [good.id]: "succeeded", [bad.id]: "failed", [open.id]: "succeeded" });
    expect(flows.every((f) => !Number.isNaN(Date.parse(f.finished_at)))).toBe(true);
    await waitFor(async () => {
      const text = await metrics.scrape();
      return text.includes('soniq_batches_finished_total{outcome="succeeded"} 2');
    }, 20_000);
    const text = await metrics.scrape();
    expect(text).toContain('soniq_flows_finished_total{outcome="done"} 1');
    expect(text).toContain('soniq_flows_finished_total{outcome="failed"} 1');
    expect(text).toContain('soniq_flows_finished_total{outcome="cancelled"} 1');
    expect(text).toContain('soniq_batches_finished_total{outcome="failed"} 1');
    await worker.stop();
    // Each finish was taken once: nothing left to take, and events only once each.
    expect(await backend.flows.flowEndsTake({ limit: 100 })).toEqual([]);
    expect(flows).toHaveLength(3);
    expect(batches).toHaveLength(3);
    const counts = await backend.flows.flowEndCounts();
    expect(counts.map((c) => `${c.kind} ${c.outcome} ${c.n}`).sort()).toEqual([
      "batch failed 1",
      "batch succeeded 2",
      "flow cancelled 1",
      "flow done 1",
      "flow failed 1",
    ]);
    metrics.close();
    await soniq.close();
  });

  it("batch › a failed member replayed, then done › the batch finishes again, succeeded", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const batches: BatchFinishedEvent[] = [];
    soniq.events.on("batch_finished", (e) => void batches.push(e));
    let failing = true;
    const step = soniq.job({
      name: "wf.end.flaky",
      maxAttempts: 1,
      handler: async () => {
        if (failing) throw new Error("not yet");
        return "ok";
      },
    });
    const batch = await soniq.batch({ jobs: [{ job: step, args: {} }] });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(() => batches.length === 1, 20_000);
    expect(batches[0]?.outcome).toBe("failed");
    failing = false;
    await soniq.deadLetters.replay(batch.ids[0] as string);
    await waitFor(() => batches.length === 2, 20_000);
    expect(batches[1]?.outcome).toBe("succeeded");
    await worker.stop();
    await soniq.close();
  });
});
