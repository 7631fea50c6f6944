// Workflows (issue 29 "Tests"; docs/workflows.md) on a SQLite file and on PostgreSQL: a flow whose
// write fails part way leaves nothing (no job, node or edge: the whole tree is one transaction),
// a flow cancel stops a running child and cancels everything above it without running or
// dead-lettering it, a flow-wide "cancel" policy carries one failure up the tree while siblings
// still run, and replaying a dead-lettered child re-arms only what waited on it (its done
// sibling's edge stays met) so the root runs once with every result.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { type JobDefinition, Soniq, type SoniqError } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { countStoreRows as countRows, runStoreSql as runSql } from "../helpers/store-script.js";
import type { StoreAddress } from "../helpers/test-backends.js";
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

async function stateOf(soniq: Soniq, id: string): Promise<string> {
  const job = await soniq.getJob(id);
  if (job) return job.status;
  return (await soniq.getDeadLetter(id)) ? "dead" : "gone";
}

describeEachBackend("worker: workflows, propagation and faults", (target) => {
  /**
   * An instance polling 30 s apart (heartbeats every 0.1 s) with the jobs `define` adds and its
   * worker (`concurrency`) started; on PostgreSQL, once the worker's LISTEN connection is up —
   * another process's NOTIFY woke it for one job named `probe` (no bound: on a loaded machine the
   * connection may take seconds; the poll is the fallback). A start within 20 s of an end then
   * has only a wake-up by the release to explain it.
   */
  async function slowPolling(
    define: (soniq: Soniq) => void,
    probe: string,
    concurrency: number,
  ): Promise<{ soniq: Soniq; worker: ReturnType<Soniq["worker"]> }> {
    const backend = await target.open();
    const soniq = new Soniq({
      backend,
      logger: silent,
      env: {},
      pollInterval: 30,
      heartbeatInterval: 0.1,
    });
    define(soniq);
    const worker = soniq.worker({ concurrency });
    await worker.start();
    if (target.kind === "PostgreSQL") {
      const address = target.address(backend) as StoreAddress;
      const other = new Soniq({ ...address, logger: silent, env: {}, rejectUnknownJobs: false });
      const id = await other.enqueue(probe, {});
      await waitFor(async () => (await soniq.getJob(id))?.status === "done", 60_000);
      await other.close();
    }
    return { soniq, worker };
  }

  it("release wake-up › the last dependency ends in this process, polls 30 s apart › the released job is claimed at once, not at the next poll", async () => {
    let childEnded = 0;
    let rootStarted = 0;
    let child!: JobDefinition<Record<string, never>, void>;
    let root!: JobDefinition<Record<string, never>, void>;
    const { soniq, worker } = await slowPolling(
      (soniq) => {
        child = soniq.job({
          name: "wf.child",
          handler: async () => {
            // Past the PostgreSQL notifier's echo window (OWN_ECHO_MS) after the enqueue's wake-up.
            await new Promise((resolve) => setTimeout(resolve, 500));
            childEnded = Date.now();
          },
        });
        root = soniq.job({
          name: "wf.root",
          handler: async () => {
            rootStarted = Date.now();
          },
        });
      },
      "wf.child",
      2,
    );
    // Enqueued after the start: the enqueue wakes the idle worker, the release must too.
    const flow = await soniq.flow({ job: root, args: {}, children: [{ job: child, args: {} }] });
    await waitFor(async () => (await soniq.getJob(flow.id))?.status === "done", 20_000);
    await worker.stop();
    // The next poll is 30 s away: only a wake-up by the release explains a start within 20 s.
    expect(rootStarted - childEnded).toBeLessThan(20_000);
    await soniq.close();
  }, 60_000);

  it("release wake-up › a batch's members end in this process, its onComplete callback on another queue, polls 30 s apart › the callback is claimed at once", async () => {
    let membersEnded = 0;
    let callbackStarted = 0;
    let member!: JobDefinition<{ n: number }, void>;
    let callback!: JobDefinition<Record<string, never>, void>;
    const { soniq, worker } = await slowPolling(
      (soniq) => {
        member = soniq.job({
          name: "wf.member",
          handler: async () => {
            // Past the PostgreSQL notifier's echo window (OWN_ECHO_MS) after the enqueue's wake-up.
            await new Promise((resolve) => setTimeout(resolve, 500));
            membersEnded = Date.now();
          },
        });
        callback = soniq.job({
          name: "wf.callback",
          queue: "callbacks",
          handler: async () => {
            callbackStarted = Date.now();
          },
        });
      },
      "wf.member",
      4,
    );
    const batch = await soniq.batch({
      jobs: [1, 2, 3].map((n) => ({ job: member, args: { n } })),
      onComplete: { job: callback, args: {} },
    });
    const callbackId = batch.callbacks.onComplete;
    expect(callbackId).toBeDefined();
    await waitFor(
      async () => (await soniq.getJob(callbackId as string))?.status === "done",
      20_000,
    );
    await worker.stop();
    // The next poll is 30 s away: only a wake-up by the release explains a start within 20 s.
    expect(callbackStarted - membersEnded).toBeLessThan(20_000);
    expect(callbackStarted).toBeGreaterThanOrEqual(membersEnded);
    await soniq.close();
  }, 60_000);

  it("flow write › a fault on its third edge, mid-transaction › refused; no job, node or edge left", async () => {
    const backend = await target.open();
    const address = target.address(backend) as StoreAddress;
    const soniq = instanceOn(backend);
    const leaf = soniq.job({ name: "wf.leaf", handler: async () => 1 });
    const top = soniq.job({ name: "wf.top", handler: async () => 2 });
    // The injected fault: the third edge insert raises, after the jobs, the nodes and two edges
    // were written in the same transaction.
    await runSql(address, {
      sqlite: `CREATE TRIGGER test_fault_third_edge BEFORE INSERT ON soniq_job_deps
               WHEN (SELECT count(*) FROM soniq_job_deps) >= 2
               BEGIN SELECT RAISE(ABORT, 'injected fault'); END;`,
      postgres: `CREATE FUNCTION test_fault_third_edge() RETURNS trigger LANGUAGE plpgsql
                 SET search_path FROM CURRENT AS $$
                 BEGIN
                   IF (SELECT count(*) FROM soniq_job_deps) >= 2 THEN
                     RAISE EXCEPTION 'injected fault';
                   END IF;
                   RETURN NEW;
                 END $$;
                 CREATE TRIGGER test_fault_third_edge BEFORE INSERT ON soniq_job_deps
                 FOR EACH ROW EXECUTE FUNCTION test_fault_third_edge();`,
    });
    try {
      const err = await soniq
        .flow({
          job: top,
          args: {},
          children: [
            { job: leaf, args: { n: 1 } },
            { job: leaf, args: { n: 2 } },
            { job: leaf, args: { n: 3 } },
            { job: leaf, args: { n: 4 } },
          ],
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(Error);
      expect(String((err as Error).message)).toMatch(/injected fault/);
      expect(await countRows(address, "soniq_jobs")).toBe(0);
      expect(await countRows(address, "soniq_flow_nodes")).toBe(0);
      expect(await countRows(address, "soniq_job_deps")).toBe(0);
    } finally {
      await runSql(address, {
        sqlite: "DROP TRIGGER test_fault_third_edge;",
        postgres: `DROP TRIGGER test_fault_third_edge ON soniq_job_deps;
                   DROP FUNCTION test_fault_third_edge();`,
      });
    }
    // The same flow, the fault gone, is written whole.
    const flow = await soniq.flow({
      job: top,
      args: {},
      children: [
        { job: leaf, args: { n: 1 } },
        { job: leaf, args: { n: 2 } },
        { job: leaf, args: { n: 3 } },
      ],
    });
    expect(flow.ids).toHaveLength(4);
    expect(await countRows(address, "soniq_job_deps")).toBe(3);
    await soniq.close();
  });

  it("flow cancel › a child running, a pipeline waiting above it › the child is stopped, every other job cancelled, nothing above ran or was dead-lettered", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    let started = false;
    let stoppedBySignal = false;
    const slow = soniq.job({
      name: "wf.slow",
      handler: async (_args: object, ctx) => {
        started = true;
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          ctx.signal.addEventListener("abort", () => resolve());
        });
        stoppedBySignal = ctx.signal.aborted;
        ctx.signal.throwIfAborted();
        return "never";
      },
    });
    const ran: string[] = [];
    const step = soniq.job({
      name: "wf.step",
      handler: async (args: { tag: string }) => {
        ran.push(args.tag);
        return args.tag;
      },
    });
    const flow = await soniq.flow({
      job: step,
      args: { tag: "root" },
      children: [
        {
          job: step,
          args: { tag: "mid" },
          children: [{ job: slow, args: {} }],
        },
        { job: step, args: { tag: "other" }, options: { delay: 3600 } },
      ],
    });
    const slowId = flow.ids[3] as string;
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(() => started, 20_000, "the slow child started");
    const result = await soniq.flows.cancel(flow.id);
    // Root, mid and the delayed sibling cancelled now; the running child by a request.
    expect(result).toEqual({ cancelled: 3, requested: 1 });
    await waitFor(async () => (await stateOf(soniq, slowId)) === "cancelled", 20_000);
    await worker.stop();
    expect(stoppedBySignal).toBe(true);
    expect(ran).toEqual([]);
    const view = await soniq.flows.get(flow.id);
    expect(view?.state).toBe("cancelled");
    expect(view?.counts).toMatchObject({ cancelled: 4, dead: 0, waiting: 0, queued: 0 });
    for (const id of flow.ids) expect(await soniq.getDeadLetter(id)).toBeNull();
    await soniq.close();
  });

  it("flow policy cancel › one leaf dead-lettered › its parent and the root cancelled, its siblings still run", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const ran: string[] = [];
    const step = soniq.job({
      name: "wf.step",
      maxAttempts: 1,
      handler: async (args: { tag: string; fail?: boolean }) => {
        if (args.fail) throw new Error("leaf failed");
        ran.push(args.tag);
        return args.tag;
      },
    });
    const flow = await soniq.flow(
      {
        job: step,
        args: { tag: "root" },
        children: [
          {
            job: step,
            args: { tag: "mid" },
            children: [
              { job: step, args: { tag: "bad", fail: true } },
              { job: step, args: { tag: "leaf2" } },
            ],
          },
          { job: step, args: { tag: "sibling" } },
        ],
      },
      { onFailure: "cancel" },
    );
    const [rootId, midId, siblingId, badId, leafId] = flow.ids as [
      string,
      string,
      string,
      string,
      string,
    ];
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(async () => (await soniq.flows.get(flow.id))?.state !== "running", 20_000);
    await worker.stop();
    expect(await stateOf(soniq, badId)).toBe("dead");
    expect(await stateOf(soniq, midId)).toBe("cancelled");
    expect(await stateOf(soniq, rootId)).toBe("cancelled");
    expect(await stateOf(soniq, siblingId)).toBe("done");
    expect(await stateOf(soniq, leafId)).toBe("done");
    expect(ran.sort()).toEqual(["leaf2", "sibling"]);
    expect((await soniq.flows.get(flow.id))?.state).toBe("cancelled");
    await soniq.close();
  });

  it("replay › a dead-lettered child of a flow replayed › its parent and the root re-armed, waiting only for it; the root runs once with every result", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    let fail = true;
    const runs: Record<string, number> = {};
    const step = soniq.job({
      name: "wf.step",
      maxAttempts: 1,
      handler: async (args: { tag: string; flaky?: boolean }, ctx) => {
        runs[args.tag] = (runs[args.tag] ?? 0) + 1;
        if (args.flaky && fail) throw new Error("not yet");
        const deps = await ctx.dependencies();
        return [args.tag, ...deps.flatMap((d) => d.result as string[])];
      },
    });
    const flow = await soniq.flow({
      job: step,
      args: { tag: "root" },
      children: [
        {
          job: step,
          args: { tag: "mid" },
          children: [
            { job: step, args: { tag: "flaky", flaky: true } },
            { job: step, args: { tag: "good" } },
          ],
        },
      ],
    });
    const [rootId, midId, flakyId] = flow.ids as [string, string, string, string];
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, rootId)) === "dead", 20_000);
    expect((await soniq.getDeadLetter(midId))?.reason).toBe("dependency_failed");
    expect((await soniq.getDeadLetter(rootId))?.reason).toBe("dependency_failed");
    fail = false;
    await soniq.deadLetters.replay(flakyId);
    await waitFor(async () => (await stateOf(soniq, rootId)) === "done", 20_000);
    await worker.stop();
    expect(runs).toEqual({ flaky: 2, good: 1, mid: 1, root: 1 });
    const rootResult = ((await soniq.getJob(rootId))?.result ?? []) as string[];
    expect([...rootResult].sort()).toEqual(["flaky", "good", "mid", "root"].sort());
    expect((await soniq.getJob(midId))?.attempts).toBe(1);
    expect((await soniq.flows.get(flow.id))?.state).toBe("done");
    // A replay of a job that is no longer dead-lettered is refused, and re-arms nothing.
    const again = (await soniq.deadLetters.replay(flakyId).catch((e) => e)) as SoniqError;
    expect(again.code).toBe("NOT_FOUND");
    await soniq.close();
  });
});
