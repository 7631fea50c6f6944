/**
 * Contract area: jobQueueMetrics (per-queue counts and the oldest claimable job's age). Run on
 * every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { type ContractContext, newJob, ownerOf } from "../helpers.js";

/** The jobQueueMetrics cases. */
export function queueMetricsCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("queue metrics", () => {
    it("jobQueueMetrics › empty store › no queues", async () => {
      expect(await (await make()).jobQueueMetrics()).toEqual([]);
    });

    it("jobQueueMetrics › only a job delayed an hour › counted queued, age 0 (a delayed job is not late)", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: [newJob({ queue: "later", delaySeconds: 3600 })] });
      expect(await b.jobQueueMetrics()).toEqual([
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

    it("jobQueueMetrics › a job due 90 s ago, others delayed, claimed, done, dead-lettered › counts per queue and status, age ≈ 90 s", async () => {
      const b = await make();
      const now = await b.now();
      await b.jobEnqueue({
        jobs: [
          newJob({ queue: "mail", runAt: new Date(now.getTime() - 90_000) }),
          newJob({ queue: "mail", delaySeconds: 3600 }),
          newJob({ queue: "mail", runAt: new Date(now.getTime() - 10_000) }),
          newJob({ queue: "pdf", maxAttempts: 1 }),
          newJob({ queue: "pdf" }),
        ],
      });
      const [claimed, failing] = await b.jobClaim({ workerId: "w", queues: ["pdf"], limit: 2 });
      if (!claimed || !failing) throw new Error("expected two claims");
      await b.jobComplete({
        id: claimed.id,
        owner: ownerOf(claimed),
        result: null,
        resultRetentionSeconds: 60,
      });
      await b.jobDeadLetter({
        id: failing.id,
        owner: ownerOf(failing),
        error: "no",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      const metrics = await b.jobQueueMetrics();
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
