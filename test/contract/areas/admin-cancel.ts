/**
 * Operations contract: cancel. A queued job is cancelled at once; a running one keeps its owner
 * and gets a request its owner learns (heartbeat or notification) and records through the fence;
 * cancel racing completion ends in exactly one terminal state; a dead owner's cancelled claim is
 * finalised by recovery, never requeued. Also through a real worker: async (signal aborted with
 * JobCancelledError; a handler that ignores it is recorded after the settle window) and sync
 * (stopRequested(), recorded when the thread returns).
 */
import { describe, expect, it } from "vitest";
import { crashLoopRule } from "../../../src/maintenance/policy.js";
import { waitFor } from "../../helpers/wait.js";
import type { ContractContext } from "../helpers.js";
import { ownerOf } from "../helpers.js";
import { claimOne, put, soniqOn } from "./admin-helpers.js";

const HANDLERS = new URL("../../fixtures/thread-handlers.mjs", import.meta.url);

export function adminCancelCases({ make }: ContractContext): void {
  describe("operations: cancel", () => {
    it("jobCancelRequest › queued job › cancelled at once, with a timeline event", async () => {
      const b = await make();
      const id = await put(b);
      expect(await b.admin.jobCancelRequest({ id, retentionSeconds: 60 })).toBe("cancelled");
      expect(await b.jobGet({ id })).toMatchObject({ status: "cancelled" });
      expect(await b.admin.jobCancelRequest({ id, retentionSeconds: 60 })).toBe("finished");
      expect((await b.admin.jobEventsList({ jobId: id })).map((e) => e.kind)).toEqual([
        "cancelled",
      ]);
      expect(
        await b.admin.jobCancelRequest({ id: crypto.randomUUID(), retentionSeconds: 60 }),
      ).toBe("not_found");
    });

    it("jobCancelRequest › processing job › owner kept, beat reports it, owner records cancelled", async () => {
      const b = await make();
      const id = await put(b);
      const job = await claimOne(b, "w1");
      const heard: string[] = [];
      const off = b.admin.subscribeCancel((jobId) => heard.push(jobId));
      expect(await b.admin.jobCancelRequest({ id, retentionSeconds: 60 })).toBe("requested");
      expect(await b.admin.jobCancelRequest({ id, retentionSeconds: 60 })).toBe(
        "already_requested",
      );
      expect(await b.jobGet({ id })).toMatchObject({ status: "processing", workerId: "w1" });
      await waitFor(() => heard.includes(id), 2000, "the in-process cancel notification");
      off();
      const beat = await b.admin.workerBeat({
        workerId: "w1",
        status: "running",
        shutdownState: "RUNNING",
        drainElapsedSeconds: null,
        deadlineInSeconds: null,
        progress: [],
      });
      expect(beat.cancelRequested).toEqual([id]);
      // Only the owner's fence records it.
      expect(
        await b.admin.jobCancelFinish({
          id,
          owner: { workerId: "w2", claimToken: job.claimToken },
          retentionSeconds: 60,
        }),
      ).toBe(false);
      expect(await b.admin.jobCancelFinish({ id, owner: ownerOf(job), retentionSeconds: 60 })).toBe(
        true,
      );
      expect(await b.jobGet({ id })).toMatchObject({ status: "cancelled", attempts: 0 });
      const kinds = (await b.admin.jobEventsList({ jobId: id })).map((e) => e.kind);
      expect(kinds).toEqual(["cancel_requested", "cancelled"]);
    });

    it("cancel racing completion › either order › exactly one terminal state", async () => {
      const b = await make();
      // Completion first: the request finds it finished; the owner's cancel write is fenced out.
      const first = await put(b);
      const j1 = await claimOne(b, "w1");
      expect(
        await b.jobComplete({
          id: first,
          owner: ownerOf(j1),
          result: "1",
          resultRetentionSeconds: 60,
        }),
      ).toBe(true);
      expect(await b.admin.jobCancelRequest({ id: first, retentionSeconds: 60 })).toBe("finished");
      expect(
        await b.admin.jobCancelFinish({ id: first, owner: ownerOf(j1), retentionSeconds: 60 }),
      ).toBe(false);
      expect(await b.jobGet({ id: first })).toMatchObject({ status: "done" });
      // Request first, then the handler's success lands before the owner heard: done wins, and
      // the cancel write that follows changes nothing.
      const second = await put(b);
      const j2 = await claimOne(b, "w1");
      expect(await b.admin.jobCancelRequest({ id: second, retentionSeconds: 60 })).toBe(
        "requested",
      );
      expect(
        await b.jobComplete({
          id: second,
          owner: ownerOf(j2),
          result: "2",
          resultRetentionSeconds: 60,
        }),
      ).toBe(true);
      expect(
        await b.admin.jobCancelFinish({ id: second, owner: ownerOf(j2), retentionSeconds: 60 }),
      ).toBe(false);
      expect(await b.jobGet({ id: second })).toMatchObject({ status: "done" });
    });

    it("jobRecoverStale › dead owner with a cancel request › cancelled, not requeued; a later claim is not bound", async () => {
      const b = await make();
      const id = await put(b);
      await claimOne(b, "dead-worker");
      await b.workerMarkStopped({ workerId: "dead-worker" });
      expect(await b.admin.jobCancelRequest({ id, retentionSeconds: 60 })).toBe("requested");
      const result = await b.jobRecoverStale({
        staleAfterSeconds: 30,
        crashLoop: crashLoopRule(3),
      });
      expect(result.cancelled.map((j) => j.id)).toEqual([id]);
      expect(result.requeued).toEqual([]);
      expect(await b.jobGet({ id })).toMatchObject({ status: "cancelled" });

      // A request binds the claim it was made on: NACK'd and claimed again, the job runs.
      const other = await put(b);
      const c1 = await claimOne(b, "w1");
      expect(await b.admin.jobCancelRequest({ id: other, retentionSeconds: 60 })).toBe("requested");
      expect(await b.jobNack({ id: other, owner: ownerOf(c1) })).toBe(true);
      await claimOne(b, "w2");
      const beat = await b.admin.workerBeat({
        workerId: "w2",
        status: "running",
        shutdownState: "RUNNING",
        drainElapsedSeconds: null,
        deadlineInSeconds: null,
        progress: [],
      });
      expect(beat.cancelRequested).toEqual([]);
    });

    it("soniq.jobs.cancel › running async job › signal aborted with JobCancelledError, recorded cancelled", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      let reason: unknown;
      const job = soniq.job({
        name: "c.wait",
        handler: (_args: object, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener("abort", () => {
              reason = ctx.signal.reason;
              reject(ctx.signal.reason);
            });
          }),
      });
      const id = await job.enqueue({});
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      await waitFor(async () => (await b.jobGet({ id }))?.status === "processing", 5000, "claimed");
      expect(await soniq.jobs.cancel(id)).toBe("requested");
      await waitFor(
        async () => (await b.jobGet({ id }))?.status === "cancelled",
        5000,
        "cancelled",
      );
      expect((reason as Error).name).toBe("JobCancelledError");
      const detail = await soniq.jobs.get(id);
      expect(detail?.timeline.map((e) => e.kind)).toEqual([
        "enqueued",
        "started",
        "cancel_requested",
        "cancelled",
      ]);
      await worker.stop();
      await expect(soniq.jobs.cancel(id)).rejects.toMatchObject({ code: "INVALID_STATE" });
    });

    it("soniq.jobs.cancel › handler ignores its signal › cancelled after the settle window; late result fenced out", async () => {
      const b = await make();
      const soniq = soniqOn(b, { shutdownSettle: 0.2 });
      const job = soniq.job({
        name: "c.stubborn",
        handler: () => new Promise((resolve) => setTimeout(() => resolve("late"), 1500)),
      });
      const id = await job.enqueue({});
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      await waitFor(async () => (await b.jobGet({ id }))?.status === "processing", 5000, "claimed");
      await soniq.jobs.cancel(id);
      await waitFor(
        async () => (await b.jobGet({ id }))?.status === "cancelled",
        1400,
        "cancelled before the handler returned",
      );
      await new Promise((r) => setTimeout(r, 1500));
      expect(await b.jobGet({ id })).toMatchObject({ status: "cancelled", result: null });
      await worker.stop();
    });

    it("soniq.jobs.cancel › running sync job › stopRequested() says cancelled; recorded when the thread returns", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const job = soniq.syncJob<{ steps: number }>({
        name: "c.thread",
        handlerModule: HANDLERS,
        exportName: "progressThenWait",
      });
      const id = await job.enqueue({ steps: 3 });
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      await waitFor(
        async () => (await b.jobGet({ id }))?.status === "processing",
        10_000,
        "claimed",
      );
      await soniq.jobs.cancel(id);
      await waitFor(
        async () => (await b.jobGet({ id }))?.status === "cancelled",
        10_000,
        "cancelled",
      );
      await worker.stop();
    });
  });
}
