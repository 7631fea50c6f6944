/**
 * Contract area: the dead-letter queue: the move, deadLetterGet, deadLetterReplay. Run on every backend by ../runner.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isSoniqError } from "../../../src/errors.js";
import { type ContractContext, claimDue, newJob, ownerOf } from "../helpers.js";

/** The dead-letter queue: the move, deadLetterGet, deadLetterReplay cases. */
export function deadLetterCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("dead-letter", () => {
    it("jobRetry then jobDeadLetter › attempts exhausted › retry delays the job; the move counts the attempt and keeps the reason", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 2 });
      await b.jobEnqueue({ jobs: [job] });
      const [c1] = await claimDue(b);
      expect(
        await b.jobRetry({ id: job.id, owner: ownerOf(c1!), error: "boom 1", delaySeconds: 3600 }),
      ).toBe(true);
      const retried = await b.jobGet({ id: job.id });
      expect(retried).toMatchObject({
        status: "queued",
        attempts: 1,
        lastError: "boom 1",
        workerId: null,
        claimToken: null,
      });
      const now = await b.now();
      expect(retried!.scheduledAt.getTime()).toBeGreaterThan(now.getTime() + 3500 * 1000);
      expect(await claimDue(b)).toHaveLength(0);

      const job2 = newJob({ maxAttempts: 2 });
      await b.jobEnqueue({ jobs: [job2] });
      const [c2] = await claimDue(b);
      expect(
        await b.jobRetry({ id: job2.id, owner: ownerOf(c2!), error: "first", delaySeconds: 0 }),
      ).toBe(true);
      const [c3] = await claimDue(b);
      expect(c3?.id).toBe(job2.id);
      expect(c3?.attempts).toBe(1);
      expect(
        await b.jobDeadLetter({
          id: job2.id,
          owner: ownerOf(c3!),
          error: "second",
          reason: "max_attempts_exceeded",
          countAttempt: true,
        }),
      ).toBe(true);
      expect(await b.jobGet({ id: job2.id })).toBeNull();
      const dead = await b.deadLetterGet({ id: job2.id });
      expect(dead).toMatchObject({
        id: job2.id,
        attempts: 2,
        lastError: "second",
        reason: "max_attempts_exceeded",
      });
      expect(dead?.deadAt).toBeInstanceOf(Date);
      expect((await b.jobStats()).deadLetter).toBe(1);
    });

    it("jobDeadLetter › countAttempt false › attempts unchanged", async () => {
      const b = await make();
      const job = newJob();
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      expect(
        await b.jobDeadLetter({
          id: job.id,
          owner: ownerOf(c!),
          error: "no handler",
          reason: "unknown_job",
          countAttempt: false,
        }),
      ).toBe(true);
      expect(await b.deadLetterGet({ id: job.id })).toMatchObject({
        attempts: 0,
        reason: "unknown_job",
      });
    });

    it("deadLetterReplay › an entry › queued again with attempts 0 and last error kept; an unknown id is false", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 1, dedupKey: "replay-me" });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      await b.jobDeadLetter({
        id: job.id,
        owner: ownerOf(c!),
        error: "bad",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      expect(await b.deadLetterReplay({ id: job.id })).toBe(true);
      expect(await b.deadLetterGet({ id: job.id })).toBeNull();
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "queued",
        attempts: 0,
        lastError: "bad",
        workerId: null,
      });
      expect(await b.deadLetterReplay({ id: job.id })).toBe(false);
      expect(await b.deadLetterReplay({ id: randomUUID() })).toBe(false);
      const [again] = await claimDue(b);
      expect(again?.id).toBe(job.id);
    });

    it("deadLetterReplay › a live job holds its dedup key › DEDUP_CONFLICT, nothing changes", async () => {
      const b = await make();
      const job = newJob({ dedupKey: "k" });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      await b.jobDeadLetter({
        id: job.id,
        owner: ownerOf(c!),
        error: "bad",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      const holder = newJob({ dedupKey: "k" });
      expect((await b.jobEnqueue({ jobs: [holder] }))[0]).toEqual({
        id: holder.id,
        inserted: true,
      });
      const err = await b.deadLetterReplay({ id: job.id }).catch((e: unknown) => e);
      expect(isSoniqError(err, "DEDUP_CONFLICT")).toBe(true);
      expect(await b.deadLetterGet({ id: job.id })).not.toBeNull();
      expect(await b.jobGet({ id: job.id })).toBeNull();
    });
  });
}
