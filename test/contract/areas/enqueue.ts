/**
 * Contract area: jobEnqueue (dedup, timing) and jobCancel. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { type ContractContext, claimDue, newJob, ownerOf } from "../helpers.js";

/** The jobEnqueue (dedup, timing) and jobCancel cases. */
export function enqueueCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("enqueue", () => {
    it("jobEnqueue › then jobClaim and jobComplete › rows, claimed fields and stats as the contract states", async () => {
      const b = await make();
      const args = JSON.stringify({ text: "héllo ✓ 🎵", n: 1.5, list: [1, null, { a: "b" }] });
      const job = newJob({ args, priority: 3, maxAttempts: 7, queue: "mail" });
      const [res] = await b.jobEnqueue({ jobs: [job] });
      expect(res).toEqual({ id: job.id, inserted: true });

      const queued = await b.jobGet({ id: job.id });
      expect(queued).toMatchObject({
        id: job.id,
        name: "test.job",
        queue: "mail",
        args,
        status: "queued",
        priority: 3,
        attempts: 0,
        maxAttempts: 7,
        interruptions: 0,
        workerId: null,
        claimToken: null,
        lastError: null,
        result: null,
      });
      expect(queued?.scheduledAt).toBeInstanceOf(Date);

      const claimed = await b.jobClaim({ workerId: "w1", queues: null, limit: 10 });
      expect(claimed).toHaveLength(1);
      const c = claimed[0]!;
      expect(c).toMatchObject({ id: job.id, workerId: "w1", attempts: 0, args });
      expect(typeof c.claimToken).toBe("string");
      // A claim returns the same fields on every backend (ClaimedJob), not the whole row.
      expect(Object.keys(c).sort()).toEqual(
        [
          "id",
          "name",
          "queue",
          "args",
          "priority",
          "attempts",
          "maxAttempts",
          "interruptions",
          "unchargedRecoveries",
          "scheduledAt",
          "createdAt",
          "workerId",
          "claimToken",
          "meta",
          "traceContext",
          "version",
        ].sort(),
      );
      expect(c.scheduledAt).toBeInstanceOf(Date);
      expect(c.createdAt).toBeInstanceOf(Date);
      const processing = await b.jobGet({ id: job.id });
      expect(processing).toMatchObject({
        status: "processing",
        workerId: "w1",
        claimToken: c.claimToken,
      });
      expect(processing?.startedAt).toBeInstanceOf(Date);
      expect(await b.jobClaim({ workerId: "w2", queues: null, limit: 10 })).toHaveLength(0);

      const result = JSON.stringify({ ok: true, s: "✓" });
      expect(
        await b.jobComplete({
          id: job.id,
          owner: ownerOf(c),
          result,
          resultRetentionSeconds: 3600,
        }),
      ).toBe(true);
      const done = await b.jobGet({ id: job.id });
      expect(done).toMatchObject({ status: "done", attempts: 1, result });
      expect(done?.finishedAt).toBeInstanceOf(Date);
      expect(done!.resultExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3000 * 1000);
      const stats = await b.jobStats();
      expect(stats).toEqual({
        total: 1,
        queued: 0,
        processing: 0,
        done: 1,
        deadLetter: 0,
        cancelled: 0,
      });
    });

    it("jobEnqueue › dedup key held or repeated in the batch › returns the holder's id, inserted false", async () => {
      const b = await make();
      const first = newJob({ dedupKey: "same" });
      expect(await b.jobEnqueue({ jobs: [first] })).toEqual([{ id: first.id, inserted: true }]);
      const dup = newJob({ dedupKey: "same" });
      const other = newJob({ dedupKey: "other" });
      const again = newJob({ dedupKey: "other" });
      const plain = newJob();
      const res = await b.jobEnqueue({ jobs: [dup, other, again, plain] });
      expect(res).toEqual([
        { id: first.id, inserted: false },
        { id: other.id, inserted: true },
        { id: other.id, inserted: false },
        { id: plain.id, inserted: true },
      ]);
      expect((await b.jobStats()).total).toBe(3);
      // A finished job still holds its key until it is pruned.
      const [c] = await claimDue(b);
      const key = (await b.jobGet({ id: c!.id }))?.dedupKey ?? null;
      await b.jobComplete({
        id: c!.id,
        owner: ownerOf(c!),
        result: null,
        resultRetentionSeconds: 3600,
      });
      const later = newJob({ dedupKey: key });
      if (key !== null)
        expect((await b.jobEnqueue({ jobs: [later] }))[0]).toEqual({ id: c!.id, inserted: false });
    });

    it("jobCancel › queued, processing or already cancelled › cancels only the queued job", async () => {
      const b = await make();
      const a = newJob();
      const p = newJob({ delaySeconds: 0 });
      await b.jobEnqueue({ jobs: [a] });
      const [c] = await claimDue(b);
      await b.jobEnqueue({ jobs: [p] });
      expect(await b.jobCancel({ id: c!.id, retentionSeconds: 60 })).toBe(false);
      expect(await b.jobCancel({ id: p.id, retentionSeconds: 60 })).toBe(true);
      expect(await b.jobGet({ id: p.id })).toMatchObject({ status: "cancelled" });
      expect(await b.jobCancel({ id: p.id, retentionSeconds: 60 })).toBe(false);
      expect(await claimDue(b)).toHaveLength(0);
      expect(await b.jobStats()).toMatchObject({ processing: 1, cancelled: 1, total: 2 });
    });
  });
}
