/**
 * Contract area: jobClaim (order, filters, exactly-once) and jobOwnedBy. Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import { type ContractContext, newJob, ownerOf, startClaimer } from "../helpers.js";

/** The jobClaim (order, filters, exactly-once) and jobOwnedBy cases. */
export function claimCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("claim", () => {
    it("jobClaim › a limit and a queue filter › claims only matching jobs, at most the limit", async () => {
      const b = await make();
      await b.jobEnqueue({
        jobs: [
          newJob({ queue: "a" }),
          newJob({ queue: "a" }),
          newJob({ queue: "b" }),
          newJob({ queue: "c" }),
        ],
      });
      expect(await b.jobClaim({ workerId: "w", queues: ["a"], limit: 1 })).toHaveLength(1);
      const rest = await b.jobClaim({ workerId: "w", queues: ["a", "b"], limit: 10 });
      expect(rest.map((j) => j.queue).sort()).toEqual(["a", "b"]);
      const last = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(last.map((j) => j.queue)).toEqual(["c"]);
    });

    it("jobClaim › names given › claims only jobs of those names; the others stay queued, untouched", async () => {
      const b = await make();
      const [known, unknown, other] = await b.jobEnqueue({
        jobs: [
          newJob({ name: "known.job", queue: "a" }),
          newJob({ name: "new.job", queue: "a", priority: -5 }),
          newJob({ name: "known.job", queue: "b" }),
        ],
      });
      const before = await b.jobGet({ id: unknown?.id ?? "" });
      expect(await b.jobClaim({ workerId: "w", queues: null, names: [], limit: 10 })).toEqual([]);
      const one = await b.jobClaim({
        workerId: "w",
        queues: ["a"],
        names: ["known.job"],
        limit: 10,
      });
      expect(one.map((j) => j.id)).toEqual([known?.id]);
      const all = await b.jobClaim({
        workerId: "w",
        queues: null,
        names: ["known.job", "third.job"],
        limit: 10,
      });
      expect(all.map((j) => j.id)).toEqual([other?.id]);
      const after = await b.jobGet({ id: unknown?.id ?? "" });
      expect(after).toEqual(before);
      expect(after).toMatchObject({ status: "queued", attempts: 0, workerId: null });
      // Without names (null or absent), any name.
      const any = await b.jobClaim({ workerId: "w", queues: null, names: null, limit: 10 });
      expect(any.map((j) => j.id)).toEqual([unknown?.id]);
    });

    it("jobClaim › several due jobs › priority first, then due time", async () => {
      const b = await make();
      const now = await b.now();
      const past = (s: number) => new Date(now.getTime() - s * 1000);
      const jobs = [
        newJob({ name: "p5", priority: 5, runAt: past(100) }),
        newJob({ name: "p0_late", priority: 0, runAt: past(10) }),
        newJob({ name: "p0_early", priority: 0, runAt: past(50) }),
        newJob({ name: "p10", priority: 10, runAt: past(500) }),
        newJob({ name: "neg", priority: -1, runAt: past(1) }),
      ];
      await b.jobEnqueue({ jobs });
      const order: string[] = [];
      for (;;) {
        const [next] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
        if (!next) break;
        order.push(next.name);
      }
      expect(order).toEqual(["neg", "p0_early", "p0_late", "p5", "p10"]);
    });

    it("jobClaim › jobs not yet due › claims nothing", async () => {
      const b = await make();
      const now = await b.now();
      await b.jobEnqueue({
        jobs: [
          newJob({ delaySeconds: 3600 }),
          newJob({ runAt: new Date(now.getTime() + 3_600_000) }),
        ],
      });
      expect(await b.jobClaim({ workerId: "w", queues: null, limit: 10 })).toHaveLength(0);
      expect((await b.jobStats()).queued).toBe(2);
    });

    it("jobClaim › concurrent claimers in one process › each job claimed once", async () => {
      const b = await make();
      const jobs = Array.from({ length: 200 }, () => newJob());
      await b.jobEnqueue({ jobs });
      const batches = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const mine: string[] = [];
          for (;;) {
            const got = await b.jobClaim({ workerId: `w${i}`, queues: null, limit: 7 });
            if (got.length === 0) return mine;
            mine.push(...got.map((j) => j.id));
          }
        }),
      );
      const all = batches.flat();
      expect(all).toHaveLength(200);
      expect(new Set(all).size).toBe(200);
    });

    it("jobClaim › concurrent claimers with queue filters › each job once, and each claim fills up", async () => {
      const b = await make();
      const jobs = Array.from({ length: 300 }, (_, i) =>
        newJob({ queue: ["a", "b", "c"][i % 3] as string, priority: i % 5 }),
      );
      await b.jobEnqueue({ jobs });
      const filters = [["a"], ["b"], ["a", "b"], ["c", "a", "c"], ["b", "c"], ["a", "b", "c"]];
      const batches = await Promise.all(
        filters.map(async (queues, i) => {
          const mine: Array<{ id: string; queue: string }> = [];
          for (;;) {
            const got = await b.jobClaim({ workerId: `w${i}`, queues, limit: 9 });
            if (got.length === 0) return mine;
            expect(got.every((j) => queues.includes(j.queue))).toBe(true);
            expect(new Set(got.map((j) => j.id)).size).toBe(got.length);
            mine.push(...got);
          }
        }),
      );
      const all = batches.flat().map((j) => j.id);
      expect(all).toHaveLength(300);
      expect(new Set(all).size).toBe(300);
      // Claimers racing with the same several-queue filter lock only what they claim: together
      // they take every due job, round after round.
      for (let round = 0; round < 20; round++) {
        await b.jobEnqueue({
          jobs: Array.from({ length: 20 }, (_, i) => newJob({ queue: i % 2 === 0 ? "e" : "f" })),
        });
        const [x, y] = await Promise.all([
          b.jobClaim({ workerId: "x", queues: ["e", "f"], limit: 10 }),
          b.jobClaim({ workerId: "y", queues: ["f", "e"], limit: 10 }),
        ]);
        expect(x.length + y.length).toBe(20);
      }
      // Lower priority first, in claim order, and a claim takes as many as it may (9 of 12).
      await b.jobEnqueue({
        jobs: Array.from({ length: 12 }, (_, i) => newJob({ queue: "d", priority: 11 - i })),
      });
      const got = await b.jobClaim({ workerId: "w", queues: ["d", "d"], limit: 9 });
      expect(got.map((j) => j.priority)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it("jobOwnedBy › rows claimed by several workers › lists the owner's processing rows with their tokens", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: [newJob(), newJob(), newJob()] });
      const mine = await b.jobClaim({ workerId: "me", queues: null, limit: 2 });
      await b.jobClaim({ workerId: "other", queues: null, limit: 1 });
      await b.jobComplete({
        id: mine[1]!.id,
        owner: ownerOf(mine[1]!),
        result: null,
        resultRetentionSeconds: 60,
      });
      expect(await b.jobOwnedBy({ workerId: "me" })).toEqual([
        { id: mine[0]!.id, workerId: "me", claimToken: mine[0]!.claimToken },
      ]);
      expect(await b.jobOwnedBy({ workerId: "nobody" })).toEqual([]);
    });

    const share = ctx.target.share;
    if (share) {
      it("jobClaim › several processes on one store › each job exactly once", async () => {
        const b = await make();
        const total = 600;
        const jobs = Array.from({ length: total }, () => newJob());
        for (let i = 0; i < total; i += 200) await b.jobEnqueue({ jobs: jobs.slice(i, i + 200) });
        const { databaseUrl, schema } = share(b);
        const claimers = Array.from({ length: 4 }, (_, i) =>
          startClaimer(databaseUrl, schema, `proc-${i}`),
        );
        await Promise.all(claimers.map((c) => c.ready));
        for (const c of claimers) c.go();
        const outputs = await Promise.all(claimers.map((c) => c.ids));
        const claimed = outputs.flat();
        expect(claimed).toHaveLength(total);
        expect(new Set(claimed).size).toBe(total);
        expect(await b.jobStats()).toMatchObject({ done: total, queued: 0, processing: 0 });
        // More than one process did real work.
        expect(outputs.filter((o) => o.length > 0).length).toBeGreaterThan(1);
      }, 120_000);
    }
  });
}
