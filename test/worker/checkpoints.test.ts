/**
 * Checkpoints and durable steps (docs/checkpoints.md), in-process, on each backend (SQLite file,
 * PostgreSQL, and memory): `ctx.resume` after a snooze, a retry and a drain-deadline NACK; a stale
 * owner's checkpoint refused (`CLAIM_LOST`, `ctx.signal` aborted); a finished step not run again;
 * an effect step in flight at the deadline freezes the job (never run again without an answer),
 * `reconcile` and `soniq.jobs.resolveStep` answer it; sizes and duplicate names refused with
 * codes; the state kept on the finished row. The real-process cases (SIGKILL,
 * SIGTERM past the deadline) are in test/e2e/checkpoints-processes.test.ts.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { jobDetailJson, jobDetailJsonSchema } from "../../src/admin/json/index.js";
import type { Backend } from "../../src/backends/contract/index.js";
import { isSoniqError, type JobContext, type MetricsSink, Soniq, snooze } from "../../src/index.js";
import {
  type BackendTarget,
  describeEachBackend,
  IN_PGBOUNCER_PROJECT,
} from "../helpers/backend-targets.js";
import { useBackends } from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

async function open(target: BackendTarget, extra: Record<string, unknown> = {}) {
  const backend = await target.open();
  const soniq = new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...extra,
  });
  return { soniq, backend };
}

/** A queued job's checkpoint and steps (null when the job is not queued). */
async function liveState(backend: Backend, id: string) {
  return backend.jobResumeRead({ id });
}

function codeOf(err: unknown): string | undefined {
  return isSoniqError(err) ? err.code : undefined;
}

const THREAD_HANDLERS = new URL("../fixtures/thread-handlers.mjs", import.meta.url);

function suite(target: BackendTarget): void {
  it("thread handler › ctx.checkpoint blocks until durable; a too-large state throws INVALID_PAYLOAD, nothing written (resume on threads: readme-sync-handler.test.ts)", async () => {
    const { soniq, backend } = await open(target, { maxPayloadBytes: 200 });
    const job = soniq.syncJob<{ big: number }>({
      name: "cp.thread",
      handlerModule: THREAD_HANDLERS,
      exportName: "checkpointer",
    });
    const first = await job.enqueue({ big: 500 });
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(first))?.status === "done", 15_000, "done");
    expect((await soniq.getJob(first))?.result).toEqual({ resume: null, code: "INVALID_PAYLOAD" });
    expect((await backend.jobGet({ id: first }))?.checkpoint).toBe('{"n":1}');
    await worker.stop();
    await soniq.close();
  });

  it("ctx.resume › undefined on a fresh start; the last checkpoint after a snooze(0) and after a retry", async () => {
    const { soniq, backend } = await open(target);
    const seen: unknown[] = [];
    const walk = soniq.job({
      name: "cp.walk",
      retry: { kind: "fixed", delay: 0 },
      handler: async (_args: object, ctx: JobContext) => {
        seen.push(ctx.resume);
        if (ctx.attempt === 1 && ctx.resume === undefined) {
          await ctx.checkpoint({ cursor: 1 });
          await ctx.checkpoint({ cursor: 2 });
          return snooze(0);
        }
        if (ctx.attempt === 1) {
          await ctx.checkpoint({ cursor: 3 });
          throw new Error("fails once after checkpoint 3");
        }
        return ctx.resume;
      },
    });
    const id = await walk.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await worker.stop();
    expect(seen).toEqual([undefined, { cursor: 2 }, { cursor: 3 }]);
    expect(await soniq.getJob(id)).toMatchObject({ attempts: 2, result: { cursor: 3 } });
    // Moved out of the live table: the finished row keeps the last checkpoint for operators.
    expect(await liveState(backend, id)).toBeNull();
    expect((await backend.jobGet({ id }))?.checkpoint).toBe('{"cursor":3}');
    await soniq.close();
  });

  it("drain deadline › a checkpointing handler NACK'd at FORCE_TIMEOUT_PATH › the next worker resumes from the last checkpoint", async () => {
    const { soniq } = await open(target, { shutdownTimeout: 0.3, shutdownSettle: 0.2 });
    const resumes: unknown[] = [];
    let checkpoints = 0;
    const long = soniq.job({
      name: "cp.long",
      handler: async (_args: object, ctx: JobContext) => {
        resumes.push(ctx.resume);
        if (ctx.resume !== undefined) return ctx.resume;
        // Walks until stopped, checkpointing each item; ignores the abort (NACK'd at the deadline).
        for (let i = 1; ; i++) {
          await ctx.checkpoint({ done: i });
          checkpoints = i;
          await new Promise((r) => setTimeout(r, 10));
          if (ctx.signal.aborted) await new Promise(() => undefined);
        }
      },
    });
    const id = await long.enqueue({});
    const first = soniq.worker();
    await first.start();
    await waitFor(() => checkpoints >= 3, 10_000, "three checkpoints");
    const exit = await first.stop("SIGTERM");
    expect(exit).toMatchObject({ reason: "shutdown_timeout", released: [id] });
    const atStop = checkpoints;
    const second = soniq.worker();
    await second.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await second.stop();
    const result = (await soniq.getJob(id))?.result as { done: number };
    // Every checkpoint whose await resolved is durable; a later one may have landed too.
    expect(result.done).toBeGreaterThanOrEqual(atStop);
    expect(resumes[0]).toBeUndefined();
    expect(resumes).toHaveLength(2);
    expect(await soniq.getJob(id)).toMatchObject({ attempts: 1 });
    await soniq.close();
  });

  it("stale owner › the claim was lost (NACK'd elsewhere) › checkpoint and step reject CLAIM_LOST and ctx.signal is aborted; the earlier checkpoint stands", async () => {
    const { soniq, backend } = await open(target);
    let lost: unknown;
    let signalReason: unknown;
    let stepLost: unknown;
    let stepRan = false;
    const resumes: unknown[] = [];
    const job = soniq.job({
      name: "cp.stale",
      handler: async (_args: object, ctx: JobContext) => {
        resumes.push(ctx.resume);
        if (ctx.resume !== undefined) return "second claim";
        await ctx.checkpoint({ n: 1 });
        // Another party takes the row away from this claim (as recovery would).
        const [owned] = await backend.jobOwnedBy({ workerId: ctx.workerId });
        await backend.jobNack({
          id: ctx.jobId,
          owner: { workerId: ctx.workerId, claimToken: owned?.claimToken as string },
        });
        try {
          await ctx.checkpoint({ n: 2 });
        } catch (err) {
          lost = err;
          signalReason = ctx.signal.reason;
        }
        // A step after the loss is refused too, without running.
        stepLost = await ctx
          .step("after", () => {
            stepRan = true;
          })
          .then(
            () => undefined,
            (err: unknown) => err,
          );
        return "first claim";
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await worker.stop();
    expect(codeOf(lost)).toBe("CLAIM_LOST");
    expect(signalReason).toBe(lost);
    expect(codeOf(stepLost)).toBe("CLAIM_LOST");
    expect(stepRan).toBe(false);
    expect(resumes).toEqual([undefined, { n: 1 }]);
    expect((await soniq.getJob(id))?.result).toBe("second claim");
    await soniq.close();
  });

  it("stale owner › a checkpoint written with another claim token › refused by the store, nothing written", async () => {
    const { soniq, backend } = await open(target);
    soniq.job({ name: "cp.fence", handler: () => undefined });
    const id = await soniq.enqueue("cp.fence", {});
    const [claimed] = await backend.jobClaim({ workerId: "w-test", queues: null, limit: 1 });
    expect(claimed?.id).toBe(id);
    const owner = { workerId: "w-test", claimToken: claimed?.claimToken as string };
    const stale = { workerId: "w-test", claimToken: "00000000-0000-4000-8000-000000000000" };
    expect(await backend.jobCheckpoint({ id, owner: stale, checkpoint: '{"x":1}' })).toBe(false);
    expect(await backend.jobResumeRead({ id, owner })).toEqual({ checkpoint: null, steps: null });
    expect(await backend.jobCheckpoint({ id, owner, checkpoint: '{"x":2}', steps: "{}" })).toBe(
      true,
    );
    expect(await backend.jobResumeRead({ id, owner })).toEqual({
      checkpoint: '{"x":2}',
      steps: "{}",
    });
    expect(await backend.jobResumeRead({ id, owner: stale })).toBeNull();
    await soniq.close();
  });

  it("clearCheckpoint › a snoozed job with a checkpoint and a step › the next attempt starts afresh; a running or missing job is refused with a code", async () => {
    const { soniq } = await open(target);
    const seen: unknown[] = [];
    let stepRuns = 0;
    let snoozed = false;
    const job = soniq.job({
      name: "cp.clear",
      handler: async (_args: object, ctx: JobContext) => {
        seen.push(ctx.resume);
        await ctx.step("once", () => {
          stepRuns += 1;
        });
        if (!snoozed) {
          snoozed = true;
          await ctx.checkpoint({ at: 1 });
          return snooze(3600);
        }
        return "second run";
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(
      async () => (await soniq.getJob(id))?.status === "queued" && snoozed,
      15_000,
      "snoozed",
    );
    await worker.stop();
    expect((await soniq.getJob(id))?.checkpoint).toBe('{"at":1}');
    await soniq.jobs.clearCheckpoint(id);
    expect(await soniq.getJob(id)).toMatchObject({ checkpoint: null, steps: null });
    await soniq.jobs.retry(id); // due now
    const again = soniq.worker();
    await again.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await again.stop();
    expect(seen).toEqual([undefined, undefined]);
    expect(stepRuns).toBe(2);
    await expect(soniq.jobs.clearCheckpoint(id)).rejects.toMatchObject({ code: "INVALID_STATE" });
    await expect(
      soniq.jobs.clearCheckpoint("00000000-0000-4000-8000-000000000000"),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await soniq.close();
  });

  it("operable › jobs.get shows the checkpoint (count, last time, size, state) and the steps; the timeline has the last checkpoint and each step, and the clear; jobs show --json's shape", async () => {
    const { soniq } = await open(target);
    let runs = 0;
    const job = soniq.job({
      name: "cp.shown",
      handler: async (_args: object, ctx: JobContext) => {
        runs += 1;
        await ctx.step("a", () => "first");
        for (let i = 1; i <= 3; i++) await ctx.checkpoint({ i });
        return snooze(3600);
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(
      async () => runs === 1 && (await soniq.getJob(id))?.status === "queued",
      15_000,
      "snoozed",
    );
    await worker.stop();
    const shown = await soniq.jobs.get(id);
    if (!shown || !("checkpoint" in shown)) throw new Error("no job view");
    expect(shown.checkpoint).toMatchObject({ count: 3, bytes: 7, value: { i: 3 } });
    expect(shown.checkpoint?.at).toBeInstanceOf(Date);
    expect(shown.steps).toEqual([{ name: "a", state: "done", at: expect.any(Date) }]);
    const kinds = shown.timeline.map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(["checkpoint", "step", "snoozed"]));
    expect(shown.timeline.find((e) => e.kind === "checkpoint")?.detail).toBe(
      "last of 3 checkpoints, 7 bytes",
    );
    expect(shown.timeline.find((e) => e.kind === "step")?.detail).toBe("a: done");
    // The CLI's `jobs show --json` prints jobDetailJson(view); it matches the published schema.
    const json = jobDetailJsonSchema.parse(jobDetailJson(shown));
    expect(json.checkpoint).toMatchObject({ count: 3, bytes: 7, value: { i: 3 } });
    expect(json.steps).toEqual([{ name: "a", state: "done", at: expect.any(String) }]);
    // A list row carries neither.
    const listed = (await soniq.jobs.list({ id: [id] })).jobs[0];
    expect(listed && "checkpoint" in listed).toBe(false);

    await soniq.jobs.clearCheckpoint(id);
    const cleared = await soniq.jobs.get(id);
    expect(cleared).toMatchObject({ checkpoint: null, steps: [] });
    expect(cleared?.timeline.map((e) => e.kind)).toContain("checkpoint_cleared");
    expect(cleared?.timeline.map((e) => e.kind)).not.toContain("checkpoint");
    await soniq.close();
  });

  it("write cost › each awaited checkpoint is at most one write through the store; a burst of calls coalesces; a job that never checkpoints writes and reads nothing of it", async () => {
    const backend = await target.open();
    const calls = new Map<string, number>();
    const counted = new Proxy(backend, {
      get(t, key, receiver) {
        const value = Reflect.get(t, key, receiver);
        if (typeof value !== "function" || typeof key !== "string") return value;
        return (...args: unknown[]) => {
          calls.set(key, (calls.get(key) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown).apply(t, args);
        };
      },
    });
    const soniq = new Soniq({
      backend: counted,
      logger: silent,
      env: {},
      pollInterval: 0.05,
      heartbeatInterval: 0.1,
    });
    const plain = soniq.job({ name: "cp.plain", handler: async () => "ok" });
    const paced = soniq.job({
      name: "cp.paced",
      handler: async (_args: object, ctx: JobContext) => {
        // A checkpoint per unit of work (every 100 ms in real use): each awaited, at most one write.
        for (let i = 0; i < 20; i++) await ctx.checkpoint({ i });
        return "ok";
      },
    });
    const burst = soniq.job({
      name: "cp.burst",
      handler: async (_args: object, ctx: JobContext) => {
        // 1000 calls in one tick, none awaited but the last: coalesced into at most two writes.
        let last: Promise<void> = Promise.resolve();
        for (let i = 0; i < 1000; i++) last = ctx.checkpoint({ i });
        await last;
        return "ok";
      },
    });
    const worker = soniq.worker();
    await worker.start();
    const done = async (id: string) =>
      waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await done(await plain.enqueue({}));
    expect(calls.get("jobCheckpoint") ?? 0).toBe(0);
    expect(calls.get("jobResumeRead") ?? 0).toBe(0);
    await done(await paced.enqueue({}));
    expect(calls.get("jobCheckpoint")).toBe(20);
    const pacedRow = await soniq.jobs.get(
      (await soniq.jobs.list({ name: ["cp.paced"] })).jobs[0]?.id as string,
    );
    expect(pacedRow && "checkpoint" in pacedRow ? pacedRow.checkpoint?.count : null).toBe(20);
    await done(await burst.enqueue({}));
    const burstWrites = (calls.get("jobCheckpoint") ?? 0) - 20;
    expect(burstWrites).toBeGreaterThanOrEqual(1);
    expect(burstWrites).toBeLessThanOrEqual(2);
    // A fresh start reads no state (only a job whose meta carries the resume flag is read).
    expect(calls.get("jobResumeRead") ?? 0).toBe(0);
    await worker.stop();
    await soniq.close();
  });

  it("steps › a finished step is returned without running on later attempts; names are unique per attempt", async () => {
    const { soniq } = await open(target);
    const runs = { a: 0, b: 0 };
    let duplicate: unknown;
    const job = soniq.job({
      name: "cp.steps",
      retry: { kind: "fixed", delay: 0 },
      handler: async (_args: object, ctx: JobContext) => {
        const a = await ctx.step("a", () => {
          runs.a += 1;
          return { charged: 42 };
        });
        await ctx.step("b", async () => {
          runs.b += 1;
        });
        try {
          await ctx.step("a", () => 0);
        } catch (err) {
          duplicate = err;
        }
        if (ctx.attempt === 1) throw new Error("fails after its steps");
        return a;
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await worker.stop();
    expect(runs).toEqual({ a: 1, b: 1 });
    expect(codeOf(duplicate)).toBe("DUPLICATE_STEP");
    expect(await soniq.getJob(id)).toMatchObject({ attempts: 2, result: { charged: 42 } });
    await soniq.close();
  });

  it("sizes › a checkpoint or a step result over maxPayloadBytes › INVALID_PAYLOAD, nothing written", async () => {
    const { soniq, backend } = await open(target, { maxPayloadBytes: 200 });
    const codes: Array<string | undefined> = [];
    let stepRuns = 0;
    const job = soniq.job({
      name: "cp.sizes",
      handler: async (_args: object, ctx: JobContext) => {
        await ctx.checkpoint({ small: true });
        await ctx.checkpoint({ big: "x".repeat(500) }).catch((e: unknown) => codes.push(codeOf(e)));
        await ctx.checkpoint({ bad: new Date(0) }).catch((e: unknown) => codes.push(codeOf(e)));
        await ctx
          .step("big", () => {
            stepRuns += 1;
            return "y".repeat(500);
          })
          .catch((e: unknown) => codes.push(codeOf(e)));
        await ctx.step("", () => 1).catch((e: unknown) => codes.push(codeOf(e)));
        const [owned] = await backend.jobOwnedBy({ workerId: ctx.workerId });
        return backend.jobResumeRead({
          id: ctx.jobId,
          owner: { workerId: ctx.workerId, claimToken: owned?.claimToken as string },
        });
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await worker.stop();
    expect(codes).toEqual([
      "INVALID_PAYLOAD",
      "INVALID_PAYLOAD",
      "INVALID_PAYLOAD",
      "INVALID_ARGS",
    ]);
    expect(stepRuns).toBe(1);
    expect((await soniq.getJob(id))?.result).toEqual({ checkpoint: '{"small":true}', steps: null });
    await soniq.close();
  });

  it("effect step › in flight at the drain deadline › the job is frozen, never run again on its own; resolveStep({ done }) finishes it without running the step", async () => {
    const events: Array<{ name: string; payload: unknown }> = [];
    const metrics: MetricsSink = { emit: (name, payload) => void events.push({ name, payload }) };
    const { soniq, backend } = await open(target, {
      shutdownTimeout: 0.3,
      shutdownSettle: 0.2,
      metrics,
    });
    let charges = 0;
    let inCharge = false;
    const job = soniq.job({
      name: "cp.effect",
      handler: async (_args: object, ctx: JobContext) => {
        const before = await ctx.step("prepare", () => "prepared");
        const receipt = await ctx.step(
          "charge",
          async () => {
            charges += 1;
            inCharge = true;
            await new Promise(() => undefined); // never answers: outcome unknown at the deadline
          },
          { effect: true },
        );
        return { before, receipt };
      },
    });
    const id = await job.enqueue({});
    const first = soniq.worker();
    await first.start();
    await waitFor(() => inCharge, 10_000, "the charge step running");
    expect(await first.stop("SIGTERM")).toMatchObject({ released: [id] });
    const second = soniq.worker();
    await second.start();
    const frozen = await waitFor(
      async () => {
        const row = await soniq.getJob(id);
        return row?.status === "queued" && row.lastError?.startsWith("frozen") ? row : undefined;
      },
      15_000,
      "frozen",
    );
    expect(charges).toBe(1);
    await waitFor(() => events.some((e) => e.name === "job_frozen"), 10_000, "job_frozen");
    expect(events.find((e) => e.name === "job_frozen")?.payload).toMatchObject({
      job_id: id,
      job_name: "cp.effect",
      step: "charge",
    });
    expect(frozen.scheduledAt.getUTCFullYear()).toBe(9999);
    expect(frozen.workerId).toBeNull();
    expect(JSON.parse((await liveState(backend, id))?.steps as string)).toEqual({
      prepare: { s: "done", r: "prepared", t: expect.any(Number) },
      charge: { s: "frozen", t: expect.any(Number) },
    });
    // Operable: the admin view and the timeline show the frozen step (docs/checkpoints.md).
    const shown = await soniq.jobs.get(id);
    expect(shown && "steps" in shown ? shown.steps.map((st) => [st.name, st.state]) : []).toEqual([
      ["prepare", "done"],
      ["charge", "frozen"],
    ]);
    expect(shown?.timeline.filter((e) => e.kind === "step").map((e) => e.detail)).toEqual(
      expect.arrayContaining(["prepare: done", "charge: frozen"]),
    );
    // A rerun answer is refused for a step that is not there; a bad answer too.
    await expect(soniq.jobs.resolveStep(id, "nope", { rerun: true })).rejects.toMatchObject({
      code: "INVALID_STATE",
    });
    await expect(
      soniq.jobs.resolveStep(id, "charge", {} as unknown as { rerun: true }),
    ).rejects.toMatchObject({ code: "INVALID_ARGS" });
    await soniq.jobs.resolveStep(id, "charge", { done: "receipt-1" });
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await second.stop();
    expect(charges).toBe(1);
    expect((await soniq.getJob(id))?.result).toEqual({ before: "prepared", receipt: "receipt-1" });
    const resolved = await soniq.jobs.get(id);
    expect(resolved?.timeline.find((e) => e.kind === "step_resolved")?.detail).toBe("charge: done");
    expect(resolved && "steps" in resolved ? resolved.steps.map((st) => st.state) : []).toEqual([
      "done",
      "done",
    ]);
    await expect(soniq.jobs.resolveStep(id, "charge", { rerun: true })).rejects.toMatchObject({
      code: "INVALID_STATE",
    });
    await soniq.close();
  });

  it("resolveStep › a frozen job answered › jobs.get (what `soniq jobs show` prints) no longer shows the freeze as its last error; timeline and steps say what happened (issue 29 item 4)", async () => {
    const { soniq } = await open(target, { shutdownTimeout: 0.3, shutdownSettle: 0.2 });
    let inCharge = false;
    const job = soniq.job({
      name: "cp.resolve",
      handler: async (_args: object, ctx: JobContext) => {
        await ctx.step(
          "charge",
          async () => {
            inCharge = true;
            await new Promise(() => undefined);
          },
          { effect: true },
        );
        return "ran";
      },
    });
    const id = await job.enqueue({});
    const first = soniq.worker();
    await first.start();
    await waitFor(() => inCharge, 10_000, "the charge step running");
    await first.stop("SIGTERM");
    const second = soniq.worker();
    await second.start();
    await waitFor(
      async () => (await soniq.getJob(id))?.lastError?.startsWith("frozen") === true,
      15_000,
      "frozen",
    );
    await second.stop();
    expect((await soniq.jobs.get(id))?.lastError).toMatch(/^frozen: /);
    await soniq.jobs.resolveStep(id, "charge", { done: "elsewhere" });
    const shown = await soniq.jobs.get(id);
    expect(shown?.status).toBe("queued");
    expect(shown?.lastError).toBeNull();
    expect(shown && "steps" in shown ? shown.steps.map((st) => st.state) : []).toEqual(["done"]);
    expect(shown?.timeline.find((e) => e.kind === "step_resolved")?.detail).toBe("charge: done");
    await soniq.close();
  });

  it("dead-lettered job › clearCheckpoint and resolveStep › INVALID_STATE naming the dead-letter queue (it keeps no checkpoint), not NOT_FOUND (issue 29 item 6)", async () => {
    const { soniq } = await open(target);
    const job = soniq.job({
      name: "cp.dies",
      maxAttempts: 1,
      handler: async (_args: object, ctx: JobContext) => {
        await ctx.checkpoint({ at: 1 });
        throw new Error("gives up");
      },
    });
    const id = await job.enqueue({});
    const worker = soniq.worker();
    await worker.start();
    await waitFor(async () => (await soniq.getDeadLetter(id)) !== null, 15_000, "dead");
    await worker.stop();
    for (const call of [
      () => soniq.jobs.clearCheckpoint(id),
      () => soniq.jobs.resolveStep(id, "charge", { rerun: true }),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(codeOf(err)).toBe("INVALID_STATE");
      expect((err as Error).message).toContain("is in the dead-letter queue");
    }
    await expect(
      soniq.jobs.clearCheckpoint("00000000-0000-4000-8000-000000000000"),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    await soniq.close();
  });

  it("effect step › reconcile decides on the next attempt: { rerun: true } runs it again; a step that threw runs again without freezing", async () => {
    const { soniq } = await open(target, { shutdownTimeout: 0.3, shutdownSettle: 0.2 });
    let sends = 0;
    let stuck = true;
    let reconciled = 0;
    const job = soniq.job({
      name: "cp.reconcile",
      retry: { kind: "fixed", delay: 0 },
      handler: async (_args: object, ctx: JobContext) => {
        const thrown = await ctx.step(
          "flaky",
          () => {
            if (ctx.attempt === 1 && ctx.resume === undefined) throw new Error("definite failure");
            return "ok";
          },
          { effect: true },
        );
        const sent = await ctx.step(
          "send",
          async () => {
            sends += 1;
            if (stuck) await new Promise(() => undefined);
            return "sent";
          },
          {
            effect: true,
            reconcile: () => {
              reconciled += 1;
              return { rerun: true };
            },
          },
        );
        return { thrown, sent };
      },
    });
    const id = await job.enqueue({});
    const first = soniq.worker();
    await first.start();
    await waitFor(() => sends === 1, 10_000, "the send step running");
    await first.stop("SIGTERM");
    stuck = false;
    const second = soniq.worker();
    await second.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "done", 15_000, "done");
    await second.stop();
    expect(reconciled).toBe(1);
    expect(sends).toBe(2);
    expect((await soniq.getJob(id))?.result).toEqual({ thrown: "ok", sent: "sent" });
    await soniq.close();
  });
}

describeEachBackend("checkpoints and steps", suite);

describe.skipIf(IN_PGBOUNCER_PROJECT)("checkpoints and steps on memory", () => {
  suite(useBackends("memory"));
});
