/**
 * The submission store's contract suite (remote jobs, docs/remote-jobs.md): the same cases on
 * memory, a SQLite file and PostgreSQL, next to the backend contract (see
 * memory/sqlite/postgres.test.ts).
 */
import { describe, expect, it } from "vitest";
import type { Backend, NewJob, Owner } from "../../src/backends/contract/index.js";
import { crashLoopRule } from "../../src/maintenance/policy.js";
import { type ContractTarget, newJob } from "./helpers.js";

const NAME = "remote.gen";

async function claimed(b: Backend, workerId = "w1", enqueued: Partial<NewJob> = {}) {
  await b.workerRegister({ id: workerId, hostname: "h", pid: 1, queues: null, concurrency: 1 });
  await b.jobEnqueue({ jobs: [newJob({ name: NAME, ...enqueued })] });
  const [job] = await b.jobClaim({ workerId, queues: null, limit: 1 });
  if (!job) throw new Error("nothing claimed");
  const owner: Owner = { workerId: job.workerId, claimToken: job.claimToken };
  return { job, owner };
}

async function accepted(
  b: Backend,
  taskId = "tsk_1",
  workerId = "w1",
  enqueued: Partial<NewJob> = {},
) {
  const { job, owner } = await claimed(b, workerId, enqueued);
  await b.submissions.submissionMarkSubmitting({
    jobId: job.id,
    owner,
    name: NAME,
    queue: "default",
  });
  expect(
    await b.submissions.submissionAccept({ jobId: job.id, owner, taskId, pollDelaySeconds: 0 }),
  ).toBe(true);
  return job;
}

const poll = (b: Backend, workerId = "w1", reconcilable: string[] = []) =>
  b.submissions.pollClaimDue({ workerId, names: [NAME], reconcilable, limit: 10 });

export function runSubmissionContract(target: ContractTarget): void {
  describe(`submission store contract: ${target.label}`, () => {
    const make = () => target.make();

    it("mark › owner holds a claimed job › submitting, generation 1; again → illegal; other owner → fenced", async () => {
      const b = await make();
      const { job, owner } = await claimed(b);
      const s = b.submissions;
      const params = { jobId: job.id, owner, name: NAME, queue: "default" };
      expect(await s.submissionMarkSubmitting(params)).toEqual({ kind: "marked", generation: 1 });
      expect(await s.submissionMarkSubmitting(params)).toEqual({
        kind: "illegal",
        phase: "submitting",
      });
      expect(
        await s.submissionMarkSubmitting({
          ...params,
          // Another token: its first character changed (a token starting with "0" gets a "1").
          owner: {
            ...owner,
            claimToken: owner.claimToken.replace(/^./, (c) => (c === "0" ? "1" : "0")),
          },
        }),
      ).toEqual({ kind: "fenced" });
      const rec = await s.submissionGet({ jobId: job.id });
      expect(rec).toMatchObject({
        phase: "submitting",
        idempotencyKey: `${job.id}:1`,
        jobStatus: "processing",
      });
      expect(rec?.submittedAt).toBeInstanceOf(Date);
    });

    it("accept › submitting › accepted with task id and hand-off in one write: owner cleared, still processing, attempts kept", async () => {
      const b = await make();
      const job = await accepted(b, "tsk_a");
      const row = await b.jobGet({ id: job.id });
      expect(row).toMatchObject({
        status: "processing",
        workerId: null,
        claimToken: null,
        attempts: 0,
      });
      expect(await b.submissions.submissionGet({ jobId: job.id })).toMatchObject({
        phase: "accepted",
        taskId: "tsk_a",
        workerId: null,
      });
      // Generic recovery never requeues it (no owner, but in custody).
      const result = await b.jobRecoverStale({ staleAfterSeconds: 0, crashLoop: crashLoopRule(5) });
      expect(result.requeued).toEqual([]);
      expect((await b.jobGet({ id: job.id }))?.status).toBe("processing");
    });

    it("accept › not submitting (no mark) or wrong owner › false, nothing written", async () => {
      const b = await make();
      const { job, owner } = await claimed(b);
      const s = b.submissions;
      expect(
        await s.submissionAccept({ jobId: job.id, owner, taskId: "t", pollDelaySeconds: 0 }),
      ).toBe(false);
      await s.submissionMarkSubmitting({ jobId: job.id, owner, name: NAME, queue: "default" });
      expect(
        await s.submissionAccept({
          jobId: job.id,
          owner: { ...owner, workerId: "x" },
          taskId: "t",
          pollDelaySeconds: 0,
        }),
      ).toBe(false);
      expect((await s.submissionGet({ jobId: job.id }))?.phase).toBe("submitting");
    });

    it("freeze › submitting › frozen, owner cleared, attempts kept; never claimed unless reconcilable", async () => {
      const b = await make();
      const { job, owner } = await claimed(b);
      const s = b.submissions;
      await s.submissionMarkSubmitting({ jobId: job.id, owner, name: NAME, queue: "default" });
      expect(await s.submissionFreeze({ jobId: job.id, owner, reason: "deadline" })).toBe(true);
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "processing",
        workerId: null,
        attempts: 0,
      });
      expect(await s.submissionGet({ jobId: job.id })).toMatchObject({
        phase: "frozen",
        frozenReason: "deadline",
      });
      expect(await b.jobClaim({ workerId: "w1", queues: null, limit: 5 })).toEqual([]);
      expect(await poll(b)).toEqual([]);
      const [again] = await poll(b, "w1", [NAME]);
      expect(again).toMatchObject({ phase: "frozen", generation: 1 });
      expect((await s.submissionCounts()).frozen).toBe(1);
    });

    it("pollNow › frozenNeedsAnswer › a frozen row without an answer → false, nothing written; an accepted one or a frozen one with an answer → due now", async () => {
      const b = await make();
      const s = b.submissions;
      const { job, owner } = await claimed(b);
      await s.submissionMarkSubmitting({ jobId: job.id, owner, name: NAME, queue: "default" });
      await s.submissionFreeze({ jobId: job.id, owner, reason: "deadline" });
      const before = await s.submissionGet({ jobId: job.id });
      // Let the clock move, so a write would show in updatedAt.
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(await s.pollNow({ jobId: job.id, frozenNeedsAnswer: true })).toBe(false);
      expect(await s.submissionGet({ jobId: job.id })).toEqual(before);
      const acc = await accepted(b, "tsk_n");
      expect(await s.pollNow({ jobId: acc.id, frozenNeedsAnswer: true })).toBe(true);
      expect(
        await s.submissionAnswer({
          target: { jobId: job.id },
          answer: { kind: "failed", error: "gone", retry: false },
        }),
      ).toBe("stored");
      expect(await s.pollNow({ jobId: job.id, frozenNeedsAnswer: true })).toBe(true);
      // Without the flag a frozen row is made due as before (a reconciling worker takes it).
      const other = await claimed(b);
      await s.submissionMarkSubmitting({
        jobId: other.job.id,
        owner: other.owner,
        name: NAME,
        queue: "default",
      });
      await s.submissionFreeze({ jobId: other.job.id, owner: other.owner, reason: "deadline" });
      expect(await s.pollNow({ jobId: other.job.id })).toBe(true);
    });

    it("pollClaimDue › accepted and due › claimed exactly once; pollRelease › due later, polls + 1, owner cleared", async () => {
      const b = await make();
      const job = await accepted(b, "tsk_p");
      const s = b.submissions;
      const [first] = await poll(b);
      expect(first).toMatchObject({ phase: "accepted", taskId: "tsk_p", polls: 0, answer: null });
      expect(first?.job.id).toBe(job.id);
      expect(await poll(b)).toEqual([]);
      const owner = { workerId: "w1", claimToken: first?.job.claimToken as string };
      expect(
        await s.pollRelease({ jobId: job.id, owner, delaySeconds: 3600, countPoll: true }),
      ).toBe(true);
      expect(await s.pollRelease({ jobId: job.id, owner, delaySeconds: 0, countPoll: true })).toBe(
        false,
      );
      expect(await poll(b)).toEqual([]);
      expect(await s.pollNow({ jobId: job.id })).toBe(true);
      const [second] = await poll(b);
      expect(second?.polls).toBe(1);
      expect(
        await b.submissions.pollClaimDue({
          workerId: "w1",
          names: ["other"],
          reconcilable: [],
          limit: 5,
        }),
      ).toEqual([]);
    });

    it("pollClaimDue › a job enqueued with a trace context › the polled job is the claimed job, trace context kept", async () => {
      const b = await make();
      const traceContext =
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 congo=t61rcWkgMzE";
      const job = await accepted(b, "tsk_t", "w1", { traceContext });
      expect(job.traceContext).toBe(traceContext);
      const [p] = await poll(b, "w2");
      expect(p?.job).toEqual({ ...job, workerId: "w2", claimToken: p?.job.claimToken });
    });

    it("complete › poll owner › job done (attempts + 1, result), phase finished", async () => {
      const b = await make();
      const job = await accepted(b);
      const [p] = await poll(b);
      const owner = { workerId: "w1", claimToken: p?.job.claimToken as string };
      expect(
        await b.submissions.submissionComplete({
          jobId: job.id,
          owner,
          result: '{"url":"u"}',
          retentionSeconds: 60,
        }),
      ).toBe(true);
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "done",
        attempts: 1,
        result: '{"url":"u"}',
      });
      expect((await b.submissions.submissionGet({ jobId: job.id }))?.phase).toBe("finished");
      expect(await b.submissions.submissionCounts()).toEqual({
        submitting: 0,
        awaiting: 0,
        frozen: 0,
      });
    });

    it("release › definite failure › new generation; with requeue › queued, attempts kept; next mark uses the new key", async () => {
      const b = await make();
      const { job, owner } = await claimed(b);
      const s = b.submissions;
      await s.submissionMarkSubmitting({ jobId: job.id, owner, name: NAME, queue: "default" });
      expect(await s.submissionRelease({ jobId: job.id, owner, newKey: true, requeue: true })).toBe(
        true,
      );
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "queued",
        workerId: null,
        attempts: 0,
      });
      const [again] = await b.jobClaim({ workerId: "w1", queues: null, limit: 1 });
      const owner2 = { workerId: "w1", claimToken: again?.claimToken as string };
      expect(
        await s.submissionMarkSubmitting({
          jobId: job.id,
          owner: owner2,
          name: NAME,
          queue: "default",
        }),
      ).toEqual({
        kind: "marked",
        generation: 2,
      });
    });

    it("answer › by job id on an accepted job › stored, due now, first answer wins; finished › already_finished", async () => {
      const b = await make();
      const job = await accepted(b, "tsk_x");
      const s = b.submissions;
      await poll(b).then(async ([p]) => {
        await s.pollRelease({
          jobId: job.id,
          owner: { workerId: "w1", claimToken: p?.job.claimToken as string },
          delaySeconds: 3600,
          countPoll: false,
        });
      });
      expect(
        await s.submissionAnswer({
          target: { jobId: job.id },
          answer: { kind: "done", result: "1" },
        }),
      ).toBe("stored");
      expect(
        await s.submissionAnswer({
          target: { taskId: "tsk_x" },
          answer: { kind: "done", result: "2" },
        }),
      ).toBe("already_finished");
      const [p] = await poll(b);
      expect(p?.answer).toEqual({ kind: "done", result: "1" });
      await expect(
        s.submissionAnswer({
          target: { jobId: "00000000-0000-4000-8000-000000000000" },
          answer: { kind: "done", result: null },
        }),
      ).rejects.toMatchObject({ code: "NOT_FOUND" });
    });

    it("answer › by task id before accepted is written › early, applied by the accept (due now)", async () => {
      const b = await make();
      const s = b.submissions;
      expect(
        await s.submissionAnswer({
          target: { taskId: "tsk_e", name: NAME },
          answer: { kind: "failed", error: "bad", retry: false },
        }),
      ).toBe("early");
      const { job, owner } = await claimed(b);
      await s.submissionMarkSubmitting({ jobId: job.id, owner, name: NAME, queue: "default" });
      await s.submissionAccept({ jobId: job.id, owner, taskId: "tsk_e", pollDelaySeconds: 3600 });
      const [p] = await poll(b);
      expect(p?.answer).toEqual({ kind: "failed", error: "bad", retry: false });
    });

    it("resolve › frozen › accepted (due now) or not_submitted (queued, same key); not frozen › false", async () => {
      const b = await make();
      const s = b.submissions;
      const one = await claimed(b);
      await s.submissionMarkSubmitting({
        jobId: one.job.id,
        owner: one.owner,
        name: NAME,
        queue: "default",
      });
      expect(
        await s.submissionResolve({ jobId: one.job.id, resolution: { kind: "not_submitted" } }),
      ).toBe(false);
      await s.submissionFreeze({ jobId: one.job.id, owner: one.owner, reason: "crash" });
      expect(
        await s.submissionResolve({
          jobId: one.job.id,
          resolution: { kind: "accepted", taskId: "tsk_r" },
        }),
      ).toBe(true);
      expect(await s.submissionGet({ jobId: one.job.id })).toMatchObject({
        phase: "accepted",
        taskId: "tsk_r",
      });
      const [p] = await poll(b);
      expect(p?.taskId).toBe("tsk_r");

      const two = await claimed(b);
      await s.submissionMarkSubmitting({
        jobId: two.job.id,
        owner: two.owner,
        name: NAME,
        queue: "default",
      });
      await s.submissionFreeze({ jobId: two.job.id, owner: two.owner, reason: "crash" });
      expect(
        await s.submissionResolve({ jobId: two.job.id, resolution: { kind: "not_submitted" } }),
      ).toBe(true);
      expect(await b.jobGet({ id: two.job.id })).toMatchObject({ status: "queued", attempts: 0 });
      expect(await s.submissionGet({ jobId: two.job.id })).toMatchObject({
        phase: "released",
        generation: 1,
      });
    });

    it("recover › owner dead › submitting frozen (crash), accepted in a poll handed off due now; claimed with no phase left to generic recovery", async () => {
      const b = await make();
      const s = b.submissions;
      const sub = await claimed(b, "dead");
      await s.submissionMarkSubmitting({
        jobId: sub.job.id,
        owner: sub.owner,
        name: NAME,
        queue: "default",
      });
      const acc = await accepted(b, "tsk_h", "dead");
      await poll(b, "dead");
      const plain = await claimed(b, "dead");
      await b.workerMarkStopped({ workerId: "dead" });
      const recovered = await s.submissionRecover({ heartbeatTimeoutSeconds: 30 });
      expect(recovered.map((r) => [r.jobId, r.action]).sort()).toEqual(
        [
          [sub.job.id, "freeze"],
          [acc.id, "handoff"],
        ].sort(),
      );
      expect(await s.submissionGet({ jobId: sub.job.id })).toMatchObject({
        phase: "frozen",
        frozenReason: "crash",
        workerId: null,
      });
      expect(await s.submissionGet({ jobId: acc.id })).toMatchObject({
        phase: "accepted",
        workerId: null,
      });
      expect(await s.submissionRecover({ heartbeatTimeoutSeconds: 30 })).toEqual([]);
      const generic = await b.jobRecoverStale({
        staleAfterSeconds: 30,
        crashLoop: crashLoopRule(5),
      });
      expect(generic.requeued.map((j) => j.id)).toEqual([plain.job.id]);
      expect((await b.jobGet({ id: sub.job.id }))?.status).toBe("processing");
    });

    it("recover › caller's timeout shorter than the owner's declared one › nothing frozen or handed off while the owner is within its window; an undeclared owner is", async () => {
      const b = await make();
      const s = b.submissions;
      const mark = async (workerId: string) => {
        const c = await claimed(b, workerId);
        await s.submissionMarkSubmitting({
          jobId: c.job.id,
          owner: c.owner,
          name: NAME,
          queue: "default",
        });
        return c;
      };
      const declared = await mark("declared");
      const acc = await accepted(b, "tsk_d", "declared");
      await poll(b, "declared");
      await b.admin.workerDeclare({ workerId: "declared", heartbeatTimeoutSeconds: 3600 });
      const silent = await mark("undeclared");
      // Both heartbeats are now older than the caller's 0.05 s (a bound, not a race: 200 ms).
      await new Promise((resolve) => setTimeout(resolve, 200));
      const recovered = await s.submissionRecover({ heartbeatTimeoutSeconds: 0.05 });
      expect(recovered.map((r) => [r.jobId, r.action])).toEqual([[silent.job.id, "freeze"]]);
      expect(await s.submissionGet({ jobId: declared.job.id })).toMatchObject({
        phase: "submitting",
        workerId: "declared",
      });
      expect(await s.submissionGet({ jobId: acc.id })).toMatchObject({
        phase: "accepted",
        workerId: "declared",
      });
      await b.workerMarkStopped({ workerId: "declared" });
      const after = await s.submissionRecover({ heartbeatTimeoutSeconds: 0.05 });
      expect(after.map((r) => [r.jobId, r.action]).sort()).toEqual(
        [
          [declared.job.id, "freeze"],
          [acc.id, "handoff"],
        ].sort(),
      );
    });

    it("recover › the caller's own incarnation with a stale heartbeat, passed as liveWorkerId › its submitting and polled rows kept; without liveWorkerId frozen and handed off", async () => {
      const b = await make();
      const s = b.submissions;
      const sub = await claimed(b, "self");
      await s.submissionMarkSubmitting({
        jobId: sub.job.id,
        owner: sub.owner,
        name: NAME,
        queue: "default",
      });
      const acc = await accepted(b, "tsk_self", "self");
      expect((await poll(b, "self")).map((p) => p.job.id)).toEqual([acc.id]);
      // Its heartbeat is now older than the 0.05 s window (a bound, not a race: 250 ms).
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect(
        await s.submissionRecover({ heartbeatTimeoutSeconds: 0.05, liveWorkerId: "self" }),
      ).toEqual([]);
      expect(await s.submissionGet({ jobId: sub.job.id })).toMatchObject({
        phase: "submitting",
        workerId: "self",
      });
      expect(await s.submissionGet({ jobId: acc.id })).toMatchObject({
        phase: "accepted",
        workerId: "self",
      });
      const generic = await b.jobRecoverStale({
        staleAfterSeconds: 0.05,
        crashLoop: crashLoopRule(5),
        liveWorkerId: "self",
      });
      expect(generic.requeued).toEqual([]);
      const recovered = await s.submissionRecover({ heartbeatTimeoutSeconds: 0.05 });
      expect(recovered.map((r) => [r.jobId, r.action]).sort()).toEqual(
        [
          [sub.job.id, "freeze"],
          [acc.id, "handoff"],
        ].sort(),
      );
      expect(await s.submissionGet({ jobId: sub.job.id })).toMatchObject({
        phase: "frozen",
        frozenReason: "crash",
        workerId: null,
      });
    });

    it("admission › maxConcurrent 1 with one submitting › over_budget, nothing written; perMinute › rate", async () => {
      const b = await make();
      const s = b.submissions;
      const one = await claimed(b);
      const two = await claimed(b);
      const budget = { maxConcurrent: 1 };
      expect(
        (
          await s.submissionMarkSubmitting({
            jobId: one.job.id,
            owner: one.owner,
            name: NAME,
            queue: "default",
            budget,
          })
        ).kind,
      ).toBe("marked");
      expect(
        await s.submissionMarkSubmitting({
          jobId: two.job.id,
          owner: two.owner,
          name: NAME,
          queue: "default",
          budget,
        }),
      ).toMatchObject({
        kind: "over_budget",
        reason: "concurrency",
      });
      expect(await s.submissionGet({ jobId: two.job.id })).toBeNull();
      await s.submissionAccept({
        jobId: one.job.id,
        owner: one.owner,
        taskId: "t1",
        pollDelaySeconds: 60,
      });
      expect(
        await s.submissionMarkSubmitting({
          jobId: two.job.id,
          owner: two.owner,
          name: NAME,
          queue: "default",
          budget: { perMinute: 1 },
        }),
      ).toMatchObject({
        kind: "over_budget",
        reason: "rate",
      });
      expect(
        (
          await s.submissionMarkSubmitting({
            jobId: two.job.id,
            owner: two.owner,
            name: NAME,
            queue: "default",
            budget,
          })
        ).kind,
      ).toBe("marked");
    });

    it("prune › jobs pruned or dead letters deleted › their submission rows go, in batches of the limit; rows of jobs still present (done, frozen, dead letter) stay", async () => {
      const b = await make();
      const s = b.submissions;
      const finish = async (taskId: string, retentionSeconds: number) => {
        const job = await accepted(b, taskId);
        const [held] = await poll(b);
        if (!held) throw new Error("nothing to poll");
        const owner = { workerId: held.job.workerId, claimToken: held.job.claimToken };
        expect(
          await s.submissionComplete({ jobId: job.id, owner, result: null, retentionSeconds }),
        ).toBe(true);
        return job.id;
      };
      // A retention of 1 ms (0 would keep nothing, so there would be nothing to prune).
      const expired = [await finish("tsk_p1", 0.001), await finish("tsk_p2", 0.001)];
      const kept = await finish("tsk_p3", 3600);
      const frozen = await claimed(b);
      await s.submissionMarkSubmitting({
        jobId: frozen.job.id,
        owner: frozen.owner,
        name: NAME,
        queue: "default",
      });
      await s.submissionFreeze({ jobId: frozen.job.id, owner: frozen.owner, reason: "deadline" });
      const buried = await claimed(b);
      await s.submissionMarkSubmitting({
        jobId: buried.job.id,
        owner: buried.owner,
        name: NAME,
        queue: "default",
      });
      expect(
        await b.jobDeadLetter({
          id: buried.job.id,
          owner: buried.owner,
          error: "remote_failed: provider said no",
          reason: "remote_failed",
          countAttempt: true,
        }),
      ).toBe(true);
      await s.submissionFinish({ jobId: buried.job.id });

      expect(await s.submissionPrune({ limit: 10 })).toBe(0); // every job still has a row
      await new Promise((resolve) => setTimeout(resolve, 20)); // past result_expires_at
      expect(await b.jobPruneFinished({ limit: 10 })).toBe(2);
      expect(await s.submissionPrune({ limit: 1 })).toBe(1); // bounded by the limit
      expect(await s.submissionPrune({ limit: 10 })).toBe(1);
      expect(await s.submissionPrune({ limit: 10 })).toBe(0);
      for (const id of expired) expect(await s.submissionGet({ jobId: id })).toBeNull();
      for (const id of [kept, frozen.job.id, buried.job.id])
        expect(await s.submissionGet({ jobId: id }), id).not.toBeNull();

      expect(await b.admin.deadLetterDelete({ ids: [buried.job.id] })).toBe(1);
      expect(await s.submissionPrune({ limit: 10 })).toBe(1);
      expect(await s.submissionGet({ jobId: buried.job.id })).toBeNull();
      expect(await s.submissionGet({ jobId: kept })).toMatchObject({ phase: "finished" });
    });

    it("list › filters frozen / awaiting / all", async () => {
      const b = await make();
      const s = b.submissions;
      const acc = await accepted(b, "tsk_l");
      const fr = await claimed(b);
      await s.submissionMarkSubmitting({
        jobId: fr.job.id,
        owner: fr.owner,
        name: NAME,
        queue: "default",
      });
      await s.submissionFreeze({ jobId: fr.job.id, owner: fr.owner, reason: "deadline" });
      expect((await s.submissionList({ filter: "frozen", limit: 10 })).map((r) => r.jobId)).toEqual(
        [fr.job.id],
      );
      expect(
        (await s.submissionList({ filter: "awaiting", limit: 10 })).map((r) => r.jobId),
      ).toEqual([acc.id]);
      expect(await s.submissionList({ filter: "all", limit: 10 })).toHaveLength(2);
      expect(await s.submissionCounts()).toEqual({ submitting: 0, awaiting: 1, frozen: 1 });
    });
  });
}
