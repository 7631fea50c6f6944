/**
 * Remote jobs through the real worker beyond the twelve contract cases (seed-contract.test.ts):
 * callbacks (before the task id is written, by job id), definite errors kept, retries with a new
 * key, admission and the circuit breaker delaying without spending attempts, crash recovery by
 * phase, pollTimeout — on each engine of test-backends.ts SUITE_KINDS (a SQLite file and PostgreSQL), against the local test provider.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { accepted } from "../../src/index.js";
import { describeEachBackend } from "../helpers/backend-targets.js";
import { waitForEvent } from "../helpers/events.js";
import { type RemoteProvider, startRemoteProvider } from "../helpers/remote-provider.js";
import { waitFor } from "../helpers/wait.js";
import { remoteInstance } from "./harness.js";

let provider: RemoteProvider;
beforeAll(async () => {
  provider = await startRemoteProvider();
});
afterAll(async () => {
  await provider.close();
});

/** The failed attempts and dead-letter moves the counters hold for the remote queue (24 h). */
async function counted(soniq: ReturnType<typeof remoteInstance>["soniq"]) {
  const h = await soniq.queues.history({ queue: "generation" });
  return {
    failed: h.points.reduce((n, p) => n + p.failed, 0),
    dead: h.points.reduce((n, p) => n + p.dead, 0),
  };
}

describeEachBackend("remote jobs on the worker", (target) => {
  const setup = async (options: Parameters<typeof remoteInstance>[2] = {}) => {
    const backend = await target.open();
    return { backend, ...remoteInstance(backend, provider, options) };
  };
  const done = async (soniq: ReturnType<typeof remoteInstance>["soniq"], id: string) =>
    waitFor(async () => {
      const j = await soniq.getJob(id);
      return j?.status === "done" ? j : null;
    });

  it("callback › arrives by task id before accepted is written › the job completes exactly once, never polled", async () => {
    const { soniq, job } = await setup();
    const answers: string[] = [];
    const hook = createServer((req, res) => {
      let text = "";
      req.on("data", (c) => {
        text += c;
      });
      req.on("end", async () => {
        const { task_id } = JSON.parse(text) as { task_id: string };
        answers.push(
          await soniq.remote.complete({ taskId: task_id, job: job.name }, { via: "callback" }),
        );
        answers.push(
          await soniq.remote.complete({ taskId: task_id, job: job.name }, { via: "again" }),
        );
        res.end("ok");
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    const callback = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`;
    let doneEvents = 0;
    soniq.events.on("job_done", () => {
      doneEvents += 1;
    });
    const id = await job.enqueue({ behaviour: { callback, polls: 1000 } });
    const worker = soniq.worker();
    await worker.start();
    const row = await done(soniq, id);
    await worker.stop();
    hook.close();
    expect(answers[0]).toBe("early");
    expect(row.result).toEqual({ via: "callback" });
    expect(doneEvents).toBe(1);
    const taskId = (await soniq.remote.show(id)).taskId as string;
    expect(provider.getsByTask.get(taskId) ?? 0).toBe(0);
  });

  it("callback › by job id while awaiting › applied once; a second answer › already_finished", async () => {
    const { soniq, job } = await setup();
    const id = await job.enqueue({ behaviour: { polls: 1000 } });
    const worker = soniq.worker();
    const acc = waitForEvent(soniq, "remote_phase", (e) => e.phase === "accepted");
    await worker.start();
    await acc;
    expect(await soniq.remote.fail({ jobId: id }, "provider says no")).toBe("stored");
    expect(await soniq.remote.complete({ jobId: id }, 1)).toBe("already_finished");
    await waitFor(async () => (await soniq.getDeadLetter(id)) !== null);
    await worker.stop();
    expect(await soniq.getDeadLetter(id)).toMatchObject({
      reason: "remote_failed",
      lastError: "provider says no",
    });
    expect(await soniq.remote.complete({ jobId: id }, 1)).toBe("already_finished");
  });

  it("definite error › provider answers 400 › kept as the job's error, dead-lettered remote_failed, one POST", async () => {
    const { soniq, job } = await setup();
    const id = await job.enqueue({ behaviour: { status: 400 } });
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await worker.stop();
    expect(dead).toMatchObject({
      reason: "remote_failed",
      lastError: "synthetic 400",
      attempts: 1,
    });
    expect(provider.postsByKey.get(`${id}:1`)).toBe(1);
    expect(await counted(soniq)).toEqual({ failed: 0, dead: 1 });
  });

  it("retryable failure › 503 › retried with a new idempotency key after the retry delay", async () => {
    const { soniq, job } = await setup();

    const id = await job.enqueue({ behaviour: { status: 503 } });
    const worker = soniq.worker();
    await worker.start();
    await waitFor(() => provider.postsByKey.get(`${id}:2`) === 1, 10_000, "second generation POST");
    await worker.stop();
    expect(provider.postsByKey.get(`${id}:1`)).toBe(1);
    const row = await soniq.getJob(id);
    expect(row?.lastError).toBe("synthetic 503");
    // Each failed attempt was counted once: as `failed` while retried, as `dead` if it was the last.
    const { failed, dead } = await counted(soniq);
    expect(failed).toBeGreaterThanOrEqual(1);
    expect(failed + dead).toBe(row?.attempts);
  });

  it("crash recovery › a dead worker's submission › frozen (crash), reconcile finds nothing › resubmitted with the same key", async () => {
    const { soniq, job, backend } = await setup({ reconcile: true });
    const id = await job.enqueue({ behaviour: { polls: 0 } });
    const [claimed] = await backend.jobClaim({ workerId: "dead", queues: null, limit: 1 });
    const owner = { workerId: "dead", claimToken: claimed?.claimToken as string };
    await backend.submissions.submissionMarkSubmitting({
      jobId: id,
      owner,
      name: job.name,
      queue: job.queue,
    });
    const handoff = waitForEvent(soniq, "remote_handoff", (e) => e.reason === "crash");
    const worker = soniq.worker();
    await worker.start();
    expect(await handoff).toMatchObject({
      job_id: id,
      phase: "submitting",
      handoff_action: "freeze",
      worker_id: null,
    });
    await done(soniq, id);
    await worker.stop();
    expect(provider.postsByKey.get(`${id}:1`)).toBe(1);
    expect([...provider.postsByKey.keys()].filter((k) => k.startsWith(id))).toEqual([`${id}:1`]);
  });

  it("crash recovery › a dead worker's poll › handed to polling, due now, finished by the next worker", async () => {
    const { soniq, job, backend } = await setup();
    const id = await job.enqueue({ behaviour: { polls: 0 } });
    const [claimed] = await backend.jobClaim({ workerId: "dead", queues: null, limit: 1 });
    const owner = { workerId: "dead", claimToken: claimed?.claimToken as string };
    await backend.submissions.submissionMarkSubmitting({
      jobId: id,
      owner,
      name: job.name,
      queue: job.queue,
    });
    const res = await fetch(`${provider.url}/tasks`, {
      method: "POST",
      headers: { "idempotency-key": `${id}:1` },
      body: "{}",
    });
    const { task_id } = (await res.json()) as { task_id: string };
    await backend.submissions.submissionAccept({
      jobId: id,
      owner,
      taskId: task_id,
      pollDelaySeconds: 0,
    });
    await backend.submissions.pollClaimDue({
      workerId: "dead",
      names: [job.name],
      reconcilable: [],
      limit: 1,
    });
    const worker = soniq.worker();
    await worker.start();
    await done(soniq, id);
    await worker.stop();
    expect(provider.postsByKey.get(`${id}:1`)).toBe(1);
  });

  it("admission › maxConcurrent 1 › never two in submitting; the waiting one spends no attempt", async () => {
    const backend = await target.open();
    const { soniq, job } = remoteInstance(backend, provider, { admission: { maxConcurrent: 1 } });
    let submitting = 0;
    let most = 0;
    soniq.events.on("remote_phase", (e) => {
      if (e.phase === "submitting") submitting += 1;
      else if (e.phase === "accepted" || e.phase === "frozen") submitting -= 1;
      most = Math.max(most, submitting);
    });
    const ids = await Promise.all(
      [1, 2, 3].map(() => job.enqueue({ behaviour: { delayMs: 150 } })),
    );
    const worker = soniq.worker({ concurrency: 3 });
    await worker.start();
    for (const id of ids) await done(soniq, id);
    await worker.stop();
    expect(most).toBe(1);
    for (const id of ids) expect((await soniq.getJob(id))?.attempts).toBe(1);
  });

  it("circuit breaker › open after a provider failure › new submissions delayed (no attempt), polls go on", async () => {
    const backend = await target.open();
    const { soniq, job } = remoteInstance(backend, provider, {
      circuitBreaker: { failureThreshold: 1, windowSeconds: 60, cooldownSeconds: 3600 },
    });
    const polled = await job.enqueue({ behaviour: { polls: 3 } });
    const worker = soniq.worker();
    const acc = waitForEvent(soniq, "remote_phase", (e) => e.phase === "accepted");
    await worker.start();
    await acc;
    const failing = await job.enqueue({ behaviour: { status: 503 } });
    await waitFor(() => provider.postsByKey.get(`${failing}:1`) === 1);
    const blocked = await job.enqueue({ behaviour: {} });
    await done(soniq, polled);
    await waitFor(
      async () =>
        (await soniq.getJob(blocked))?.status === "queued" &&
        ((await soniq.getJob(blocked))?.scheduledAt.getTime() ?? 0) > Date.now() + 60_000,
    );
    await worker.stop();
    expect(provider.postsByKey.get(`${blocked}:1`)).toBeUndefined();
    expect((await soniq.getJob(blocked))?.attempts).toBe(0);
  });

  it("operator › resolves a frozen job › remote_phase emitted; the next worker polls it by the given task id", async () => {
    const { soniq, job, backend } = await setup();
    const id = await job.enqueue({ behaviour: { polls: 0 } });
    const [claimed] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
    const owner = { workerId: "w", claimToken: claimed?.claimToken as string };
    await backend.submissions.submissionMarkSubmitting({
      jobId: id,
      owner,
      name: job.name,
      queue: job.queue,
    });
    await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "deadline" });
    const res = await fetch(`${provider.url}/tasks`, {
      method: "POST",
      headers: { "idempotency-key": `${id}:1` },
      body: "{}",
    });
    const { task_id } = (await res.json()) as { task_id: string };
    const phase = waitForEvent(soniq, "remote_phase", (e) => e.job_id === id);
    await soniq.remote.resolve(id, accepted(task_id));
    expect(await phase).toMatchObject({ phase: "accepted", task_id, worker_id: null });
    const worker = soniq.worker();
    await worker.start();
    await done(soniq, id);
    await worker.stop();
    expect(provider.postsByKey.get(`${id}:1`)).toBe(1);
  });

  it("pollTimeout › not terminal in time › dead-lettered remote_timeout", async () => {
    const backend = await target.open();
    const { soniq, job } = remoteInstance(backend, provider, { pollTimeout: 0.3 });
    const id = await job.enqueue({ behaviour: { polls: 100_000 } });
    const worker = soniq.worker();
    await worker.start();
    const dead = await waitFor(() => soniq.getDeadLetter(id));
    await worker.stop();
    expect(dead.reason).toBe("remote_timeout");
  });
});
