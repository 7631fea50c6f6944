/**
 * Remote jobs reported apart from plain `processing` (issue 26 item 5): `soniq.stats()` and
 * `soniq.jobs.countByQueueStatus()` and the leader's `soniq_queue_jobs` on the memory backend, with one job frozen, one accepted and
 * one ordinary job claimed.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { waitForEvent } from "../helpers/events.js";
import { memoryBackend } from "../helpers/test-backends.js";

describe("remote split", () => {
  it("stats and countByQueueStatus › one frozen, one accepted, one plain claimed job › processing 1, each remote phase counted apart", async () => {
    const backend = await memoryBackend();
    const soniq = new Soniq({
      backend,
      logger: pino({ level: "silent" }),
      env: {},
      rejectUnknownJobs: false,
      metricsInterval: 1,
      pollInterval: 0.05,
    });
    await backend.workerRegister({ id: "w", hostname: "h", pid: 1, queues: null, concurrency: 3 });
    const frozen = await soniq.enqueue("remote.a", {}, { queue: "media" });
    const accepted = await soniq.enqueue("remote.b", {}, { queue: "media" });
    await soniq.enqueue("plain.c", {}, { queue: "media" });
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 3 });
    expect(claimed).toHaveLength(3);
    for (const job of claimed.filter((j) => j.id === frozen || j.id === accepted)) {
      const owner = { workerId: "w", claimToken: job.claimToken };
      await backend.submissions.submissionMarkSubmitting({
        jobId: job.id,
        owner,
        name: job.name,
        queue: "media",
      });
      if (job.id === frozen) {
        await backend.submissions.submissionFreeze({ jobId: job.id, owner, reason: "deadline" });
      } else {
        await backend.submissions.submissionAccept({
          jobId: job.id,
          owner,
          taskId: "t-1",
          pollDelaySeconds: 60,
        });
      }
    }
    expect(await soniq.stats()).toMatchObject({
      total: 3,
      processing: 1,
      remoteSubmitting: 0,
      remoteAccepted: 1,
      remoteFrozen: 1,
    });
    const cells = await soniq.jobs.countByQueueStatus();
    expect(cells.filter((c) => c.queue === "media")).toEqual(
      expect.arrayContaining([
        { queue: "media", status: "processing", count: 1 },
        { queue: "media", status: "remote_accepted", count: 1 },
        { queue: "media", status: "remote_frozen", count: 1 },
      ]),
    );
    expect(cells.filter((c) => c.queue === "media")).toHaveLength(3);

    // The leader's queue gauges split them the same way.
    const metrics = prometheusMetrics(soniq);
    soniq.job({ name: "idle.job", queue: "elsewhere", handler: async () => undefined });
    const sampled = waitForEvent(soniq, "queue_metrics", undefined, 5000);
    const worker = soniq.worker();
    await worker.start();
    const sample = (await sampled).queues.find((q) => q.queue === "media");
    expect(sample).toMatchObject({
      processing: 1,
      remote_submitting: 0,
      remote_accepted: 1,
      remote_frozen: 1,
    });
    const text = await metrics.scrape();
    expect(text).toContain('soniq_queue_jobs{queue="media",status="processing"} 1');
    expect(text).toContain('soniq_queue_jobs{queue="media",status="remote_accepted"} 1');
    expect(text).toContain('soniq_queue_jobs{queue="media",status="remote_frozen"} 1');
    await worker.stop();
    await soniq.close();
  });
});
