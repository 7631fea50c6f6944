/**
 * Contract area: crash recovery (jobRecoverStale) and the crash-loop rule. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { crashLoopMessage, crashLoopRule } from "../../../src/maintenance/policy.js";
import { type ContractContext, newJob, ownerOf } from "../helpers.js";

/** The crash recovery (jobRecoverStale) and the crash-loop rule cases. */
export function recoveryCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("recovery", () => {
    it("jobRecoverStale › owners unknown, stopped, stale and live › requeues all but the live one; without staleAfterSeconds a stale heartbeat is not enough", async () => {
      const b = await make();
      const jobs = Array.from({ length: 4 }, () => newJob({ maxAttempts: 5 }));
      await b.jobEnqueue({ jobs });
      await b.workerRegister({ id: "live", hostname: "h", pid: 1, queues: null, concurrency: 1 });
      await b.workerRegister({
        id: "stopped",
        hostname: "h",
        pid: 2,
        queues: null,
        concurrency: 1,
      });
      await b.workerRegister({ id: "stale", hostname: "h", pid: 3, queues: null, concurrency: 1 });
      const [live] = await b.jobClaim({ workerId: "live", queues: null, limit: 1 });
      const [stopped] = await b.jobClaim({ workerId: "stopped", queues: null, limit: 1 });
      const [stale] = await b.jobClaim({ workerId: "stale", queues: null, limit: 1 });
      const [ghost] = await b.jobClaim({ workerId: "never-registered", queues: null, limit: 1 });
      await b.jobRetry({
        id: stale!.id,
        owner: ownerOf(stale!),
        error: "an earlier failure",
        delaySeconds: 0,
      });
      const [staleAgain] = await b.jobClaim({ workerId: "stale", queues: null, limit: 1 });
      await b.workerMarkStopped({ workerId: "stopped" });
      // "stale" last beat at registration, at least 1.5 s ago; "live" beats right before each
      // recovery call, so a 1 s window tells them apart with 0.5 s of margin on the stale side
      // and a whole second for the two statements between a live beat and the recovery (a
      // 40 ms window failed under a loaded full run).
      await new Promise((r) => setTimeout(r, 1500));
      await b.workerHeartbeat({ workerId: "live", status: "running" });
      // Without a vouched-for timeout, a stale heartbeat is not enough: only the stopped and the
      // unknown owners' rows come back.
      const cautious = await b.jobRecoverStale({ crashLoop: crashLoopRule(3) });
      expect(cautious.requeued.map((j) => j.id).sort()).toEqual([stopped!.id, ghost!.id].sort());
      expect(await b.jobGet({ id: staleAgain!.id })).toMatchObject({
        status: "processing",
        workerId: "stale",
      });
      await b.workerHeartbeat({ workerId: "live", status: "running" });
      const result = await b.jobRecoverStale({
        staleAfterSeconds: 1,
        crashLoop: crashLoopRule(3),
      });
      expect(result.deadLettered).toEqual([]);
      expect(result.requeued.map((j) => j.id)).toEqual([staleAgain!.id]);
      expect(cautious.requeued.find((j) => j.id === ghost!.id)).toMatchObject({
        previousOwner: "never-registered",
        interruptions: 1,
      });
      expect(await b.jobGet({ id: live!.id })).toMatchObject({
        status: "processing",
        workerId: "live",
      });
      expect(await b.jobGet({ id: staleAgain!.id })).toMatchObject({
        status: "queued",
        workerId: null,
        claimToken: null,
        attempts: 1,
        lastError: "an earlier failure",
        interruptions: 1,
      });
      // The old owner's late write is fenced out.
      expect(
        await b.jobComplete({
          id: staleAgain!.id,
          owner: ownerOf(staleAgain!),
          result: "1",
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      // Idempotent: nothing left to recover (the live owner beats first, as it would).
      await b.workerHeartbeat({ workerId: "live", status: "running" });
      expect(
        await b.jobRecoverStale({ staleAfterSeconds: 1, crashLoop: crashLoopRule(3) }),
      ).toEqual({
        requeued: [],
        deadLettered: [],
        cancelled: [],
      });
    });

    it("jobRecoverStale › the caller's own incarnation with a stale heartbeat, passed as liveWorkerId › its row kept, another stale owner's requeued; without liveWorkerId it is requeued too", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: [newJob(), newJob(), newJob()] });
      for (const id of ["self", "other"]) {
        await b.workerRegister({ id, hostname: "h", pid: 1, queues: null, concurrency: 1 });
      }
      const [mine] = await b.jobClaim({ workerId: "self", queues: null, limit: 1 });
      const [theirs] = await b.jobClaim({ workerId: "other", queues: null, limit: 1 });
      const [ghost] = await b.jobClaim({ workerId: "never-registered", queues: null, limit: 1 });
      // Both heartbeats are now older than the 0.05 s window (a bound, not a race: 250 ms).
      await new Promise((r) => setTimeout(r, 250));
      const pass = { staleAfterSeconds: 0.05, crashLoop: crashLoopRule(3) };
      const spared = await b.jobRecoverStale({ ...pass, liveWorkerId: "self" });
      expect(spared.requeued.map((j) => j.id).sort()).toEqual([theirs!.id, ghost!.id].sort());
      expect(spared.deadLettered).toEqual([]);
      expect(await b.jobGet({ id: mine!.id })).toMatchObject({
        status: "processing",
        workerId: "self",
        claimToken: mine!.claimToken,
        interruptions: 0,
      });
      // Still its owner: its own finishing write is not fenced out.
      expect(
        await b.jobComplete({
          id: mine!.id,
          owner: ownerOf(mine!),
          result: "1",
          resultRetentionSeconds: 60,
        }),
      ).toBe(true);
      // With another liveWorkerId, or none, the same stale owner is recovered like any other.
      for (const liveWorkerId of ["someone-else", undefined]) {
        const claimed = await b.jobClaim({ workerId: "self", queues: null, limit: 10 });
        expect(claimed.map((j) => j.id).sort()).toEqual([theirs!.id, ghost!.id].sort());
        await new Promise((r) => setTimeout(r, 250));
        const again = await b.jobRecoverStale(liveWorkerId ? { ...pass, liveWorkerId } : pass);
        expect(again.requeued.map((j) => [j.id, j.previousOwner]).sort()).toEqual(
          [
            [theirs!.id, "self"],
            [ghost!.id, "self"],
          ].sort(),
        );
      }
    });

    it("jobRecoverStale › a finished row and a crash loop › finished row untouched; past maxInterruptions to the DLQ, attempts unchanged", async () => {
      const b = await make();
      const done = newJob();
      const poison = newJob({ maxAttempts: 5 });
      await b.jobEnqueue({ jobs: [done] });
      const [d] = await b.jobClaim({ workerId: "gone", queues: null, limit: 1 });
      await b.jobComplete({
        id: d!.id,
        owner: ownerOf(d!),
        result: null,
        resultRetentionSeconds: 3600,
      });
      await b.jobEnqueue({ jobs: [poison] });
      for (let i = 1; i <= 2; i++) {
        const [p] = await b.jobClaim({ workerId: `crashed-${i}`, queues: null, limit: 1 });
        expect(p?.id).toBe(poison.id);
        const r = await b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(2) });
        expect(r.requeued.map((j) => j.interruptions)).toEqual([i]);
      }
      const [p3] = await b.jobClaim({ workerId: "crashed-3", queues: null, limit: 1 });
      const r3 = await b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(2) });
      expect(r3.requeued).toEqual([]);
      expect(r3.deadLettered).toMatchObject([
        { id: poison.id, interruptions: 3, previousOwner: "crashed-3" },
      ]);
      expect(await b.jobGet({ id: poison.id })).toBeNull();
      const dead = await b.deadLetterGet({ id: poison.id });
      expect(dead).toMatchObject({ reason: "crash_loop", attempts: 0, interruptions: 3 });
      expect(dead?.lastError).toContain("crash_loop");
      expect(dead?.lastError).toBe(crashLoopMessage(3)); // the words of maintenance/policy.ts
      expect(
        await b.jobComplete({
          id: poison.id,
          owner: ownerOf(p3!),
          result: "1",
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      expect(await b.jobGet({ id: done.id })).toMatchObject({ status: "done", attempts: 1 });
    });

    it("jobRecoverStale › deferred claims › charges an interruption only where a start was marked", async () => {
      const b = await make();
      const unstarted = newJob();
      const started = newJob();
      const plain = newJob();
      await b.jobEnqueue({ jobs: [unstarted] });
      const [u] = await b.jobClaim({
        workerId: "w-dead",
        queues: null,
        limit: 1,
        deferStart: true,
      });
      expect(u).toMatchObject({ id: unstarted.id, unchargedRecoveries: 0 });
      expect(await b.jobGet({ id: unstarted.id })).toMatchObject({ startKnown: false });
      await b.jobEnqueue({ jobs: [started] });
      const [s] = await b.jobClaim({
        workerId: "w-dead",
        queues: null,
        limit: 1,
        deferStart: true,
      });
      expect(await b.jobMarkStarted({ id: s!.id, owner: ownerOf(s!) })).toBe(true);
      expect(
        await b.jobMarkStarted({
          id: s!.id,
          owner: { ...ownerOf(s!), claimToken: "00000000-0000-4000-8000-000000000000" },
        }),
      ).toBe(false);
      await b.jobEnqueue({ jobs: [plain] });
      const [p] = await b.jobClaim({ workerId: "w-dead", queues: null, limit: 1 });
      expect(await b.jobGet({ id: p!.id })).toMatchObject({ startKnown: true });
      const r = await b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(0) });
      // maxInterruptions 0: a charged recovery dead-letters; an uncharged one never does.
      expect(r.requeued).toMatchObject([{ id: unstarted.id, interruptions: 0, charged: false }]);
      expect(r.deadLettered.map((j) => j.id).sort()).toEqual([started.id, plain.id].sort());
      expect(r.deadLettered.every((j) => j.charged && j.interruptions === 1)).toBe(true);
      expect(await b.jobGet({ id: unstarted.id })).toMatchObject({
        status: "queued",
        interruptions: 0,
        unchargedRecoveries: 1,
        attempts: 0,
      });
      // Its next claim reports the crash history.
      const [again] = await b.jobClaim({
        workerId: "w2",
        queues: null,
        limit: 1,
        deferStart: true,
      });
      expect(again).toMatchObject({ id: unstarted.id, unchargedRecoveries: 1, interruptions: 0 });
    });

    it("jobRecoverStale › concurrent passes › each row requeued once", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: Array.from({ length: 30 }, () => newJob()) });
      await b.jobClaim({ workerId: "dead", queues: null, limit: 30 });
      const [r1, r2, r3] = await Promise.all([
        b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(5) }),
        b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(5) }),
        b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(5) }),
      ]);
      const ids = [...r1!.requeued, ...r2!.requeued, ...r3!.requeued].map((j) => j.id);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
      expect((await b.jobStats()).queued).toBe(30);
    });
  });
}
