/**
 * The twelve cases of the remote shutdown contract (docs/remote-jobs.md, "Verifying it"), on the
 * real worker, on each engine of test-backends.ts SUITE_KINDS (a SQLite file and PostgreSQL), against the local test provider (a real
 * HTTP server).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertTransition } from "../../src/backends/contract/phases.js";
import { accepted, isSoniqError, pending } from "../../src/index.js";
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

describeEachBackend("remote shutdown contract", (target) => {
  const setup = async (options: Parameters<typeof remoteInstance>[2] = {}) => {
    const backend = await target.open();
    return { backend, ...remoteInstance(backend, provider, options) };
  };
  const posts = (jobId: string) =>
    [...provider.postsByKey].filter(([k]) => k.startsWith(jobId)).reduce((n, [, c]) => n + c, 0);

  it("1 claim › worker accepting › claimed, submitted once, handed to polling, done", async () => {
    const { soniq, job } = await setup();
    const id = await job.enqueue({ behaviour: { polls: 1 } });
    const worker = soniq.worker();
    await worker.start();
    const row = await waitFor(async () => {
      const j = await soniq.getJob(id);
      return j?.status === "done" ? j : null;
    });
    await worker.stop();
    expect(row.attempts).toBe(1);
    expect(posts(id)).toBe(1);
    expect(await soniq.remote.show(id)).toMatchObject({ phase: "finished", generation: 1 });
  });

  it("2 duplicate in-flight claim › job held by a worker › a second claim gets nothing, a stranger's mark is fenced", async () => {
    const { soniq, job, backend } = await setup();
    const id = await job.enqueue({ behaviour: { delayMs: 400 } });
    const worker = soniq.worker();
    const submitting = waitForEvent(soniq, "remote_phase", (e) => e.phase === "submitting");
    await worker.start();
    await submitting;
    expect(await backend.jobClaim({ workerId: "other", queues: null, limit: 5 })).toEqual([]);
    const stranger = { workerId: "other", claimToken: "00000000-0000-4000-8000-000000000000" };
    expect(
      await backend.submissions.submissionMarkSubmitting({
        jobId: id,
        owner: stranger,
        name: job.name,
        queue: job.queue,
      }),
    ).toEqual({ kind: "fenced" });
    await waitForEvent(soniq, "remote_phase", (e) => e.phase === "accepted");
    await worker.stop();
    expect(posts(id)).toBe(1);
  });

  it("3 drain › draining › no new claims (a job enqueued during the drain stays queued, no POST)", async () => {
    const { soniq, job } = await setup();
    await job.enqueue({ behaviour: { delayMs: 300 } });
    const worker = soniq.worker({ shutdownTimeout: 5 });
    const submitting = waitForEvent(soniq, "remote_phase", (e) => e.phase === "submitting");
    await worker.start();
    await submitting;
    const stopped = worker.stop("SIGTERM");
    const late = await job.enqueue({});
    const exit = await stopped;
    expect(exit.exitCode).toBe(0);
    expect((await soniq.getJob(late))?.status).toBe("queued");
    expect(posts(late)).toBe(0);
  });

  it("4 second signal › during the drain › keeps the first deadline", async () => {
    const { soniq, job } = await setup();
    await job.enqueue({ behaviour: { delayMs: 3000 } });
    const worker = soniq.worker({ shutdownTimeout: 0.6 });
    const submitting = waitForEvent(soniq, "remote_phase", (e) => e.phase === "submitting");
    await worker.start();
    await submitting;
    const drain = waitForEvent(soniq, "drain_started");
    const forced = waitForEvent(soniq, "force_timeout_path");
    void worker.stop("SIGTERM");
    const started = await drain;
    await new Promise((r) => setTimeout(r, 300));
    void worker.stop("SIGINT");
    await forced;
    const forcedAt = Date.now();
    const exit = await worker.finished;
    expect(forcedAt).toBeLessThan(Date.parse(started.deadline_at) + 250);
    expect(exit.reason).toBe("shutdown_timeout");
  });

  it("5 exit › every submission answered before the deadline › exit 0, accepted job handed to polling", async () => {
    const { soniq, job } = await setup();
    const id = await job.enqueue({ behaviour: { polls: 1000 } });
    const worker = soniq.worker({ shutdownTimeout: 5 });
    const acc = waitForEvent(soniq, "remote_phase", (e) => e.phase === "accepted");
    await worker.start();
    await acc;
    const exit = await worker.stop();
    expect(exit).toMatchObject({ reason: "drained", exitCode: 0 });
    expect(await soniq.remote.show(id)).toMatchObject({
      phase: "accepted",
      workerId: null,
      jobStatus: "processing",
    });
  });

  it("6 wait › submission unresolved before the deadline › the drain waits for its answer", async () => {
    const { soniq, job } = await setup();
    const id = await job.enqueue({ behaviour: { delayMs: 400, polls: 1000 } });
    const worker = soniq.worker({ shutdownTimeout: 5 });
    const submitting = waitForEvent(soniq, "remote_phase", (e) => e.phase === "submitting");
    await worker.start();
    await submitting;
    const stopped = worker.stop();
    expect((await soniq.remote.show(id)).phase).toBe("submitting");
    expect(worker.state).toBe("DRAINING");
    const exit = await stopped;
    expect(exit.exitCode).toBe(0);
    expect((await soniq.remote.show(id)).phase).toBe("accepted");
    expect(posts(id)).toBe(1);
  });

  it("7 release › claimed, not yet submitting, at the deadline › queued, attempts kept, no POST", async () => {
    const { soniq, job } = await setup();
    const id = await job.enqueue({ preflightMs: 5000 });
    const worker = soniq.worker({ shutdownTimeout: 0.3 });
    await worker.start();
    await waitFor(async () => (await soniq.getJob(id))?.status === "processing");
    const handoff = waitForEvent(soniq, "remote_handoff");
    const exit = await worker.stop();
    expect(await handoff).toMatchObject({
      job_id: id,
      phase: "claimed",
      handoff_action: "release",
    });
    expect(exit.exitCode).toBe(1);
    expect(exit.released).toContain(id);
    expect(await soniq.getJob(id)).toMatchObject({
      status: "queued",
      attempts: 0,
      workerId: null,
    });
    expect(posts(id)).toBe(0);
  });

  it("8 freeze › POST awaiting its answer at the deadline › frozen, never resubmitted; reconcile finds it by key", async () => {
    const { soniq, job, backend } = await setup();
    const id = await job.enqueue({ behaviour: { delayMs: 3000, polls: 0 } });
    const worker = soniq.worker({ shutdownTimeout: 0.3 });
    const submitting = waitForEvent(soniq, "remote_phase", (e) => e.phase === "submitting");
    await worker.start();
    await submitting;
    const exit = await worker.stop();
    expect(exit.exitCode).toBe(1);
    expect(await soniq.remote.show(id)).toMatchObject({
      phase: "frozen",
      frozenReason: "deadline",
      workerId: null,
      attempts: 0,
    });
    expect((await soniq.remote.counts()).frozen).toBe(1);
    // A successor without reconcile never claims it.
    const plain = remoteInstance(backend, provider);
    const w2 = plain.soniq.worker();
    await w2.start();
    await w2.stop();
    expect((await soniq.remote.show(id)).phase).toBe("frozen");
    // One with reconcile resolves it by idempotency key: accepted, polled, done; still one POST.
    await waitFor(() => provider.postsByKey.get(`${id}:1`) === 1);
    const rec = remoteInstance(backend, provider, { reconcile: true });
    const w3 = rec.soniq.worker();
    await w3.start();
    await waitFor(async () => (await rec.soniq.getJob(id))?.status === "done");
    await w3.stop();
    expect(posts(id)).toBe(1);
  });

  it("9 hand-off › a poll in flight at the deadline › handed to polling by its durable task id; a successor finishes it", async () => {
    const { soniq, job, backend } = await setup();
    const id = await job.enqueue({ behaviour: { polls: 0, pollDelayMs: 3000 } });
    const worker = soniq.worker({ shutdownTimeout: 0.4 });
    const acc = waitForEvent(soniq, "remote_phase", (e) => e.phase === "accepted");
    await worker.start();
    const { task_id } = await acc;
    await waitFor(() => (provider.getsByTask.get(task_id as string) ?? 0) >= 1);
    const handoff = waitForEvent(soniq, "remote_handoff");
    await worker.stop();
    expect(await handoff).toMatchObject({
      job_id: id,
      phase: "accepted",
      handoff_action: "handoff",
      task_id,
    });
    expect(await soniq.remote.show(id)).toMatchObject({
      phase: "accepted",
      taskId: task_id,
      workerId: null,
    });
    provider.tasks.get(task_id as string)!.pollDelayMs = 0;
    const next = remoteInstance(backend, provider);
    const w2 = next.soniq.worker();
    await w2.start();
    await waitFor(async () => (await next.soniq.getJob(id))?.status === "done");
    await w2.stop();
    expect(posts(id)).toBe(1);
  });

  it("10 accepted without a task id › rejected (INVALID_RESULT) and the submission frozen, not recorded as accepted", async () => {
    expect(() => accepted("")).toThrow(expect.objectContaining({ code: "INVALID_RESULT" }));
    expect(() => accepted("x".repeat(257))).toThrow(
      expect.objectContaining({ code: "INVALID_RESULT" }),
    );
    const { soniq, job } = await setup();
    const id = await job.enqueue({ raw: { kind: "accepted", taskId: "" } });
    const worker = soniq.worker();
    const frozen = waitForEvent(soniq, "remote_phase", (e) => e.phase === "frozen");
    await worker.start();
    await frozen;
    await worker.stop();
    expect(await soniq.remote.show(id)).toMatchObject({
      phase: "frozen",
      frozenReason: "invalid_result",
      taskId: null,
    });
  });

  it("11 signals › SIGTERM, SIGINT, SIGTERM › one drain started, every stop resolves the same exit", async () => {
    const { soniq, job } = await setup();
    await job.enqueue({ behaviour: { delayMs: 200 } });
    const worker = soniq.worker({ shutdownTimeout: 5 });
    let drains = 0;
    soniq.events.on("drain_started", () => {
      drains += 1;
    });
    const submitting = waitForEvent(soniq, "remote_phase", (e) => e.phase === "submitting");
    await worker.start();
    await submitting;
    const exits = await Promise.all([
      worker.stop("SIGTERM"),
      worker.stop("SIGINT"),
      worker.stop("SIGTERM"),
    ]);
    expect(drains).toBe(1);
    expect(new Set(exits.map((e) => e.exitCode))).toEqual(new Set([0]));
  });

  it("12 invalid grace and illegal phase transitions › rejected with codes, nothing written", async () => {
    const { soniq, job, backend } = await setup();
    expect(() => soniq.worker({ shutdownTimeout: -1 })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
    expect(() => soniq.worker({ shutdownSettle: Number.NaN })).toThrow(
      expect.objectContaining({ code: "INVALID_OPTION" }),
    );
    expect(() => assertTransition("accepted", "submitting")).toThrow(
      expect.objectContaining({ code: "ILLEGAL_PHASE" }),
    );
    expect(() => assertTransition("none", "accepted")).toThrow(
      expect.objectContaining({ code: "ILLEGAL_PHASE" }),
    );
    expect(() => pending({ every: -1 })).toThrow(
      expect.objectContaining({ code: "INVALID_RESULT" }),
    );
    const id = await job.enqueue({ behaviour: { polls: 1000 } });
    const worker = soniq.worker();
    const acc = waitForEvent(soniq, "remote_phase", (e) => e.phase === "accepted");
    await worker.start();
    await acc;
    await worker.stop();
    // accepted → frozen is not a transition: the store refuses, nothing changes.
    const [held] = await backend.submissions.pollClaimDue({
      workerId: "w",
      names: [job.name],
      reconcilable: [],
      limit: 1,
    });
    const owner = { workerId: "w", claimToken: held?.job.claimToken as string };
    expect(await backend.submissions.submissionFreeze({ jobId: id, owner, reason: "x" })).toBe(
      false,
    );
    expect((await soniq.remote.show(id)).phase).toBe("accepted");
    await expect(soniq.remote.resolve(id, accepted("t"))).rejects.toMatchObject({
      code: "INVALID_STATE",
    });
    expect(
      isSoniqError(
        await soniq.remote.show("00000000-0000-4000-8000-000000000000").catch((e) => e),
        "NOT_FOUND",
      ),
    ).toBe(true);
  });
});
