/**
 * Remote jobs reported apart from plain `processing` (issue 26 item 5): `soniq.stats()` and
 * `soniq.jobs.countByQueueStatus()` on the memory backend, with one job frozen, one accepted and
 * one ordinary job claimed.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import { memoryBackend } from "../helpers/test-backends.js";

describe("remote split", () => {
  it("stats and countByQueueStatus › one frozen, one accepted, one plain claimed job › processing 1, each remote phase counted apart", async () => {
    const backend = await memoryBackend();
    const soniq = new Soniq({
      backend,
      logger: pino({ level: "silent" }),
      env: {},
      rejectUnknownJobs: false,
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
    await soniq.close();
  });
});
