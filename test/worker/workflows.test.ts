// Workflows (issue 29 item 1, 2; docs/workflows.md) on a SQLite file and on PostgreSQL, in one
// process with real workers: jobs that wait for others (`after`, `soniq.flow`) are never claimed
// before their last dependency ends well, are released in the transaction that ends it, read
// their dependencies' results, and follow the failure policies (fail, ignore, cancel), replay
// re-arming and flow cancel.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq, type SoniqError } from "../../src/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
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

async function stateOf(soniq: Soniq, id: string): Promise<string> {
  const job = await soniq.getJob(id);
  if (job) return job.status;
  return (await soniq.getDeadLetter(id)) ? "dead" : "gone";
}

describeEachBackend("worker: workflows", (target) => {
  it("after › fan-in of two jobs › the dependant waits unclaimed, then runs once with both results", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const gate = { open: false };
    const order: string[] = [];
    const part = soniq.job({
      name: "wf.part",
      handler: async (args: { n: number }) => {
        await waitFor(() => gate.open, 20_000);
        order.push(`part${args.n}`);
        return { n: args.n * 10 };
      },
    });
    let seen: unknown;
    const sum = soniq.job({
      name: "wf.sum",
      handler: async (_args: object, ctx) => {
        order.push("sum");
        seen = await ctx.dependencies();
        return "ok";
      },
    });
    const a = await part.enqueue({ n: 1 });
    const b = await part.enqueue({ n: 2 });
    const c = await sum.enqueue({}, { after: [a, b] });
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(a))?.status === "processing", 20_000);
    // The dependant is a queued row no claim takes: still queued with the other two held.
    expect((await soniq.getJob(c))?.status).toBe("queued");
    gate.open = true;
    await waitFor(async () => (await soniq.getJob(c))?.status === "done", 20_000);
    await worker.stop();
    expect(order.indexOf("sum")).toBe(2);
    const deps = seen as Array<{ id: string; state: string; result: unknown }>;
    expect(deps.map((d) => d.id).sort()).toEqual([a, b].sort());
    expect(deps.every((d) => d.state === "done")).toBe(true);
    expect(deps.map((d) => (d.result as { n: number }).n).sort()).toEqual([10, 20]);
    expect((await soniq.getJob(c))?.attempts).toBe(1);
    await soniq.close();
  });

  it("after › dependency already done, or unknown › runs at once; unknown id refused and nothing written", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const step = soniq.job({ name: "wf.step", handler: async (args: { n: number }) => args.n });
    const a = await step.enqueue({ n: 1 });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(a))?.status === "done", 20_000);
    const b = await step.enqueue({ n: 2 }, { after: [a] });
    await waitFor(async () => (await soniq.getJob(b))?.status === "done", 20_000);
    await worker.stop();
    const before = await soniq.jobs.count();
    const unknown = "0190a0b0-0000-7000-8000-000000000000";
    const err = (await step
      .enqueue({ n: 3 }, { after: [a, unknown] })
      .catch((e) => e)) as SoniqError;
    expect(err.code).toBe("UNKNOWN_DEPENDENCY");
    expect(await soniq.jobs.count()).toBe(before);
    const bad = (await step
      .enqueue({ n: 3 }, { after: [a], dedupKey: "k" })
      .catch((e) => e)) as SoniqError;
    expect(bad.code).toBe("INVALID_ENQUEUE_OPTION");
    await soniq.close();
  });

  it("policies › a dependency dead-lettered › fail: dead-lettered (dependency_failed, cascading); ignore: runs; cancel: cancelled", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const boom = soniq.job({
      name: "wf.boom",
      maxAttempts: 1,
      handler: async () => {
        throw new Error("boom");
      },
    });
    const ran: string[] = [];
    const after = soniq.job({
      name: "wf.after",
      handler: async (args: { tag: string }, ctx) => {
        ran.push(args.tag);
        return (await ctx.dependencies()).map((d) => d.state);
      },
    });
    const a = await boom.enqueue({});
    const failed = await after.enqueue({ tag: "fail" }, { after: [a] });
    const cascaded = await after.enqueue({ tag: "cascade" }, { after: [failed] });
    const ignored = await after.enqueue(
      { tag: "ignore" },
      { after: [a], onDependencyFailure: "ignore" },
    );
    const cancelled = await after.enqueue(
      { tag: "cancel" },
      { after: [a], onDependencyFailure: "cancel" },
    );
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, ignored)) === "done", 20_000);
    await worker.stop();
    expect(await stateOf(soniq, a)).toBe("dead");
    expect(await stateOf(soniq, failed)).toBe("dead");
    expect((await soniq.getDeadLetter(failed))?.reason).toBe("dependency_failed");
    expect(await stateOf(soniq, cascaded)).toBe("dead");
    expect((await soniq.getDeadLetter(cascaded))?.reason).toBe("dependency_failed");
    expect(await stateOf(soniq, cancelled)).toBe("cancelled");
    expect(ran).toEqual(["ignore"]);
    expect((await soniq.getJob(ignored))?.result).toEqual(["dead"]);
    await soniq.close();
  });

  it("delete › a queued dependency deleted by an operator › ends cancelled for its dependants: fail dead-letters, ignore runs, cancel cancels", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const later = soniq.job({ name: "wf.later", handler: async () => "never" });
    const ran: string[] = [];
    const after = soniq.job({
      name: "wf.after.deleted",
      handler: async (args: { tag: string }, ctx) => {
        ran.push(args.tag);
        return (await ctx.dependencies()).map((d) => d.state);
      },
    });
    // Due in an hour: still queued when it is deleted.
    const a = await later.enqueue({}, { delay: 3600 });
    const failed = await after.enqueue({ tag: "fail" }, { after: [a] });
    const ignored = await after.enqueue(
      { tag: "ignore" },
      { after: [a], onDependencyFailure: "ignore" },
    );
    const cancelled = await after.enqueue(
      { tag: "cancel" },
      { after: [a], onDependencyFailure: "cancel" },
    );
    await soniq.jobs.delete(a);
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, ignored)) === "done", 20_000);
    await worker.stop();
    expect(await stateOf(soniq, a)).toBe("gone");
    expect((await soniq.getDeadLetter(failed))?.reason).toBe("dependency_failed");
    expect(await stateOf(soniq, cancelled)).toBe("cancelled");
    expect(ran).toEqual(["ignore"]);
    expect((await soniq.getJob(ignored))?.result).toEqual(["cancelled"]);
    await soniq.close();
  });

  it("sync handler › ctx.dependencies() on a thread › blocks for the read and returns each state and result, one above 64 KiB included", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const part = soniq.job({
      name: "wf.part.sized",
      handler: async (args: { size: number }) => "x".repeat(args.size),
    });
    const reader = soniq.syncJob({
      name: "wf.thread.reader",
      handlerModule: new URL("../fixtures/thread-handlers.mjs", import.meta.url),
      exportName: "dependencyReader",
    });
    const small = await part.enqueue({ size: 10 });
    const large = await part.enqueue({ size: 200_000 });
    const id = await reader.enqueue({}, { after: [small, large] });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 20_000);
    await worker.stop();
    const expected = [
      { id: small, state: "done", length: 12 },
      { id: large, state: "done", length: 200_002 },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect((await soniq.getJob(id))?.result).toEqual(expected);
    await soniq.close();
  });

  it("resultRetention 0 › a dependant enqueued while its dependency finishes › runs (never left waiting), or is refused UNKNOWN_DEPENDENCY", async () => {
    // Found by a break-it pass: on PostgreSQL the finishing statement decided whether to keep the
    // finished row for its dependants with the snapshot it started with, so an edge committed
    // while it waited for the dependency's row lock was not seen: nothing kept, the edge never
    // ended, the dependant waited for ever.
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const quick = soniq.job({ name: "wf.quick", resultRetention: 0, handler: async () => 1 });
    const after = soniq.job({
      name: "wf.after.quick",
      handler: async (_args: object, ctx) => (await ctx.dependencies()).map((d) => d.state),
    });
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    const accepted: string[] = [];
    let refused = 0;
    for (let i = 0; i < 40; i++) {
      const a = await quick.enqueue({});
      await new Promise((resolve) => setTimeout(resolve, i % 10));
      try {
        accepted.push(await after.enqueue({}, { after: [a] }));
      } catch (err) {
        expect((err as SoniqError).code).toBe("UNKNOWN_DEPENDENCY");
        refused += 1;
      }
    }
    await waitFor(
      async () => {
        for (const id of accepted) if ((await stateOf(soniq, id)) !== "done") return false;
        return true;
      },
      30_000,
      "every accepted dependant done",
    );
    await worker.stop();
    expect(accepted.length + refused).toBe(40);
    await soniq.close();
  });

  it("resultRetention 0 › finishing statements of jobs some of which are awaited › only the awaited are kept for their dependants, which run with their results; the others are gone", async () => {
    // PostgreSQL asks "does anyone wait for these?" once per finishing statement for all its rows
    // (migration 029; it asked once per row before): the answer must still be per job.
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const gate = { open: false };
    const quick = soniq.job({
      name: "wf.mixed.quick",
      resultRetention: 0,
      handler: async (args: { n: number }) => {
        await waitFor(() => gate.open, 20_000);
        return { n: args.n };
      },
    });
    const after = soniq.job({
      name: "wf.mixed.after",
      handler: async (_args: object, ctx) =>
        (await ctx.dependencies()).map((d) => ({ state: d.state, result: d.result })),
    });
    const quickIds: string[] = [];
    for (let n = 0; n < 24; n++) quickIds.push(await quick.enqueue({ n }));
    const dependants = new Map<string, number>();
    for (let n = 0; n < 24; n += 3) {
      dependants.set(await after.enqueue({}, { after: [quickIds[n] as string] }), n);
    }
    // All 24 held at once, then released together: their completions share statements.
    const worker = soniq.worker({ concurrency: 32 });
    await worker.start();
    await waitFor(
      async () => (await soniq.jobs.count({ status: "processing" })) === 24,
      20_000,
      "every quick job running",
    );
    gate.open = true;
    await waitFor(
      async () => {
        for (const id of dependants.keys()) if ((await stateOf(soniq, id)) !== "done") return false;
        return true;
      },
      30_000,
      "every dependant done",
    );
    await worker.stop();
    for (const [id, n] of dependants) {
      expect((await soniq.getJob(id))?.result).toEqual([{ state: "done", result: { n } }]);
    }
    for (let n = 0; n < 24; n++) {
      if (n % 3 !== 0) expect(await stateOf(soniq, quickIds[n] as string)).toBe("gone");
    }
    await soniq.close();
  });

  it("replay › a dead-lettered dependency replayed › re-arms the dependants dead-lettered for it, which then run", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    let fail = true;
    const flaky = soniq.job({
      name: "wf.flaky",
      maxAttempts: 1,
      handler: async () => {
        if (fail) throw new Error("not yet");
        return "fine";
      },
    });
    const next = soniq.job({ name: "wf.next", handler: async () => "next" });
    const a = await flaky.enqueue({});
    const b = await next.enqueue({}, { after: [a] });
    const c = await next.enqueue({}, { after: [b] });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, c)) === "dead", 20_000);
    expect(await stateOf(soniq, b)).toBe("dead");
    fail = false;
    await soniq.deadLetters.replay(a);
    await waitFor(async () => (await stateOf(soniq, c)) === "done", 20_000);
    await worker.stop();
    expect(await stateOf(soniq, a)).toBe("done");
    expect(await stateOf(soniq, b)).toBe("done");
    await soniq.close();
  });

  it("replay › only the dependant, its failed dependency still dead-lettered › refused INVALID_STATE naming the dependency (replay, jobs.retry; skipped in a bulk replay), never run; replaying the dependency re-arms it (issue 29 item 3)", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    let fail = true;
    const flaky = soniq.job({
      name: "wf.flaky",
      maxAttempts: 1,
      handler: async () => {
        if (fail) throw new Error("not yet");
        return "fine";
      },
    });
    let nextRuns = 0;
    const next = soniq.job({
      name: "wf.next",
      handler: async (_args: object, ctx) => {
        nextRuns += 1;
        return (await ctx.dependencies()).map((d) => d.state);
      },
    });
    const a = await flaky.enqueue({});
    const b = await next.enqueue({}, { after: [a] });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, b)) === "dead", 20_000);
    expect((await soniq.getDeadLetter(b))?.reason).toBe("dependency_failed");
    for (const replay of [() => soniq.deadLetters.replay(b), () => soniq.jobs.retry(b)]) {
      const err = (await replay().catch((e) => e)) as SoniqError;
      expect(err.code).toBe("INVALID_STATE");
      expect(err.details).toEqual({ dependencyId: a });
      expect(err.message).toContain(`Replay ${a} instead`);
    }
    expect(await soniq.deadLetters.replayMany({ ids: [b] })).toMatchObject({
      matched: 1,
      done: 0,
      skipped: 1,
    });
    expect(await stateOf(soniq, b)).toBe("dead");
    expect(nextRuns).toBe(0);
    fail = false;
    await soniq.deadLetters.replay(a);
    await waitFor(async () => (await stateOf(soniq, b)) === "done", 20_000);
    await worker.stop();
    expect(nextRuns).toBe(1);
    expect((await soniq.getJob(b))?.result).toEqual(["done"]);
    await soniq.close();
  });

  it("flow › a root over 1,000 children › the root runs once, after every child, with 1,000 results", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    let childRuns = 0;
    const child = soniq.job({
      name: "wf.child",
      handler: async (args: { n: number }) => {
        childRuns += 1;
        return args.n;
      },
    });
    let rootRuns = 0;
    let childrenAtRoot = -1;
    let total = 0;
    const root = soniq.job({
      name: "wf.root",
      handler: async (_args: object, ctx) => {
        rootRuns += 1;
        childrenAtRoot = childRuns;
        const deps = await ctx.dependencies();
        total = deps.reduce((s, d) => s + (d.result as number), 0);
        return deps.length;
      },
    });
    const flow = await soniq.flow({
      job: root,
      args: {},
      children: Array.from({ length: 1000 }, (_, n) => ({ job: child, args: { n } })),
    });
    expect(flow.ids.length).toBe(1001);
    expect((await soniq.flows.get(flow.id))?.counts.waiting).toBe(1);
    // Listings show the waiting root as scheduled (due 9999-12-31), not queued (docs/workflows.md).
    expect((await soniq.jobs.list({ id: [flow.id] })).jobs[0]?.status).toBe("scheduled");
    const worker = soniq.worker({ concurrency: 20 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(flow.id))?.status === "done", 120_000);
    await worker.stop();
    expect(rootRuns).toBe(1);
    expect(childrenAtRoot).toBe(1000);
    expect(total).toBe((999 * 1000) / 2);
    const view = await soniq.flows.get(flow.id);
    expect(view?.state).toBe("done");
    expect(view?.counts.done).toBe(1001);
    await soniq.close();
  });

  it("flow cancel › a flow mid-way › every job not ended is cancelled, none dead-lettered", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const leaf = soniq.job({ name: "wf.leaf", handler: async () => "leaf" });
    const mid = soniq.job({ name: "wf.mid", handler: async () => "mid" });
    const top = soniq.job({ name: "wf.top", handler: async () => "top" });
    const flow = await soniq.flow({
      job: top,
      args: {},
      children: [
        {
          job: mid,
          args: {},
          children: [
            { job: leaf, args: { n: 1 } },
            { job: leaf, args: { n: 2 } },
          ],
        },
        { job: leaf, args: { n: 3 } },
      ],
    });
    const result = await soniq.flows.cancel(flow.id);
    expect(result).toEqual({ cancelled: 5, requested: 0 });
    const view = await soniq.flows.get(flow.id);
    expect(view?.counts.cancelled).toBe(5);
    expect(view?.state).toBe("cancelled");
    await soniq.close();
  });

  it("batch › members that all succeed, and one that fails › onComplete once each; onSuccess or onFailure by outcome, the other cancelled", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const member = soniq.job({
      name: "wf.member",
      maxAttempts: 1,
      handler: async (args: { fail: boolean; n: number }) => {
        if (args.fail) throw new Error("member failed");
        return args.n;
      },
    });
    const calls: string[] = [];
    let seenCounts: unknown;
    const callback = soniq.job({
      name: "wf.callback",
      handler: async (args: { tag: string }, ctx) => {
        calls.push(args.tag);
        const deps = await ctx.dependencies();
        if (args.tag === "good:complete") seenCounts = deps.map((d) => d.state);
        return deps.length;
      },
    });
    const batchOf = (tag: string, failing: boolean) =>
      soniq.batch({
        jobs: Array.from({ length: 5 }, (_, n) => ({
          job: member,
          args: { fail: failing && n === 2, n },
        })),
        onComplete: { job: callback, args: { tag: `${tag}:complete` } },
        onSuccess: { job: callback, args: { tag: `${tag}:success` } },
        onFailure: { job: callback, args: { tag: `${tag}:failure` } },
      });
    const good = await batchOf("good", false);
    const bad = await batchOf("bad", true);
    expect((await soniq.batches.get(good.id))?.state).toBe("running");
    const worker = soniq.worker({ concurrency: 4 });
    await worker.start();
    await waitFor(
      async () =>
        (await soniq.batches.get(good.id))?.callbacks.every(
          (c) => c.state === "done" || c.state === "cancelled",
        ),
      20_000,
    );
    await waitFor(
      async () =>
        (await soniq.batches.get(bad.id))?.callbacks.every(
          (c) => c.state === "done" || c.state === "cancelled",
        ),
      20_000,
    );
    await worker.stop();
    expect(calls.sort()).toEqual(["bad:complete", "bad:failure", "good:complete", "good:success"]);
    expect(seenCounts).toEqual(["done", "done", "done", "done", "done"]);
    expect(await stateOf(soniq, good.callbacks.onFailure!)).toBe("cancelled");
    expect(await stateOf(soniq, bad.callbacks.onSuccess!)).toBe("cancelled");
    const view = await soniq.batches.get(bad.id);
    expect(view?.state).toBe("finished");
    expect(view?.counts).toEqual({ total: 5, pending: 0, done: 4, dead: 1, cancelled: 0, gone: 0 });
    await soniq.close();
  });

  it("batch open › members end before the seal › no callback until sealed; add after the others ended; sealed refuses add", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const member = soniq.job({ name: "wf.member", handler: async (args: { n: number }) => args.n });
    let fired = 0;
    let total = 0;
    const done = soniq.job({
      name: "wf.done",
      handler: async (_args: object, ctx) => {
        fired += 1;
        total = (await ctx.dependencies()).length;
      },
    });
    const batch = await soniq.batch({
      jobs: [{ job: member, args: { n: 1 } }],
      onComplete: { job: done, args: {} },
      open: true,
    });
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, batch.ids[0]!)) === "done", 20_000);
    const [second] = await batch.add([{ job: member, args: { n: 2 } }]);
    await waitFor(async () => (await stateOf(soniq, second!)) === "done", 20_000);
    expect(await stateOf(soniq, batch.callbacks.onComplete!)).toBe("queued");
    expect((await soniq.batches.get(batch.id))?.state).toBe("open");
    expect(await batch.seal()).toBe(true);
    expect(await batch.seal()).toBe(false);
    await waitFor(
      async () => (await stateOf(soniq, batch.callbacks.onComplete!)) === "done",
      20_000,
    );
    await worker.stop();
    expect(fired).toBe(1);
    expect(total).toBe(3); // two members and the seal
    const err = (await batch.add([{ job: member, args: { n: 3 } }]).catch((e) => e)) as SoniqError;
    expect(err.code).toBe("INVALID_STATE");
    await soniq.close();
  });

  it("batch open › sealed with no member yet › INVALID_STATE, still open, no callback released; after an add the seal works", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const member = soniq.job({ name: "wf.member", handler: async (args: { n: number }) => args.n });
    let fired = 0;
    const done = soniq.job({
      name: "wf.done",
      handler: async () => {
        fired += 1;
      },
    });
    const batch = await soniq.batch({ jobs: [], onComplete: { job: done, args: {} }, open: true });
    const err = (await batch.seal().catch((e) => e)) as SoniqError;
    expect(err.code).toBe("INVALID_STATE");
    expect((await soniq.batches.get(batch.id))?.state).toBe("open");
    expect(await stateOf(soniq, batch.callbacks.onComplete!)).toBe("queued");
    const [only] = await batch.add([{ job: member, args: { n: 1 } }]);
    expect(await batch.seal()).toBe(true);
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(
      async () => (await stateOf(soniq, batch.callbacks.onComplete!)) === "done",
      20_000,
    );
    await worker.stop();
    expect(await stateOf(soniq, only!)).toBe("done");
    expect(fired).toBe(1);
    await soniq.close();
  });

  it("batch cancel › flows.cancel(batchId) refused INVALID_ARGS, nothing cancelled; batches.cancel of an open batch seals it, cancels its queued members and stops the running one; the batch finishes failed, callbacks by their rules (issue 29 item 1)", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    let running = false;
    const slow = soniq.job({
      name: "wf.slow",
      handler: async (_args: object, ctx) => {
        running = true;
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          ctx.signal.addEventListener("abort", () => resolve());
        });
        return "stopped";
      },
    });
    // Members no worker of this test claims: they stay queued until cancelled.
    const later = soniq.job({ name: "wf.later", queue: "later", handler: async () => "later" });
    const calls: string[] = [];
    const callback = soniq.job({
      name: "wf.callback",
      handler: async (args: { tag: string }) => {
        calls.push(args.tag);
      },
    });
    const batch = await soniq.batch({
      jobs: [{ job: slow, args: {} }],
      onComplete: { job: callback, args: { tag: "complete" } },
      onSuccess: { job: callback, args: { tag: "success" } },
      onFailure: { job: callback, args: { tag: "failure" } },
      open: true,
    });
    // A batch's id is not a flow's: no flow view, and the flow cancel refuses, naming the batch API.
    expect(await soniq.flows.get(batch.id)).toBeNull();
    expect(await soniq.flows.isBatch(batch.id)).toBe(true);
    const refused = (await soniq.flows.cancel(batch.id).catch((e) => e)) as SoniqError;
    expect(refused.code).toBe("INVALID_ARGS");
    expect(refused.message).toContain("soniq.batches.cancel");
    expect((await soniq.batches.get(batch.id))?.counts).toMatchObject({ pending: 1, cancelled: 0 });
    const worker = soniq.worker({ concurrency: 4, queues: ["default"] });
    await worker.start();
    await waitFor(() => running, 20_000);
    await batch.add([
      { job: later, args: {} },
      { job: later, args: {} },
    ]);
    expect(await soniq.batches.cancel(batch.id)).toEqual({
      sealed: true,
      cancelled: 2,
      requested: 1,
    });
    await waitFor(
      async () =>
        (await soniq.batches.get(batch.id))?.callbacks.every(
          (c) => c.state === "done" || c.state === "cancelled",
        ),
      20_000,
    );
    await worker.stop();
    const view = await soniq.batches.get(batch.id);
    expect(view?.state).toBe("finished");
    expect(view?.counts).toEqual({ total: 3, pending: 0, done: 0, dead: 0, cancelled: 3, gone: 0 });
    expect(calls.sort()).toEqual(["complete", "failure"]);
    expect(await stateOf(soniq, batch.callbacks.onSuccess!)).toBe("cancelled");
    const addAfter = (await batch.add([{ job: later, args: {} }]).catch((e) => e)) as SoniqError;
    expect(addAfter.code).toBe("INVALID_STATE");
    // Again: a finished batch has nothing left to cancel.
    expect(await soniq.batches.cancel(batch.id)).toEqual({
      sealed: false,
      cancelled: 0,
      requested: 0,
    });
    // An open batch with no member: refused, still open; an unknown id: NOT_FOUND.
    const empty = await soniq.batch({
      jobs: [],
      onComplete: { job: callback, args: {} },
      open: true,
    });
    const none = (await soniq.batches.cancel(empty.id).catch((e) => e)) as SoniqError;
    expect(none.code).toBe("INVALID_STATE");
    expect((await soniq.batches.get(empty.id))?.state).toBe("open");
    const unknown = (await soniq.batches
      .cancel("0190a0b0-0000-7000-8000-000000000000")
      .catch((e) => e)) as SoniqError;
    expect(unknown.code).toBe("NOT_FOUND");
    await soniq.close();
  });

  it("batch contracts › last member NACK'd, then recovered from a dead owner, then a late fenced-out completion › the callback fires once, after the real end", async () => {
    const backend = await target.open();
    const soniq = instanceOn(backend);
    const member = soniq.job({ name: "wf.member", handler: async () => "m" });
    let fired = 0;
    const done = soniq.job({
      name: "wf.done",
      handler: async () => {
        fired += 1;
      },
    });
    const batch = await soniq.batch({
      jobs: [{ job: member, args: {} }],
      onComplete: { job: done, args: {} },
    });
    const memberId = batch.ids[0] as string;
    const callbackId = batch.callbacks.onComplete as string;
    // A NACK at the deadline hands the member back: not an end.
    const [first] = await backend.jobClaim({
      workerId: "w-nack",
      queues: null,
      limit: 1,
      names: ["wf.member"],
    });
    expect(first?.id).toBe(memberId);
    await backend.jobNack({
      id: memberId,
      owner: { workerId: "w-nack", claimToken: first!.claimToken },
    });
    expect(await stateOf(soniq, callbackId)).toBe("queued");
    expect((await soniq.batches.get(batch.id))?.counts.pending).toBe(1);
    // A worker that died holding it: recovery requeues it, still not an end.
    const [second] = await backend.jobClaim({
      workerId: "w-dead",
      queues: null,
      limit: 1,
      names: ["wf.member"],
    });
    expect(second?.id).toBe(memberId);
    await backend.jobRecoverStale({ crashLoop: crashLoopRule(3) });
    expect((await soniq.getJob(memberId))?.status).toBe("queued");
    expect((await soniq.batches.get(batch.id))?.callbacks[0]?.state).toBe("waiting");
    // The real run ends it; the dead owner's late completion is fenced out and ends nothing.
    const worker = soniq.worker({ concurrency: 2 });
    await worker.start();
    await waitFor(async () => (await stateOf(soniq, callbackId)) === "done", 20_000);
    await worker.stop();
    const late = await backend.jobComplete({
      id: memberId,
      owner: { workerId: "w-dead", claimToken: second!.claimToken },
      result: null,
      resultRetentionSeconds: 60,
    });
    expect(late).toBe(false);
    expect(fired).toBe(1);
    expect((await soniq.getJob(callbackId))?.attempts).toBe(1);
    await soniq.close();
  });
});
