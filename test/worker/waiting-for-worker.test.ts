// Nothing waits unseen (issue 25 item 3), on every backend: a due job that no live worker can run
// (a name no live worker knows, a version newer than any live worker's, a queue no live worker
// serves) shows up in `soniq.jobs.waitingForWorker()`, the leader's `jobs_waiting_for_worker`
// event and the `soniq_jobs_waiting_for_worker` gauges within one maintenance interval, and is
// never touched by a worker that cannot run it; a live worker of an earlier release (no recorded
// job names) is taken as able to run anything; a queue's `unclaimableAfter` (off by default)
// moves such jobs to the dead-letter queue with reason `no_capable_worker`, not before.
import { pino } from "pino";
import { expect, it } from "vitest";
import type { Backend } from "../../src/backends/contract/index.js";
import { Soniq } from "../../src/index.js";
import type { JobsWaitingForWorkerEvent } from "../../src/observability/events.js";
import { prometheusMetrics } from "../../src/observability/prometheus/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });

/** An instance on `backend` with fast polling and a 0.1 s maintenance interval. */
function instanceOn(backend: Backend, queues?: string[]): Soniq {
  return new Soniq({
    backend,
    logger: silent,
    env: {},
    pollInterval: 0.05,
    heartbeatInterval: 0.1,
    ...(queues ? { queues } : {}),
  });
}

describeEachBackend("waiting for a worker that can run it", (target) => {
  it("unknown name › reported by the API, the event and the gauge within an interval; never touched; off by default", async () => {
    const backend = await target.open();
    const running = instanceOn(backend);
    running.job({ name: "mail.send", handler: async () => undefined });
    const producer = instanceOn(backend);
    producer.job({ name: "pdf.render", handler: async () => undefined });
    const events: JobsWaitingForWorkerEvent[] = [];
    running.events.on("jobs_waiting_for_worker", (e) => {
      events.push(e);
    });
    const metrics = prometheusMetrics(running);
    const worker = running.worker();
    await worker.start();
    const id = await producer.enqueue("pdf.render", {});
    const event = await waitFor(
      () => events.find((e) => e.waiting.some((w) => w.job_name === "pdf.render")),
      10_000,
      "a jobs_waiting_for_worker event",
    );
    expect(event.waiting).toEqual([
      {
        queue: "default",
        job_name: "pdf.render",
        count: 1,
        oldest_age_ms: expect.any(Number),
        reason: "unknown_name",
      },
    ]);
    expect(await producer.jobs.waitingForWorker()).toEqual([
      {
        queue: "default",
        name: "pdf.render",
        count: 1,
        oldestAgeSeconds: expect.any(Number),
        reason: "unknown_name",
        versions: [1],
      },
    ]);
    const scrape = await metrics.scrape();
    expect(scrape).toContain('soniq_jobs_waiting_for_worker{queue="default",name="pdf.render"} 1');
    expect(scrape).toMatch(
      /soniq_jobs_waiting_for_worker_oldest_age_seconds\{queue="default",name="pdf.render"\} [\d.]+/,
    );
    // Several more checks: the job stays queued, untouched, and (no unclaimableAfter) not moved.
    const seen = events.length;
    await waitFor(() => events.length >= seen + 5, 10_000, "five more checks");
    expect(await producer.getJob(id)).toMatchObject({
      status: "queued",
      attempts: 0,
      workerId: null,
      startedAt: null,
    });
    expect((await producer.deadLetters.list()).deadLetters).toEqual([]);
    // A worker that knows the name runs it; the next report is empty and the gauge goes.
    const capable = producer.worker();
    await capable.start();
    await waitFor(async () => (await producer.getJob(id))?.status === "done");
    await waitFor(() => events.at(-1)?.waiting.length === 0, 10_000, "an empty report");
    expect(await metrics.scrape()).not.toContain("pdf.render");
    metrics.close();
    await capable.stop();
    await worker.stop();
  });

  it("version too new, and a queue no live worker serves › each with its reason", async () => {
    const backend = await target.open();
    const running = instanceOn(backend, ["default"]);
    running.job({ name: "mail.send", handler: async () => undefined });
    const producer = instanceOn(backend);
    producer.job({ name: "mail.send", version: 2, handler: async () => undefined });
    producer.job({ name: "report.build", queue: "reports", handler: async () => undefined });
    const worker = running.worker();
    await worker.start();
    const newer = await producer.enqueue("mail.send", {});
    await producer.enqueue("report.build", {});
    await producer.enqueue("report.build", {});
    expect(await producer.jobs.waitingForWorker()).toEqual([
      expect.objectContaining({
        queue: "default",
        name: "mail.send",
        count: 1,
        reason: "version_too_new",
        versions: [2],
      }),
      expect.objectContaining({
        queue: "reports",
        name: "report.build",
        count: 2,
        reason: "no_worker_for_queue",
      }),
    ]);
    await new Promise((r) => setTimeout(r, 300)); // a few claim polls
    expect(await producer.getJob(newer)).toMatchObject({ status: "queued", attempts: 0 });
    await worker.stop();
    // With no live worker at all, every waiting job reads no_worker_for_queue.
    expect((await producer.jobs.waitingForWorker()).map((w) => w.reason)).toEqual([
      "no_worker_for_queue",
      "no_worker_for_queue",
    ]);
  });

  it("a live worker of an earlier release (no recorded job names) › taken as able to run anything", async () => {
    const backend = await target.open();
    const producer = instanceOn(backend);
    producer.job({ name: "pdf.render", version: 4, handler: async () => undefined });
    await producer.enqueue("pdf.render", {});
    await backend.workerRegister({
      id: "old-release-worker",
      hostname: "h",
      pid: 1,
      queues: null,
      concurrency: 1,
    });
    expect(await producer.jobs.waitingForWorker()).toEqual([]);
    await backend.workerMarkStopped({ workerId: "old-release-worker" });
    expect(await producer.jobs.waitingForWorker()).toEqual([
      expect.objectContaining({ name: "pdf.render", reason: "no_worker_for_queue" }),
    ]);
  });

  it("a definition added after the worker started › recorded on its row at its next claim", async () => {
    const backend = await target.open();
    const running = instanceOn(backend);
    running.job({ name: "mail.send", handler: async () => undefined });
    const worker = running.worker();
    await worker.start();
    running.job({ name: "pdf.render", version: 3, handler: async () => undefined });
    const row = await waitFor(async () => {
      const [mine] = await backend.admin.workerCapabilities({ defaultHeartbeatTimeoutSeconds: 30 });
      return mine?.jobVersions?.["pdf.render"] === 3 ? mine : null;
    });
    expect(row.jobVersions).toEqual({ "mail.send": 1, "pdf.render": 3 });
    await worker.stop();
  });

  it("unclaimableAfter › dead-letters with no_capable_worker after that long, not before", async () => {
    const backend = await target.open();
    const running = instanceOn(backend);
    running.job({ name: "mail.send", handler: async () => undefined });
    const producer = instanceOn(backend);
    producer.job({ name: "pdf.render", handler: async () => undefined });
    const info = await producer.queues.set("default", { unclaimableAfter: 2 }, { create: true });
    expect(info.unclaimableAfter).toBe(2);
    const worker = running.worker();
    await worker.start();
    const enqueuedAt = Date.now();
    const id = await producer.enqueue("pdf.render", {});
    await waitFor(async () => (await producer.jobs.waitingForWorker()).length === 1);
    // Seen as waiting, and still queued before its 2 s.
    if (Date.now() - enqueuedAt < 1500) {
      expect(await producer.getJob(id)).toMatchObject({ status: "queued" });
    }
    const dead = await waitFor(
      async () => (await producer.deadLetters.list()).deadLetters[0],
      15_000,
      "the dead letter",
    );
    expect(Date.now() - enqueuedAt).toBeGreaterThanOrEqual(2000);
    expect(dead).toMatchObject({ id, reason: "no_capable_worker", attempts: 0 });
    expect(await producer.getJob(id)).toBeNull();
    expect(await producer.jobs.waitingForWorker()).toEqual([]);
    // Turned off again: null.
    expect(
      (await producer.queues.set("default", { unclaimableAfter: null })).unclaimableAfter,
    ).toBe(null);
    await worker.stop();
  });
});
