/**
 * Operations contract: progress. `ctx.progress()` (async and sync handlers) is kept in memory and
 * written with the heartbeat — many calls cost no write of their own — and read back through
 * `soniq.jobs.get`. Progress is fenced by the claim: a stale owner writes nothing.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../../helpers/wait.js";
import type { ContractContext } from "../helpers.js";
import { ownerOf } from "../helpers.js";
import { claimOne, put, soniqOn } from "./admin-helpers.js";

const HANDLERS = new URL("../../fixtures/thread-handlers.mjs", import.meta.url);

const beat = {
  status: "running" as const,
  shutdownState: "RUNNING" as const,
  drainElapsedSeconds: null,
  deadlineInSeconds: null,
};

export function adminProgressCases({ make }: ContractContext): void {
  describe("operations: progress", () => {
    it("workerBeat › progress of its claims › written, fenced by the claim token", async () => {
      const b = await make();
      const id = await put(b);
      const j = await claimOne(b, "w1");
      await b.admin.workerBeat({
        workerId: "w1",
        ...beat,
        progress: [{ id, owner: ownerOf(j), fraction: 0.25, message: "a quarter" }],
      });
      expect(await b.admin.jobDetail({ id })).toMatchObject({
        progress: 0.25,
        progressMessage: "a quarter",
      });
      await b.admin.workerBeat({
        workerId: "w1",
        ...beat,
        progress: [
          {
            id,
            owner: { workerId: "w1", claimToken: crypto.randomUUID() },
            fraction: 0.9,
            message: null,
          },
        ],
      });
      expect((await b.admin.jobDetail({ id }))?.progress).toBe(0.25);
    });

    it("ctx.progress › thousands of calls from an async handler › the heartbeat writes the last one", async () => {
      const b = await make();
      let beats = 0;
      const counting = new Proxy(b.admin, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver);
          if (prop === "workerBeat") beats += 1;
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const wrapped = new Proxy(b, {
        get(target, prop, receiver) {
          if (prop === "admin") return counting;
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const soniq = soniqOn(wrapped);
      let release: () => void = () => undefined;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const job = soniq.job({
        name: "p.many",
        handler: async (_args: object, ctx) => {
          for (let i = 1; i <= 10_000; i++) ctx.progress(i / 10_000, `item ${i}`);
          await gate;
          return "ok";
        },
      });
      const id = await job.enqueue({});
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      const seen = await waitFor(
        async () => {
          const detail = await soniq.jobs.get(id);
          return detail && "progress" in detail && detail.progress?.fraction === 1 ? detail : null;
        },
        5000,
        "progress written",
      );
      expect(seen).toMatchObject({ progress: { fraction: 1, message: "item 10000" } });
      // 10,000 calls, and no more writes than heartbeats (each beat is one round trip).
      expect(beats).toBeLessThan(100);
      release();
      await waitFor(async () => (await b.jobGet({ id }))?.status === "done", 5000, "done");
      await worker.stop();
    });

    it("ctx.progress › sync handler on a thread › read by the heartbeat and shown by jobs.get", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const job = soniq.syncJob<{ steps: number }>({
        name: "p.thread",
        handlerModule: HANDLERS,
        exportName: "progressThenWait",
      });
      const id = await job.enqueue({ steps: 4 });
      const worker = soniq.worker({ concurrency: 1 });
      await worker.start();
      const detail = await waitFor(
        async () => {
          const d = await soniq.jobs.get(id);
          return d && "progress" in d && d.progress?.fraction === 1 ? d : null;
        },
        10_000,
        "thread progress written",
      );
      expect(detail).toMatchObject({ progress: { fraction: 1, message: "step 4/4" } });
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
