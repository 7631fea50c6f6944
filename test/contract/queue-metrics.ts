/**
 * Contract cases of `Backend.queueMetrics` (per-queue counts and the oldest claimable job's age),
 * run on every backend from backend-contract.ts.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Backend } from "../../src/backends/backend.js";
import type { ContractTarget } from "./backend-contract.js";
import { newJob } from "./backend-contract.js";

export function runQueueMetricsContract(target: ContractTarget): void {
  describe(`queue metrics: ${target.label}`, () => {
    const opened: Backend[] = [];
    const make = async () => {
      const backend = await target.make();
      opened.push(backend);
      return backend;
    };
    afterAll(async () => {
      for (const backend of opened) await backend.close().catch(() => undefined);
    });

    it("queueMetrics › empty store › no queues", async () => {
      expect(await (await make()).queueMetrics()).toEqual([]);
    });

    it("queueMetrics › only a job delayed an hour › counted queued, age 0 (a delayed job is not late)", async () => {
      const b = await make();
      await b.enqueue([newJob({ queue: "later", delaySeconds: 3600 })]);
      expect(await b.queueMetrics()).toEqual([
        {
          queue: "later",
          queued: 1,
          processing: 0,
          done: 0,
          cancelled: 0,
          deadLetter: 0,
          oldestClaimableAgeSeconds: 0,
        },
      ]);
    });

    it("queueMetrics › a job due 90 s ago, others delayed, claimed, done, dead-lettered › counts per queue and status, age ≈ 90 s", async () => {
      const b = await make();
      const now = await b.now();
      await b.enqueue([
        newJob({ queue: "mail", runAt: new Date(now.getTime() - 90_000) }),
        newJob({ queue: "mail", delaySeconds: 3600 }),
        newJob({ queue: "mail", runAt: new Date(now.getTime() - 10_000) }),
        newJob({ queue: "pdf", maxAttempts: 1 }),
        newJob({ queue: "pdf" }),
      ]);
      const [claimed, failing] = await b.claim({ workerId: "w", queues: ["pdf"], limit: 2 });
      if (!claimed || !failing) throw new Error("expected two claims");
      await b.complete(claimed.id, claimed, null, 60);
      await b.deadLetter(failing.id, failing, "no", "max_attempts_exceeded", true);
      const metrics = await b.queueMetrics();
      expect(metrics.map((m) => m.queue)).toEqual(["mail", "pdf"]);
      const [mail, pdf] = metrics;
      expect(mail).toMatchObject({ queued: 3, processing: 0, done: 0, deadLetter: 0 });
      expect(mail?.oldestClaimableAgeSeconds).toBeGreaterThanOrEqual(89);
      expect(mail?.oldestClaimableAgeSeconds).toBeLessThan(100);
      expect(pdf).toEqual({
        queue: "pdf",
        queued: 0,
        processing: 0,
        done: 1,
        cancelled: 0,
        deadLetter: 1,
        oldestClaimableAgeSeconds: 0,
      });
    });
  });
}
