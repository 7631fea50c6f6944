/**
 * Contract area: the fenced finishing writes: complete, completeMany, snooze, NACK. Run on every backend by ../runner.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Owner } from "../../../src/backends/contract/index.js";
import { type ContractContext, claimDue, newJob, ownerOf } from "../helpers.js";

/** The fenced finishing writes: complete, completeMany, snooze, NACK cases. */
export function fencedWritesCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("fenced-writes", () => {
    it("jobCompleteMany › mixed owners › changes only owned rows, results in input order", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: [newJob(), newJob(), newJob()] });
      const [x, y, z] = await claimDue(b, 3);
      const res = await b.jobCompleteMany({
        items: [
          { id: x!.id, owner: ownerOf(x!), result: '{"n":1}' },
          { id: y!.id, owner: { workerId: "w", claimToken: randomUUID() }, result: null },
          { id: z!.id, owner: ownerOf(z!), result: null },
          { id: randomUUID(), owner: ownerOf(z!), result: null },
        ],
        resultRetentionSeconds: 3600,
      });
      expect(res).toEqual([true, false, true, false]);
      expect(await b.jobGet({ id: x!.id })).toMatchObject({
        status: "done",
        attempts: 1,
        result: '{"n":1}',
      });
      expect(await b.jobGet({ id: y!.id })).toMatchObject({ status: "processing", attempts: 0 });
      expect(await b.jobGet({ id: z!.id })).toMatchObject({ status: "done", result: null });
      expect(await b.jobCompleteMany({ items: [], resultRetentionSeconds: 60 })).toEqual([]);
    });

    it("jobCompleteMany › an earlier claim of the same job in the batch › only the current claim's item is true", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: [newJob(), newJob()] });
      const [first] = await claimDue(b);
      expect(await b.jobNack({ id: first!.id, owner: ownerOf(first!) })).toBe(true);
      const again = await claimDue(b, 2);
      const second = again.find((j) => j.id === first!.id);
      const other = again.find((j) => j.id !== first!.id);
      const res = await b.jobCompleteMany({
        items: [
          { id: first!.id, owner: ownerOf(first!), result: null },
          { id: "not-a-uuid", owner: ownerOf(second!), result: null },
          { id: second!.id, owner: ownerOf(second!), result: null },
          { id: other!.id, owner: ownerOf(other!), result: null },
        ],
        resultRetentionSeconds: 60,
      });
      expect(res).toEqual([false, false, true, true]);
      // Every item of a batch changing (the usual case), results all NULL.
      await b.jobEnqueue({ jobs: [newJob(), newJob(), newJob()] });
      const three = await claimDue(b, 3);
      const all = await b.jobCompleteMany({
        items: three.map((j) => ({ id: j.id, owner: ownerOf(j), result: null })),
        resultRetentionSeconds: 60,
      });
      expect(all).toEqual([true, true, true]);
      for (const j of three) {
        expect(await b.jobGet({ id: j.id })).toMatchObject({ status: "done", result: null });
      }
    });

    it("jobSnooze › owned claim › queued later, attempts unchanged", async () => {
      const b = await make();
      const job = newJob();
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      expect(await b.jobSnooze({ id: job.id, owner: ownerOf(c!), delaySeconds: 3600 })).toBe(true);
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
        claimToken: null,
      });
      expect(await claimDue(b)).toHaveLength(0);
    });

    it("jobNack › owned claim after a retry › the NACK field contract; a second NACK changes nothing", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 5 });
      await b.jobEnqueue({ jobs: [job] });
      const [c1] = await claimDue(b);
      await b.jobRetry({
        id: job.id,
        owner: ownerOf(c1!),
        error: "earlier failure",
        delaySeconds: 0,
      });
      const [c2] = await claimDue(b);
      const before = await b.jobGet({ id: job.id });
      const t0 = await b.now();
      expect(await b.jobNack({ id: job.id, owner: ownerOf(c2!) })).toBe(true);
      const after = await b.jobGet({ id: job.id });
      const t1 = await b.now();
      expect(after).toMatchObject({
        status: "queued",
        workerId: null,
        claimToken: null,
        attempts: 1,
        lastError: "earlier failure",
      });
      expect(after!.attempts).toBe(before!.attempts);
      expect(after!.scheduledAt.getTime()).toBeGreaterThanOrEqual(t0.getTime() - 5);
      expect(after!.scheduledAt.getTime()).toBeLessThanOrEqual(t1.getTime() + 5);
      expect(after!.updatedAt.getTime()).toBeGreaterThanOrEqual(t0.getTime() - 5);
      // Idempotent: a second NACK is a no-op.
      expect(await b.jobNack({ id: job.id, owner: ownerOf(c2!) })).toBe(false);
      const [c3] = await claimDue(b);
      expect(c3?.id).toBe(job.id);
    });

    it("jobNackMany › mixed owners over two queues › owned rows queued with attempts and last_error kept, each queue woken, results in input order", async () => {
      const b = await make();
      const woken = new Set<string>();
      const off = b.notifier.subscribe((queue) => woken.add(queue));
      const first = newJob({ queue: "nack-a", maxAttempts: 5 });
      await b.jobEnqueue({ jobs: [first] });
      const [r] = await b.jobClaim({ workerId: "w", queues: ["nack-a"], limit: 1 });
      await b.jobRetry({ id: first.id, owner: ownerOf(r!), error: "earlier", delaySeconds: 0 });
      await b.jobEnqueue({
        jobs: [newJob({ queue: "nack-a" }), newJob({ queue: "nack-b" })],
      });
      const claimed = await claimDue(b, 3);
      expect(claimed).toHaveLength(3);
      const [x, y, z] = claimed;
      woken.clear();
      const res = await b.jobNackMany({
        items: [
          { id: x!.id, owner: ownerOf(x!) },
          { id: y!.id, owner: { workerId: "w", claimToken: randomUUID() } },
          { id: z!.id, owner: ownerOf(z!) },
          { id: randomUUID(), owner: ownerOf(z!) },
        ],
      });
      off();
      expect(res).toEqual([true, false, true, false]);
      for (const c of [x!, z!]) {
        expect(await b.jobGet({ id: c.id })).toMatchObject({
          status: "queued",
          workerId: null,
          claimToken: null,
          attempts: c.attempts,
        });
      }
      expect(await b.jobGet({ id: first.id })).toMatchObject({ lastError: "earlier" });
      expect(await b.jobGet({ id: y!.id })).toMatchObject({ status: "processing", workerId: "w" });
      // Woken locally at once (the pool's own NOTIFYs are not delivered twice).
      expect([...woken].filter((q) => q !== "*").sort()).toEqual(
        [...new Set([x!.queue, z!.queue])].sort(),
      );
      // Idempotent; an empty batch is no write.
      expect(await b.jobNackMany({ items: [{ id: x!.id, owner: ownerOf(x!) }] })).toEqual([false]);
      expect(await b.jobNackMany({ items: [] })).toEqual([]);
    });

    it("finishing writes › wrong worker, wrong token or row moved on › change nothing", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 5 });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await b.jobClaim({ workerId: "owner", queues: null, limit: 1 });
      const snapshot = await b.jobGet({ id: job.id });
      const intruders: Owner[] = [
        { workerId: "intruder", claimToken: c!.claimToken },
        { workerId: "owner", claimToken: randomUUID() },
      ];
      for (const o of intruders) {
        expect(
          await b.jobComplete({ id: job.id, owner: o, result: "1", resultRetentionSeconds: 60 }),
        ).toBe(false);
        expect(await b.jobRetry({ id: job.id, owner: o, error: "x", delaySeconds: 0 })).toBe(false);
        expect(await b.jobSnooze({ id: job.id, owner: o, delaySeconds: 0 })).toBe(false);
        expect(await b.jobNack({ id: job.id, owner: o })).toBe(false);
        expect(
          await b.jobDeadLetter({
            id: job.id,
            owner: o,
            error: "x",
            reason: "r",
            countAttempt: true,
          }),
        ).toBe(false);
      }
      expect(await b.jobGet({ id: job.id })).toEqual(snapshot);
      expect(await b.deadLetterGet({ id: job.id })).toBeNull();

      // After a NACK and a re-claim by another worker, the first owner's late write is a no-op.
      await b.jobNack({ id: job.id, owner: ownerOf(c!) });
      const [reclaimed] = await b.jobClaim({ workerId: "other", queues: null, limit: 1 });
      expect(
        await b.jobComplete({
          id: job.id,
          owner: ownerOf(c!),
          result: '"late"',
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "processing",
        workerId: "other",
        attempts: 0,
      });
      // Writes on queued or done rows are no-ops too.
      expect(
        await b.jobComplete({
          id: job.id,
          owner: ownerOf(reclaimed!),
          result: "1",
          resultRetentionSeconds: 60,
        }),
      ).toBe(true);
      expect(
        await b.jobComplete({
          id: job.id,
          owner: ownerOf(reclaimed!),
          result: "2",
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      expect(await b.jobNack({ id: job.id, owner: ownerOf(reclaimed!) })).toBe(false);
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "done",
        attempts: 1,
        result: "1",
      });
    });
  });
}
