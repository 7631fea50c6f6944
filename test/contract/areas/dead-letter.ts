/**
 * Contract area: the dead-letter queue: the move, deadLetterGet, deadLetterReplay, and the job's
 * Soniq metadata (its concurrency key and limits) kept through both on every path into the queue.
 * Run on every backend by ../runner.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../../src/backends/contract/index.js";
import { isSoniqError } from "../../../src/errors.js";
import { crashLoopRule } from "../../../src/maintenance/policy.js";
import { type ContractContext, claimDue, newJob, ownerOf } from "../helpers.js";

/** A keyed job's metadata: key `acme`, at most one processing at once. */
const KEYED = JSON.stringify({ concurrency: { key: "acme", limit: 1 } });

/** Claims every due job (up to 10) as worker `w`: the ids. */
async function claimIds(b: Backend): Promise<string[]> {
  return (await claimDue(b, 10)).map((c) => c.id);
}

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

    it("jobDeadLetter then deadLetterReplay › a keyed job (limit 1) › the entry keeps its meta; replayed, it waits while another job of its key runs", async () => {
      const b = await make();
      const first = newJob({ meta: KEYED });
      const second = newJob({ meta: KEYED });
      await b.jobEnqueue({ jobs: [first] });
      const [c] = await claimDue(b);
      expect(c?.id).toBe(first.id);
      await b.jobEnqueue({ jobs: [second] });
      expect(
        await b.jobDeadLetter({
          id: first.id,
          owner: ownerOf(c!),
          error: "bad",
          reason: "max_attempts_exceeded",
          countAttempt: true,
        }),
      ).toBe(true);
      expect((await b.deadLetterGet({ id: first.id }))?.meta).toBe(KEYED);
      const [running] = await claimDue(b, 10);
      expect(running?.id).toBe(second.id);

      expect(await b.deadLetterReplay({ id: first.id })).toBe(true);
      const replayed = await b.jobGet({ id: first.id });
      expect(replayed).toMatchObject({ status: "queued", attempts: 0 });
      expect(JSON.parse(replayed!.meta!)).toEqual(JSON.parse(KEYED));
      // `acme` has one processing (its limit): the replayed job is not claimed beside it.
      expect(await claimIds(b)).toEqual([]);
      await b.jobComplete({
        id: second.id,
        owner: ownerOf(running!),
        result: null,
        resultRetentionSeconds: 60,
      });
      const [again] = await claimDue(b, 10);
      expect(again?.id).toBe(first.id);
      expect(again?.meta).toBe(replayed!.meta);
    });

    it("deadLetterReplay › a rate-limited job (1 start per hour) › replayed, it waits for its key's window", async () => {
      const b = await make();
      const meta = JSON.stringify({
        concurrency: { key: "r" },
        rate: { limit: 1, per: 3_600_000 },
      });
      const job = newJob({ meta });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      expect(c?.id).toBe(job.id);
      await b.jobDeadLetter({
        id: job.id,
        owner: ownerOf(c!),
        error: "bad",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      expect(await b.deadLetterReplay({ id: job.id })).toBe(true);
      expect(JSON.parse((await b.jobGet({ id: job.id }))!.meta!)).toEqual(JSON.parse(meta));
      // Its key started one job in the last hour: the replayed one is not claimed.
      expect(await claimIds(b)).toEqual([]);
    });

    it("deadLetterReplay › a keyed job that checkpointed › the entry keeps every key of its meta; the replay drops the checkpoint markers only", async () => {
      const b = await make();
      const job = newJob({ meta: KEYED });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      expect(
        await b.jobCheckpoint({ id: job.id, owner: ownerOf(c!), checkpoint: '{"page":3}' }),
      ).toBe(true);
      await b.jobDeadLetter({
        id: job.id,
        owner: ownerOf(c!),
        error: "bad",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      const kept = JSON.parse((await b.deadLetterGet({ id: job.id }))!.meta!) as Record<
        string,
        unknown
      >;
      expect(kept).toMatchObject({ concurrency: { key: "acme", limit: 1 }, resume: true });
      expect(kept.checkpoints).toBe(1);
      expect(typeof kept.checkpointAt).toBe("number");
      await b.deadLetterReplay({ id: job.id });
      const back = await b.jobGet({ id: job.id });
      expect(JSON.parse(back!.meta!)).toEqual(JSON.parse(KEYED));
      expect(back?.checkpoint ?? null).toBeNull();
      const [again] = await claimDue(b);
      expect(again?.id).toBe(job.id);
    });

    it("crash loop and queued moves › keyed jobs › the entries keep their meta; replayed, they keep their key's limit", async () => {
      const b = await make();
      const poison = newJob({ meta: KEYED });
      await b.jobEnqueue({ jobs: [poison] });
      const [p] = await b.jobClaim({ workerId: "crashed", queues: null, limit: 1 });
      expect(p?.id).toBe(poison.id);
      const r = await b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(0) });
      expect(r.deadLettered.map((j) => j.id)).toEqual([poison.id]);
      expect(await b.deadLetterGet({ id: poison.id })).toMatchObject({
        reason: "crash_loop",
        meta: KEYED,
      });

      const stranded = newJob({ name: "test.stranded", meta: KEYED });
      await b.jobEnqueue({ jobs: [stranded] });
      expect(
        await b.admin.jobDeadLetterQueued({
          queue: "default",
          name: "test.stranded",
          version: 1,
          dueForSeconds: 0,
          reason: "no_capable_worker",
          error: "no worker",
          limit: 10,
        }),
      ).toEqual([stranded.id]);
      expect(await b.deadLetterGet({ id: stranded.id })).toMatchObject({
        reason: "no_capable_worker",
        meta: KEYED,
      });

      // Both back: `acme`'s limit of 1 lets one of them run at a time.
      await b.deadLetterReplay({ id: poison.id });
      await b.deadLetterReplay({ id: stranded.id });
      expect(await claimIds(b)).toHaveLength(1);
      expect(await claimIds(b)).toEqual([]);
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
