/**
 * Contract area: finished jobs leave the live table (docs/backends.md, "Two tables: live jobs and
 * finished jobs"). Everything is asserted in job states through the contract, never by table:
 * a completion is fenced and moves nothing when refused, retention 0 keeps nothing, dedup keys
 * outlive the move for the retention, listings and counts span live and finished jobs, and ids
 * made before time-ordered ids list after the rest. Run on every backend by ../runner.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Backend } from "../../../src/backends/contract/index.js";
import { isSoniqError } from "../../../src/errors.js";
import { newJobId } from "../../../src/jobs/job-id.js";
import { type ContractContext, claimDue, newJob, ownerOf } from "../helpers.js";

/** A job with a time-ordered id, as every job this version makes. */
const v7Job = (overrides: Parameters<typeof newJob>[0] = {}) =>
  newJob({ id: newJobId(), ...overrides });

/** Enqueues `job`, claims it, completes it with `retention` seconds; returns its id. */
async function finishOne(b: Backend, retention: number, overrides = {}): Promise<string> {
  const job = v7Job(overrides);
  await b.jobEnqueue({ jobs: [job] });
  const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
  if (!c) throw new Error("nothing claimed");
  expect(
    await b.jobComplete({
      id: c.id,
      owner: ownerOf(c),
      result: '{"ok":1}',
      resultRetentionSeconds: retention,
    }),
  ).toBe(true);
  return c.id;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The finished-jobs move cases. */
export function finishedMoveCases({ make }: ContractContext): void {
  describe("finished jobs leave the live table", () => {
    it("completion › refused fence › moves nothing; the owner's completion then moves the job, once", async () => {
      const b = await make();
      const job = v7Job();
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      if (!c) throw new Error("nothing claimed");
      const stranger = { workerId: "w", claimToken: randomUUID() };
      expect(
        await b.jobComplete({
          id: c.id,
          owner: stranger,
          result: null,
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      expect(
        await b.jobCompleteMany({
          items: [
            { id: c.id, owner: { workerId: "other", claimToken: c.claimToken }, result: null },
          ],
          resultRetentionSeconds: 60,
        }),
      ).toEqual([false]);
      expect((await b.jobGet({ id: c.id }))?.status).toBe("processing");
      expect((await b.jobStats()).processing).toBe(1);

      expect(
        await b.jobCompleteMany({
          items: [{ id: c.id, owner: ownerOf(c), result: '"r"' }],
          resultRetentionSeconds: 60,
        }),
      ).toEqual([true]);
      const done = await b.jobGet({ id: c.id });
      expect(done).toMatchObject({ status: "done", attempts: 1, result: '"r"' });
      expect(done?.finishedAt).toBeInstanceOf(Date);
      // The same claim cannot finish it twice.
      expect(
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      expect(await b.jobStats()).toMatchObject({ total: 1, done: 1, processing: 0, queued: 0 });
    });

    it("completion › a crash between claim and completion › recovery requeues; the old owner's late completion moves nothing", async () => {
      const b = await make();
      const job = v7Job();
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await b.jobClaim({ workerId: "gone-worker", queues: null, limit: 1 });
      if (!c) throw new Error("nothing claimed");
      // Its worker never registered: not live, so recovery takes the row back.
      const recovered = await b.jobRecoverStale({
        staleAfterSeconds: 60,
        crashLoop: { maxInterruptions: 5, reason: "crash_loop", message: "crash loop" },
      });
      expect(recovered.requeued.map((r) => r.id)).toEqual([c.id]);
      expect(
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: 60,
        }),
      ).toBe(false);
      expect((await b.jobGet({ id: c.id }))?.status).toBe("queued");
      const [again] = await claimDue(b);
      expect(again?.id).toBe(c.id);
    });

    it("retention 0 › completion and cancel keep nothing, and free the dedup key at once", async () => {
      const b = await make();
      const id = await finishOne(b, 0, { dedupKey: "k0" });
      expect(await b.jobGet({ id })).toBeNull();
      expect(await b.admin.jobDetail({ id })).toBeNull();
      expect(await b.jobStats()).toMatchObject({ total: 0, done: 0 });
      const again = v7Job({ dedupKey: "k0" });
      expect((await b.jobEnqueue({ jobs: [again] }))[0]).toEqual({ id: again.id, inserted: true });
      expect(await b.jobCancel({ id: again.id, retentionSeconds: 0 })).toBe(true);
      expect(await b.jobGet({ id: again.id })).toBeNull();
      const third = v7Job({ dedupKey: "k0" });
      expect((await b.jobEnqueue({ jobs: [third] }))[0]?.inserted).toBe(true);
      // Many at once, mixed: each item's own retention.
      await b.jobEnqueue({ jobs: [v7Job(), v7Job()] });
      const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 3 });
      const items = claimed.map((c, i) => ({
        id: c.id,
        owner: ownerOf(c),
        result: null,
        resultRetentionSeconds: i === 0 ? 0 : 60,
      }));
      expect(await b.jobCompleteMany({ items, resultRetentionSeconds: 0 })).toEqual([
        true,
        true,
        true,
      ]);
      expect(await b.jobGet({ id: items[0]?.id ?? "" })).toBeNull();
      expect((await b.jobGet({ id: items[1]?.id ?? "" }))?.status).toBe("done");
      expect((await b.jobStats()).done).toBe(2);
    });

    it("dedup › a done job holds its key until its retention passes, then a new job takes it (before or after the prune)", async () => {
      const b = await make();
      const first = await finishOne(b, 3600, { dedupKey: "kept" });
      const dup = v7Job({ dedupKey: "kept" });
      expect((await b.jobEnqueue({ jobs: [dup] }))[0]).toEqual({ id: first, inserted: false });

      const short = await finishOne(b, 0.001, { dedupKey: "short" });
      await sleep(20);
      // Expired but not pruned yet: the key is free; the old job is still readable.
      const taker = v7Job({ dedupKey: "short" });
      expect((await b.jobEnqueue({ jobs: [taker] }))[0]).toEqual({ id: taker.id, inserted: true });
      expect((await b.jobGet({ id: short }))?.status).toBe("done");
      expect(await b.jobPruneFinished({})).toBe(1);
      expect(await b.jobGet({ id: short })).toBeNull();
      // The prune did not free the key the new job holds.
      const late = v7Job({ dedupKey: "short" });
      expect((await b.jobEnqueue({ jobs: [late] }))[0]).toEqual({ id: taker.id, inserted: false });
    });

    it("dedup › a cancelled job holds its key for its retention too", async () => {
      const b = await make();
      const job = v7Job({ dedupKey: "c1", delaySeconds: 3600 });
      await b.jobEnqueue({ jobs: [job] });
      expect(await b.jobCancel({ id: job.id, retentionSeconds: 3600 })).toBe(true);
      expect((await b.jobGet({ id: job.id }))?.status).toBe("cancelled");
      const dup = v7Job({ dedupKey: "c1" });
      expect((await b.jobEnqueue({ jobs: [dup] }))[0]).toEqual({ id: job.id, inserted: false });
    });

    it("dedup › dead-lettering releases the key; replay takes it again, or fails while another job holds it", async () => {
      const b = await make();
      const job = v7Job({ dedupKey: "dl" });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await claimDue(b);
      if (!c) throw new Error("nothing claimed");
      expect(
        await b.jobDeadLetter({
          id: c.id,
          owner: ownerOf(c),
          error: "x",
          reason: "r",
          countAttempt: true,
        }),
      ).toBe(true);
      const other = v7Job({ dedupKey: "dl" });
      expect((await b.jobEnqueue({ jobs: [other] }))[0]?.inserted).toBe(true);
      const clash = await b.deadLetterReplay({ id: job.id }).catch((e: unknown) => e);
      expect(isSoniqError(clash, "DEDUP_CONFLICT")).toBe(true);
      expect(await b.deadLetterGet({ id: job.id })).not.toBeNull();
      expect(await b.admin.jobDelete({ id: other.id })).toBe("done");
      expect(await b.deadLetterReplay({ id: job.id })).toBe(true);
      expect((await b.jobGet({ id: job.id }))?.status).toBe("queued");
      const dup = v7Job({ dedupKey: "dl" });
      expect((await b.jobEnqueue({ jobs: [dup] }))[0]).toEqual({ id: job.id, inserted: false });
    });

    it("operations › retry-now brings a finished job back, holding its key; delete removes a finished job and frees its key", async () => {
      const b = await make();
      const id = await finishOne(b, 3600, { dedupKey: "rn" });
      expect(await b.admin.jobRetryNow({ id })).toBe("done");
      const row = await b.jobGet({ id });
      expect(row).toMatchObject({ status: "queued", result: null, finishedAt: null, attempts: 1 });
      const dup = v7Job({ dedupKey: "rn" });
      expect((await b.jobEnqueue({ jobs: [dup] }))[0]).toEqual({ id, inserted: false });
      const [c] = await claimDue(b);
      expect(c?.id).toBe(id);

      const gone = await finishOne(b, 3600, { dedupKey: "del" });
      expect(await b.admin.jobDelete({ id: gone })).toBe("done");
      expect(await b.jobGet({ id: gone })).toBeNull();
      const taker = v7Job({ dedupKey: "del" });
      expect((await b.jobEnqueue({ jobs: [taker] }))[0]?.inserted).toBe(true);
    });

    it("operations › retry-now of a finished job whose key another job took since › DEDUP_CONFLICT, nothing changes", async () => {
      const b = await make();
      const first = await finishOne(b, 0.05, { dedupKey: "taken" });
      await sleep(100);
      const taker = v7Job({ dedupKey: "taken", delaySeconds: 3600 });
      expect((await b.jobEnqueue({ jobs: [taker] }))[0]?.inserted).toBe(true);
      const err = await b.admin.jobRetryNow({ id: first }).catch((e: unknown) => e);
      expect(isSoniqError(err, "DEDUP_CONFLICT")).toBe(true);
      expect((await b.jobGet({ id: first }))?.status).toBe("done");
      expect(await b.jobStats()).toMatchObject({ queued: 1, done: 1 });
      // Once the key is free again (the taker is deleted), the retry takes it.
      expect(await b.admin.jobDelete({ id: taker.id })).toBe("done");
      expect(await b.admin.jobRetryNow({ id: first })).toBe("done");
      const dup = v7Job({ dedupKey: "taken" });
      expect((await b.jobEnqueue({ jobs: [dup] }))[0]).toEqual({ id: first, inserted: false });
    });

    it("listing › live and finished jobs in one order, newest first, across pages; counts and status filters span both", async () => {
      const b = await make();
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) {
        const job = v7Job({ delaySeconds: i === 4 ? 3600 : 0 });
        ids.push(job.id);
        await b.jobEnqueue({ jobs: [job] });
      }
      // Finish the first two (done, then cancelled), one processing, two queued.
      const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 3 });
      expect(claimed.map((c) => c.id)).toEqual(ids.slice(0, 3));
      const [c0, c1] = claimed;
      if (!c0 || !c1) throw new Error("nothing claimed");
      await b.jobComplete({
        id: c0.id,
        owner: ownerOf(c0),
        result: null,
        resultRetentionSeconds: 60,
      });
      await b.jobNack({ id: c1.id, owner: ownerOf(c1) });
      expect(await b.jobCancel({ id: c1.id, retentionSeconds: 60 })).toBe(true);

      const newestFirst = [...ids].reverse();
      const all = await b.admin.jobList({ filter: {}, limit: 100 });
      expect(all.items.map((j) => j.id)).toEqual(newestFirst);
      expect(all.nextCursor).toBeNull();
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await b.admin.jobList({ filter: {}, limit: 2, cursor });
        paged.push(...page.items.map((j) => j.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(paged).toEqual(newestFirst);

      const of = async (status: ("queued" | "scheduled" | "processing" | "done" | "cancelled")[]) =>
        (await b.admin.jobList({ filter: { status }, limit: 100 })).items.map((j) => j.id);
      expect(await of(["done"])).toEqual([ids[0]]);
      // ids[4] waits an hour: listed as scheduled, not queued (due now).
      expect(await of(["cancelled", "queued"])).toEqual([ids[3], ids[1]]);
      expect(await of(["cancelled", "queued", "scheduled"])).toEqual([ids[4], ids[3], ids[1]]);
      expect(await of(["processing"])).toEqual([ids[2]]);
      expect(await b.admin.jobCount({ filter: {} })).toBe(5);
      expect(await b.admin.jobCount({ filter: { status: ["done", "cancelled"] } })).toBe(2);
      const counts = await b.admin.jobCountByQueueStatus({});
      expect(counts.filter((c) => c.queue === "default").map((c) => [c.status, c.count])).toEqual([
        ["cancelled", 1],
        ["done", 1],
        ["processing", 1],
        ["queued", 1],
        ["scheduled", 1],
      ]);
      const [metrics] = await b.jobQueueMetrics();
      expect(metrics).toMatchObject({
        queue: "default",
        queued: 2,
        processing: 1,
        done: 1,
        cancelled: 1,
      });
    });

    it("counts › stats, queue metrics and counts by queue × status equal the rows kept, through every way a finished job comes and goes", async () => {
      const b = await make();
      /**
       * The counters' answers against the rows themselves. A count filtered by status and queue
       * only is answered by the counters too; a creation bound that every job passes makes it
       * count the rows.
       */
      const byRows = { createdAfter: new Date(0) };
      const agree = async (step: string) => {
        const stats = await b.jobStats();
        for (const status of ["done", "cancelled"] as const) {
          const rows = await b.admin.jobCount({ filter: { status: [status], ...byRows } });
          expect(stats[status], `${step}: ${status}`).toBe(rows);
          expect(await b.admin.jobCount({ filter: { status: [status] } }), `${step}: count`).toBe(
            rows,
          );
          const perQueue = await b.admin.jobCountByQueueStatus({});
          for (const queue of ["a", "b"]) {
            const cell = perQueue.find((c) => c.queue === queue && c.status === status);
            const inQueue = await b.admin.jobCount({
              filter: { status: [status], queue: [queue], ...byRows },
            });
            expect(cell?.count ?? 0, `${step}: ${queue} ${status}`).toBe(inQueue);
            expect(
              await b.admin.jobCount({ filter: { status: [status], queue: [queue] } }),
              `${step}: count ${queue} ${status}`,
            ).toBe(inQueue);
            const metrics = (await b.jobQueueMetrics()).find((m) => m.queue === queue);
            expect(metrics?.[status] ?? 0, `${step}: metrics ${queue} ${status}`).toBe(inQueue);
          }
        }
      };
      const done: string[] = [];
      for (const [queue, retention] of [
        ["a", 60],
        ["a", 0],
        ["b", 60],
        ["b", 0.001],
        ["a", 60],
      ] as const) {
        done.push(await finishOne(b, retention, { queue }));
      }
      await agree("completions");
      const cancelled = v7Job({ queue: "b", delaySeconds: 3600 });
      const dropped = v7Job({ queue: "b", delaySeconds: 3600 });
      await b.jobEnqueue({ jobs: [cancelled, dropped] });
      await b.jobCancel({ id: cancelled.id, retentionSeconds: 60 });
      await b.jobCancel({ id: dropped.id, retentionSeconds: 0 });
      await agree("cancels");
      expect(await b.admin.jobDelete({ id: done[0] ?? "" })).toBe("done");
      await agree("delete");
      expect(await b.admin.jobRetryNow({ id: cancelled.id })).toBe("done");
      await agree("retry now");
      await sleep(20);
      expect(await b.jobPruneFinished({})).toBe(1);
      await agree("prune");
      expect(await b.jobStats()).toMatchObject({ done: 2, cancelled: 0, queued: 1 });
      // Counts over live and finished states at once, by the counters and by the rows.
      const filters: Array<{
        status?: Array<"queued" | "processing" | "done" | "cancelled">;
        queue?: string[];
      }> = [
        {},
        { queue: ["a", "b"] },
        { status: ["queued", "done"] },
        { status: [] },
        { queue: ["none"] },
      ];
      for (const filter of filters) {
        expect(await b.admin.jobCount({ filter }), JSON.stringify(filter)).toBe(
          await b.admin.jobCount({ filter: { ...filter, ...byRows } }),
        );
      }
    });

    it("listing › a filter that matches rarely, over more history than one page reads: every match once, newest first, across pages", async () => {
      const b = await make();
      const oldRare = v7Job({ name: "rare" });
      await b.jobEnqueue({ jobs: [oldRare] });
      await sleep(3); // the next ids are later
      for (let made = 0; made < 6000; made += 1000) {
        await b.jobEnqueue({ jobs: Array.from({ length: 1000 }, () => v7Job({ name: "common" })) });
      }
      for (;;) {
        const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 1000 });
        if (claimed.length === 0) break;
        await b.jobCompleteMany({
          items: claimed.map((c) => ({ id: c.id, owner: ownerOf(c), result: null })),
          resultRetentionSeconds: 3600,
        });
      }
      await sleep(3);
      const newRare = v7Job({ name: "rare", delaySeconds: 3600 });
      await b.jobEnqueue({ jobs: [newRare] });

      const found: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await b.admin.jobList({ filter: { name: ["rare"] }, limit: 10, cursor });
        found.push(...page.items.map((j) => j.id));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== null && pages < 50);
      expect(found).toEqual([newRare.id, oldRare.id]);
      expect(cursor).toBeNull();
      expect(await b.admin.jobCount({ filter: { name: ["rare"] } })).toBe(2);
    });

    it("listing › ids made before time-ordered ids list after every other job, by creation time, across pages", async () => {
      const b = await make();
      const legacy: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const job = newJob({ id: randomUUID() }); // version 4, as before time-ordered ids
        legacy.push(job.id);
        await b.jobEnqueue({ jobs: [job] });
        await sleep(5); // distinct creation times on every engine
      }
      const fresh: string[] = [];
      for (let i = 0; i < 2; i += 1) {
        const job = v7Job();
        fresh.push(job.id);
        await b.jobEnqueue({ jobs: [job] });
      }
      // One legacy job finished: it lists among the legacy rows, by its creation time.
      const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      expect(claimed[0]?.id).toBe(legacy[0]);
      const c = claimed[0];
      if (!c) throw new Error("nothing claimed");
      await b.jobComplete({
        id: c.id,
        owner: ownerOf(c),
        result: null,
        resultRetentionSeconds: 60,
      });

      const expected = [...fresh.reverse(), ...legacy.reverse()];
      const paged: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await b.admin.jobList({ filter: {}, limit: 2, cursor });
        paged.push(...page.items.map((j) => j.id));
        cursor = page.nextCursor;
      } while (cursor !== null);
      expect(paged).toEqual(expected);
      expect((await b.admin.jobList({ filter: {}, limit: 10 })).items.map((j) => j.id)).toEqual(
        expected,
      );
    });
  });
}
