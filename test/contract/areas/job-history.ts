/**
 * Contract area: the per-minute history read from the job counters (`AdminStore.queueHistory`;
 * docs/backends.md, "Counting without scanning"). A failed attempt's requeue, every move to the
 * dead-letter queue, a completion and a cancel each add exactly one to their queue's minute, in
 * the same write (a refused fence counts nothing); counts that sum kinds (stats, queue metrics)
 * are unchanged by the new kinds; a fold keeps the minutes within the window. Run on every
 * backend by ../runner.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Backend, HistoryPoint, QueueHistory } from "../../../src/backends/contract/index.js";
import { crashLoopRule } from "../../../src/maintenance/policy.js";
import { type ContractContext, newJob, ownerOf } from "../helpers.js";

const DAY = 86_400;
type Counted = Omit<HistoryPoint, "minute" | "waitAvgSeconds">;

/** The counts of `h` summed over its minutes. */
function totals(h: QueueHistory): Counted {
  const t = { done: 0, failed: 0, dead: 0, cancelled: 0 };
  for (const p of h.points) {
    t.done += p.done;
    t.failed += p.failed;
    t.dead += p.dead;
    t.cancelled += p.cancelled;
  }
  return t;
}

const zero: Counted = { done: 0, failed: 0, dead: 0, cancelled: 0 };

/** The start of `at`'s minute, in ms. */
const minuteOf = (at: Date) => Math.floor(at.getTime() / 60_000) * 60_000;

/**
 * Runs `write` and checks that it added exactly `expected` to queue `queue`'s history, all in one
 * minute between the database's clock before and after the write (`expected` all zero: nothing
 * changed, and null is returned).
 */
async function addsOne(
  b: Backend,
  queue: string,
  expected: Partial<Counted>,
  write: () => Promise<unknown>,
): Promise<HistoryPoint | null> {
  const before = await b.admin.queueHistory({ queue, windowSeconds: DAY });
  const t0 = await b.now();
  await write();
  const t1 = await b.now();
  const after = await b.admin.queueHistory({ queue, windowSeconds: DAY });
  const was = totals(before);
  const now = totals(after);
  const delta = {
    done: now.done - was.done,
    failed: now.failed - was.failed,
    dead: now.dead - was.dead,
    cancelled: now.cancelled - was.cancelled,
  };
  expect(delta).toEqual({ ...zero, ...expected });
  if (Object.values(expected).every((n) => n === 0)) {
    expect(after.points).toEqual(before.points);
    return null;
  }
  const changed = after.points.filter((p) => {
    const old = before.points.find((q) => q.minute.getTime() === p.minute.getTime());
    return !old || JSON.stringify(old) !== JSON.stringify(p);
  });
  expect(changed).toHaveLength(1);
  const point = changed[0] as HistoryPoint;
  expect([minuteOf(t0), minuteOf(t1)]).toContain(point.minute.getTime());
  return point;
}

/** Enqueues one job on `queue` and claims it as worker `workerId`. */
async function claimOne(b: Backend, queue: string, workerId = "w", maxAttempts = 3) {
  await b.jobEnqueue({ jobs: [newJob({ queue, maxAttempts })] });
  const [c] = await b.jobClaim({ workerId, queues: [queue], limit: 1 });
  if (!c) throw new Error("nothing claimed");
  return c;
}

/** The queue history cases. */
export function jobHistoryCases({ make }: ContractContext): void {
  describe("queue history from the counters", () => {
    it("queueHistory › empty store › no points, a window of 24 h ending now", async () => {
      const b = await make();
      const h = await b.admin.queueHistory({ windowSeconds: DAY });
      expect(h.points).toEqual([]);
      expect(h.queue).toBeNull();
      const span = h.until.getTime() - h.since.getTime();
      expect(span).toBeGreaterThanOrEqual(DAY * 1000);
      expect(span).toBeLessThan((DAY + 60) * 1000);
      expect(h.since.getTime() % 60_000).toBe(0);
    });

    it("jobRetry › a failed attempt › one `failed` in its queue's minute; a refused fence counts nothing", async () => {
      const b = await make();
      const c = await claimOne(b, "mail");
      const stranger = { workerId: "w", claimToken: randomUUID() };
      await addsOne(b, "mail", {}, async () => {
        expect(await b.jobRetry({ id: c.id, owner: stranger, error: "x", delaySeconds: 60 })).toBe(
          false,
        );
      });
      expect(totals(await b.admin.queueHistory({ queue: "mail", windowSeconds: DAY }))).toEqual(
        zero,
      );
      const point = await addsOne(b, "mail", { failed: 1 }, async () => {
        expect(
          await b.jobRetry({ id: c.id, owner: ownerOf(c), error: "boom", delaySeconds: 0 }),
        ).toBe(true);
      });
      expect(point?.waitAvgSeconds).toBeNull();
      // Another queue saw nothing; every queue summed sees it.
      expect(totals(await b.admin.queueHistory({ queue: "pdf", windowSeconds: DAY }))).toEqual(
        zero,
      );
      expect(totals(await b.admin.queueHistory({ windowSeconds: DAY }))).toEqual({
        ...zero,
        failed: 1,
      });
    });

    it("jobDeadLetter › attempts exhausted, with or without an attempt counted › one `dead` each, not `failed`", async () => {
      const b = await make();
      const c = await claimOne(b, "pdf", "w", 1);
      await addsOne(b, "pdf", { dead: 1 }, async () => {
        expect(
          await b.jobDeadLetter({
            id: c.id,
            owner: ownerOf(c),
            error: "no",
            reason: "max_attempts_exceeded",
            countAttempt: true,
          }),
        ).toBe(true);
      });
      const d = await claimOne(b, "pdf");
      await addsOne(b, "pdf", { dead: 1 }, async () => {
        expect(
          await b.jobDeadLetter({
            id: d.id,
            owner: ownerOf(d),
            error: "unknown job",
            reason: "unknown_job",
            countAttempt: false,
          }),
        ).toBe(true);
      });
      // A late write of the same claim moves and counts nothing.
      expect(
        await b.jobDeadLetter({
          id: d.id,
          owner: ownerOf(d),
          error: "again",
          reason: "unknown_job",
          countAttempt: false,
        }),
      ).toBe(false);
      expect(totals(await b.admin.queueHistory({ queue: "pdf", windowSeconds: DAY }))).toEqual({
        ...zero,
        dead: 2,
      });
    });

    it("jobRecoverStale › a crash loop past its bound › one `dead`; a plain requeue counts nothing", async () => {
      const b = await make();
      const c = await claimOne(b, "video", "w-gone");
      await addsOne(b, "video", { dead: 1 }, async () => {
        const r = await b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(0) });
        expect(r.deadLettered.map((j) => j.id)).toEqual([c.id]);
      });
      const d = await claimOne(b, "video", "w-gone");
      await addsOne(b, "video", {}, async () => {
        const r = await b.jobRecoverStale({ staleAfterSeconds: 30, crashLoop: crashLoopRule(3) });
        expect(r.requeued.map((j) => j.id)).toEqual([d.id]);
      });
      expect(totals(await b.admin.queueHistory({ queue: "video", windowSeconds: DAY }))).toEqual({
        ...zero,
        dead: 1,
      });
    });

    it("jobComplete and jobCancel › one `done` with its wait, one `cancelled`; stats and queue metrics do not count failures as finished", async () => {
      const b = await make();
      const now = await b.now();
      // Due 30 s ago: its wait from due to start is about 30 s.
      await b.jobEnqueue({
        jobs: [newJob({ queue: "mail", runAt: new Date(now.getTime() - 30_000) })],
      });
      const [c] = await b.jobClaim({ workerId: "w", queues: ["mail"], limit: 1 });
      if (!c) throw new Error("nothing claimed");
      const point = await addsOne(b, "mail", { done: 1 }, () =>
        b.jobComplete({ id: c.id, owner: ownerOf(c), result: null, resultRetentionSeconds: 60 }),
      );
      expect(point?.waitAvgSeconds).toBeGreaterThanOrEqual(29);
      expect(point?.waitAvgSeconds).toBeLessThan(60);
      const queued = newJob({ queue: "mail", delaySeconds: 3600 });
      await b.jobEnqueue({ jobs: [queued] });
      await addsOne(b, "mail", { cancelled: 1 }, () =>
        b.jobCancel({ id: queued.id, retentionSeconds: 60 }),
      );
      const f = await claimOne(b, "mail");
      await b.jobRetry({ id: f.id, owner: ownerOf(f), error: "x", delaySeconds: 0 });
      const g = await claimOne(b, "mail");
      await b.jobDeadLetter({
        id: g.id,
        owner: ownerOf(g),
        error: "x",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      const stats = await b.jobStats();
      expect(stats).toMatchObject({ done: 1, cancelled: 1, deadLetter: 1, queued: 1 });
      const [mail] = await b.jobQueueMetrics();
      expect(mail).toMatchObject({ queue: "mail", done: 1, cancelled: 1, deadLetter: 1 });
      expect((await b.admin.queueList({})).map((q) => q.name)).toEqual(["mail"]);
    });

    it("queueHistory › a prune and its fold › the minutes of the window are unchanged", async () => {
      const b = await make();
      const c = await claimOne(b, "a");
      await b.jobComplete({ id: c.id, owner: ownerOf(c), result: null, resultRetentionSeconds: 0 });
      const d = await claimOne(b, "b");
      await b.jobRetry({ id: d.id, owner: ownerOf(d), error: "x", delaySeconds: 3600 });
      const before = await b.admin.queueHistory({ windowSeconds: DAY });
      await b.jobPruneFinished({});
      const after = await b.admin.queueHistory({ windowSeconds: DAY });
      expect(after.points).toEqual(before.points);
      expect(totals(after)).toEqual({ ...zero, done: 1, failed: 1 });
    });

    it("queueHistory › a short window › only the minutes since its start", async () => {
      const b = await make();
      const c = await claimOne(b, "a");
      await b.jobRetry({ id: c.id, owner: ownerOf(c), error: "x", delaySeconds: 3600 });
      const h = await b.admin.queueHistory({ queue: "a", windowSeconds: 60 });
      expect(h.queue).toBe("a");
      expect(h.points.every((p) => p.minute.getTime() >= h.since.getTime())).toBe(true);
      expect(totals(h).failed).toBe(1);
    });
  });
}
