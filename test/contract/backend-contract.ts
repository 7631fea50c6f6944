/**
 * The shared backend contract suite: the same cases run against memory, a SQLite file and
 * PostgreSQL (see memory.test.ts, sqlite.test.ts, postgres.test.ts).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Backend, NewJob, Owner } from "../../src/backends/backend.js";
import { isSoniqError } from "../../src/errors.js";
import { crashLoopMessage, crashLoopRule } from "../../src/maintenance/policy.js";

/** How a test file hands the suite a fresh, isolated backend. */
export interface ContractTarget {
  label: string;
  /** A fresh store (own file / schema), already set up. */
  make(): Promise<Backend>;
  /** For multi-process cases: the createBackend options that reach the same store as `backend`. */
  share?(backend: Backend): { databaseUrl: string; schema: string };
  /** Clean-up after the whole file. */
  cleanup?(): Promise<void>;
}

export function newJob(overrides: Partial<NewJob> = {}): NewJob {
  return {
    id: randomUUID(),
    name: "test.job",
    queue: "default",
    args: "{}",
    priority: 0,
    maxAttempts: 3,
    runAt: null,
    delaySeconds: 0,
    dedupKey: null,
    ...overrides,
  };
}

function ownerOf(job: { workerId: string; claimToken: string }): Owner {
  return { workerId: job.workerId, claimToken: job.claimToken };
}

const claimerScript = fileURLToPath(new URL("./claimer-process.ts", import.meta.url));

export function runBackendContract(target: ContractTarget): void {
  describe(`backend contract: ${target.label}`, () => {
    const opened: Backend[] = [];
    const make = async () => {
      const backend = await target.make();
      opened.push(backend);
      return backend;
    };
    afterAll(async () => {
      for (const backend of opened) await backend.close().catch(() => undefined);
      await target.cleanup?.();
    });

    it("setup is idempotent", async () => {
      const b = await make();
      await b.setup();
      await b.setup();
      expect((await b.stats()).total).toBe(0);
    });

    it("enqueue → claim → complete records the outcome", async () => {
      const b = await make();
      const args = JSON.stringify({ text: "héllo ✓ 🎵", n: 1.5, list: [1, null, { a: "b" }] });
      const job = newJob({ args, priority: 3, maxAttempts: 7, queue: "mail" });
      const [res] = await b.enqueue([job]);
      expect(res).toEqual({ id: job.id, inserted: true });

      const queued = await b.getJob(job.id);
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

      const claimed = await b.claim({ workerId: "w1", queues: null, limit: 10 });
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
        ].sort(),
      );
      expect(c.scheduledAt).toBeInstanceOf(Date);
      expect(c.createdAt).toBeInstanceOf(Date);
      const processing = await b.getJob(job.id);
      expect(processing).toMatchObject({
        status: "processing",
        workerId: "w1",
        claimToken: c.claimToken,
      });
      expect(processing?.startedAt).toBeInstanceOf(Date);
      expect(await b.claim({ workerId: "w2", queues: null, limit: 10 })).toHaveLength(0);

      const result = JSON.stringify({ ok: true, s: "✓" });
      expect(await b.complete(job.id, ownerOf(c), result, 3600)).toBe(true);
      const done = await b.getJob(job.id);
      expect(done).toMatchObject({ status: "done", attempts: 1, result });
      expect(done?.finishedAt).toBeInstanceOf(Date);
      expect(done!.resultExpiresAt!.getTime()).toBeGreaterThan(Date.now() + 3000 * 1000);
      const stats = await b.stats();
      expect(stats).toEqual({
        total: 1,
        queued: 0,
        processing: 0,
        done: 1,
        dead_letter: 0,
        cancelled: 0,
      });
    });

    it("completes many jobs in one write, each fenced on its own", async () => {
      const b = await make();
      await b.enqueue([newJob(), newJob(), newJob()]);
      const [x, y, z] = await b.claim({ workerId: "w", queues: null, limit: 3 });
      const res = await b.completeMany(
        [
          { id: x!.id, owner: ownerOf(x!), result: '{"n":1}' },
          { id: y!.id, owner: { workerId: "w", claimToken: randomUUID() }, result: null },
          { id: z!.id, owner: ownerOf(z!), result: null },
          { id: randomUUID(), owner: ownerOf(z!), result: null },
        ],
        3600,
      );
      expect(res).toEqual([true, false, true, false]);
      expect(await b.getJob(x!.id)).toMatchObject({
        status: "done",
        attempts: 1,
        result: '{"n":1}',
      });
      expect(await b.getJob(y!.id)).toMatchObject({ status: "processing", attempts: 0 });
      expect(await b.getJob(z!.id)).toMatchObject({ status: "done", result: null });
      expect(await b.completeMany([], 60)).toEqual([]);
    });

    it("claims respect the limit and the queue filter", async () => {
      const b = await make();
      await b.enqueue([
        newJob({ queue: "a" }),
        newJob({ queue: "a" }),
        newJob({ queue: "b" }),
        newJob({ queue: "c" }),
      ]);
      expect(await b.claim({ workerId: "w", queues: ["a"], limit: 1 })).toHaveLength(1);
      const rest = await b.claim({ workerId: "w", queues: ["a", "b"], limit: 10 });
      expect(rest.map((j) => j.queue).sort()).toEqual(["a", "b"]);
      const last = await b.claim({ workerId: "w", queues: null, limit: 10 });
      expect(last.map((j) => j.queue)).toEqual(["c"]);
    });

    it("claims in priority order, then due-time order", async () => {
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
      await b.enqueue(jobs);
      const order: string[] = [];
      for (;;) {
        const [next] = await b.claim({ workerId: "w", queues: null, limit: 1 });
        if (!next) break;
        order.push(next.name);
      }
      expect(order).toEqual(["neg", "p0_early", "p0_late", "p5", "p10"]);
    });

    it("does not claim jobs that are not due", async () => {
      const b = await make();
      const now = await b.now();
      await b.enqueue([
        newJob({ delaySeconds: 3600 }),
        newJob({ runAt: new Date(now.getTime() + 3_600_000) }),
      ]);
      expect(await b.claim({ workerId: "w", queues: null, limit: 10 })).toHaveLength(0);
      expect((await b.stats()).queued).toBe(2);
    });

    it("failure → retry with delay → dead-letter queue when exhausted, reason kept", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 2 });
      await b.enqueue([job]);
      const [c1] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(await b.retry(job.id, ownerOf(c1!), "boom 1", 3600)).toBe(true);
      const retried = await b.getJob(job.id);
      expect(retried).toMatchObject({
        status: "queued",
        attempts: 1,
        lastError: "boom 1",
        workerId: null,
        claimToken: null,
      });
      const now = await b.now();
      expect(retried!.scheduledAt.getTime()).toBeGreaterThan(now.getTime() + 3500 * 1000);
      expect(await b.claim({ workerId: "w", queues: null, limit: 1 })).toHaveLength(0);

      const job2 = newJob({ maxAttempts: 2 });
      await b.enqueue([job2]);
      const [c2] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(await b.retry(job2.id, ownerOf(c2!), "first", 0)).toBe(true);
      const [c3] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(c3?.id).toBe(job2.id);
      expect(c3?.attempts).toBe(1);
      expect(
        await b.deadLetter(job2.id, ownerOf(c3!), "second", "max_attempts_exceeded", true),
      ).toBe(true);
      expect(await b.getJob(job2.id)).toBeNull();
      const dead = await b.getDeadLetter(job2.id);
      expect(dead).toMatchObject({
        id: job2.id,
        attempts: 2,
        lastError: "second",
        reason: "max_attempts_exceeded",
      });
      expect(dead?.deadAt).toBeInstanceOf(Date);
      expect((await b.stats()).dead_letter).toBe(1);
    });

    it("a dead-letter move that did not run keeps attempts", async () => {
      const b = await make();
      const job = newJob();
      await b.enqueue([job]);
      const [c] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(await b.deadLetter(job.id, ownerOf(c!), "no handler", "unknown_job", false)).toBe(
        true,
      );
      expect(await b.getDeadLetter(job.id)).toMatchObject({ attempts: 0, reason: "unknown_job" });
    });

    it("replays from the dead-letter queue", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 1, dedupKey: "replay-me" });
      await b.enqueue([job]);
      const [c] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      await b.deadLetter(job.id, ownerOf(c!), "bad", "max_attempts_exceeded", true);
      expect(await b.replay(job.id)).toBe(true);
      expect(await b.getDeadLetter(job.id)).toBeNull();
      expect(await b.getJob(job.id)).toMatchObject({
        status: "queued",
        attempts: 0,
        lastError: "bad",
        workerId: null,
      });
      expect(await b.replay(job.id)).toBe(false);
      expect(await b.replay(randomUUID())).toBe(false);
      const [again] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(again?.id).toBe(job.id);
    });

    it("replay refuses a dedup conflict and changes nothing", async () => {
      const b = await make();
      const job = newJob({ dedupKey: "k" });
      await b.enqueue([job]);
      const [c] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      await b.deadLetter(job.id, ownerOf(c!), "bad", "max_attempts_exceeded", true);
      const holder = newJob({ dedupKey: "k" });
      expect((await b.enqueue([holder]))[0]).toEqual({ id: holder.id, inserted: true });
      const err = await b.replay(job.id).catch((e: unknown) => e);
      expect(isSoniqError(err, "DEDUP_CONFLICT")).toBe(true);
      expect(await b.getDeadLetter(job.id)).not.toBeNull();
      expect(await b.getJob(job.id)).toBeNull();
    });

    it("dedup returns the existing job's id, also within one batch", async () => {
      const b = await make();
      const first = newJob({ dedupKey: "same" });
      expect(await b.enqueue([first])).toEqual([{ id: first.id, inserted: true }]);
      const dup = newJob({ dedupKey: "same" });
      const other = newJob({ dedupKey: "other" });
      const again = newJob({ dedupKey: "other" });
      const plain = newJob();
      const res = await b.enqueue([dup, other, again, plain]);
      expect(res).toEqual([
        { id: first.id, inserted: false },
        { id: other.id, inserted: true },
        { id: other.id, inserted: false },
        { id: plain.id, inserted: true },
      ]);
      expect((await b.stats()).total).toBe(3);
      // A finished job still holds its key until it is pruned.
      const [c] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      const key = (await b.getJob(c!.id))?.dedupKey ?? null;
      await b.complete(c!.id, ownerOf(c!), null, 3600);
      const later = newJob({ dedupKey: key });
      if (key !== null)
        expect((await b.enqueue([later]))[0]).toEqual({ id: c!.id, inserted: false });
    });

    it("snooze requeues without spending an attempt", async () => {
      const b = await make();
      const job = newJob();
      await b.enqueue([job]);
      const [c] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(await b.snooze(job.id, ownerOf(c!), 3600)).toBe(true);
      expect(await b.getJob(job.id)).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
        claimToken: null,
      });
      expect(await b.claim({ workerId: "w", queues: null, limit: 1 })).toHaveLength(0);
    });

    it("NACK keeps the seed's field contract", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 5 });
      await b.enqueue([job]);
      const [c1] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      await b.retry(job.id, ownerOf(c1!), "earlier failure", 0);
      const [c2] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      const before = await b.getJob(job.id);
      const t0 = await b.now();
      expect(await b.nack(job.id, ownerOf(c2!))).toBe(true);
      const after = await b.getJob(job.id);
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
      expect(await b.nack(job.id, ownerOf(c2!))).toBe(false);
      const [c3] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      expect(c3?.id).toBe(job.id);
    });

    it("every finishing write is fenced by the owner", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 5 });
      await b.enqueue([job]);
      const [c] = await b.claim({ workerId: "owner", queues: null, limit: 1 });
      const snapshot = await b.getJob(job.id);
      const intruders: Owner[] = [
        { workerId: "intruder", claimToken: c!.claimToken },
        { workerId: "owner", claimToken: randomUUID() },
      ];
      for (const o of intruders) {
        expect(await b.complete(job.id, o, "1", 60)).toBe(false);
        expect(await b.retry(job.id, o, "x", 0)).toBe(false);
        expect(await b.snooze(job.id, o, 0)).toBe(false);
        expect(await b.nack(job.id, o)).toBe(false);
        expect(await b.deadLetter(job.id, o, "x", "r", true)).toBe(false);
      }
      expect(await b.getJob(job.id)).toEqual(snapshot);
      expect(await b.getDeadLetter(job.id)).toBeNull();

      // After a NACK and a re-claim by another worker, the first owner's late write is a no-op.
      await b.nack(job.id, ownerOf(c!));
      const [reclaimed] = await b.claim({ workerId: "other", queues: null, limit: 1 });
      expect(await b.complete(job.id, ownerOf(c!), '"late"', 60)).toBe(false);
      expect(await b.getJob(job.id)).toMatchObject({
        status: "processing",
        workerId: "other",
        attempts: 0,
      });
      // Writes on queued or done rows are no-ops too.
      expect(await b.complete(job.id, ownerOf(reclaimed!), "1", 60)).toBe(true);
      expect(await b.complete(job.id, ownerOf(reclaimed!), "2", 60)).toBe(false);
      expect(await b.nack(job.id, ownerOf(reclaimed!))).toBe(false);
      expect(await b.getJob(job.id)).toMatchObject({ status: "done", attempts: 1, result: "1" });
    });

    it("cancels queued jobs only", async () => {
      const b = await make();
      const a = newJob();
      const p = newJob({ delaySeconds: 0 });
      await b.enqueue([a]);
      const [c] = await b.claim({ workerId: "w", queues: null, limit: 1 });
      await b.enqueue([p]);
      expect(await b.cancel(c!.id, 60)).toBe(false);
      expect(await b.cancel(p.id, 60)).toBe(true);
      expect(await b.getJob(p.id)).toMatchObject({ status: "cancelled" });
      expect(await b.cancel(p.id, 60)).toBe(false);
      expect(await b.claim({ workerId: "w", queues: null, limit: 1 })).toHaveLength(0);
      expect(await b.stats()).toMatchObject({ processing: 1, cancelled: 1, total: 2 });
    });

    it("prunes finished rows whose retention has passed", async () => {
      const b = await make();
      const keep = newJob();
      const drop = newJob({ dedupKey: "pruned-key" });
      await b.enqueue([keep, drop]);
      for (const c of await b.claim({ workerId: "w", queues: null, limit: 2 })) {
        await b.complete(c.id, ownerOf(c), null, c.id === drop.id ? 0 : 3600);
      }
      expect(await b.pruneFinished()).toBe(1);
      expect(await b.getJob(drop.id)).toBeNull();
      expect(await b.getJob(keep.id)).not.toBeNull();
      // The key is free again.
      const fresh = newJob({ dedupKey: "pruned-key" });
      expect((await b.enqueue([fresh]))[0]).toEqual({ id: fresh.id, inserted: true });
    });

    it("registers workers, heartbeats them and tells live from stopped", async () => {
      const b = await make();
      await b.registerWorker({
        id: "w-a",
        hostname: "h",
        pid: 1,
        queues: ["x", "y"],
        concurrency: 4,
      });
      await b.registerWorker({ id: "w-b", hostname: "h", pid: 2, queues: null, concurrency: 1 });
      await b.heartbeat("w-a", "draining");
      await b.markWorkerStopped("w-b");
      const rows = await b.listWorkers(60);
      const a = rows.find((r) => r.id === "w-a");
      const bb = rows.find((r) => r.id === "w-b");
      expect(a).toMatchObject({
        status: "draining",
        live: true,
        queues: ["x", "y"],
        concurrency: 4,
        pid: 1,
      });
      expect(bb).toMatchObject({ status: "stopped", live: false, queues: null });
      expect(bb?.stoppedAt).toBeInstanceOf(Date);
    });

    it("concurrent claims from one process claim each job once", async () => {
      const b = await make();
      const jobs = Array.from({ length: 200 }, () => newJob());
      await b.enqueue(jobs);
      const batches = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const mine: string[] = [];
          for (;;) {
            const got = await b.claim({ workerId: `w${i}`, queues: null, limit: 7 });
            if (got.length === 0) return mine;
            mine.push(...got.map((j) => j.id));
          }
        }),
      );
      const all = batches.flat();
      expect(all).toHaveLength(200);
      expect(new Set(all).size).toBe(200);
    });

    it("concurrent claims filtered by queue claim each job once, and each claim fills up", async () => {
      const b = await make();
      const jobs = Array.from({ length: 300 }, (_, i) =>
        newJob({ queue: ["a", "b", "c"][i % 3] as string, priority: i % 5 }),
      );
      await b.enqueue(jobs);
      const filters = [["a"], ["b"], ["a", "b"], ["c", "a", "c"], ["b", "c"], ["a", "b", "c"]];
      const batches = await Promise.all(
        filters.map(async (queues, i) => {
          const mine: Array<{ id: string; queue: string }> = [];
          for (;;) {
            const got = await b.claim({ workerId: `w${i}`, queues, limit: 9 });
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
        await b.enqueue(
          Array.from({ length: 20 }, (_, i) => newJob({ queue: i % 2 === 0 ? "e" : "f" })),
        );
        const [x, y] = await Promise.all([
          b.claim({ workerId: "x", queues: ["e", "f"], limit: 10 }),
          b.claim({ workerId: "y", queues: ["f", "e"], limit: 10 }),
        ]);
        expect(x.length + y.length).toBe(20);
      }
      // Lower priority first, in claim order, and a claim takes as many as it may (9 of 12).
      await b.enqueue(
        Array.from({ length: 12 }, (_, i) => newJob({ queue: "d", priority: 11 - i })),
      );
      const got = await b.claim({ workerId: "w", queues: ["d", "d"], limit: 9 });
      expect(got.map((j) => j.priority)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    });

    it("wakes subscribers on enqueue", async () => {
      const b = await make();
      const woke = new Promise<string>((resolve) => {
        const off = b.subscribe((queue) => {
          off();
          resolve(queue);
        });
      });
      // Give a LISTEN connection a moment to be ready, then enqueue until the wake arrives.
      let woken = false;
      void woke.then(() => {
        woken = true;
      });
      while (!woken) {
        await b.enqueue([newJob({ queue: "wake" })]);
        await Promise.race([woke, new Promise((r) => setTimeout(r, 500))]);
      }
      await expect(woke).resolves.toBe("wake");
    });

    it("recovery requeues rows of unknown, stopped and stale owners, and leaves live ones", async () => {
      const b = await make();
      const jobs = Array.from({ length: 4 }, () => newJob({ maxAttempts: 5 }));
      await b.enqueue(jobs);
      await b.registerWorker({ id: "live", hostname: "h", pid: 1, queues: null, concurrency: 1 });
      await b.registerWorker({
        id: "stopped",
        hostname: "h",
        pid: 2,
        queues: null,
        concurrency: 1,
      });
      await b.registerWorker({ id: "stale", hostname: "h", pid: 3, queues: null, concurrency: 1 });
      const [live] = await b.claim({ workerId: "live", queues: null, limit: 1 });
      const [stopped] = await b.claim({ workerId: "stopped", queues: null, limit: 1 });
      const [stale] = await b.claim({ workerId: "stale", queues: null, limit: 1 });
      const [ghost] = await b.claim({ workerId: "never-registered", queues: null, limit: 1 });
      await b.retry(stale!.id, ownerOf(stale!), "an earlier failure", 0);
      const [staleAgain] = await b.claim({ workerId: "stale", queues: null, limit: 1 });
      await b.markWorkerStopped("stopped");
      await new Promise((r) => setTimeout(r, 60));
      await b.heartbeat("live", "running");
      // Without a vouched-for timeout, a stale heartbeat is not enough: only the stopped and the
      // unknown owners' rows come back.
      const cautious = await b.recoverStale(null, crashLoopRule(3));
      expect(cautious.requeued.map((j) => j.id).sort()).toEqual([stopped!.id, ghost!.id].sort());
      expect(await b.getJob(staleAgain!.id)).toMatchObject({
        status: "processing",
        workerId: "stale",
      });
      const result = await b.recoverStale(0.04, crashLoopRule(3));
      expect(result.deadLettered).toEqual([]);
      expect(result.requeued.map((j) => j.id)).toEqual([staleAgain!.id]);
      expect(cautious.requeued.find((j) => j.id === ghost!.id)).toMatchObject({
        previousOwner: "never-registered",
        interruptions: 1,
      });
      expect(await b.getJob(live!.id)).toMatchObject({ status: "processing", workerId: "live" });
      expect(await b.getJob(staleAgain!.id)).toMatchObject({
        status: "queued",
        workerId: null,
        claimToken: null,
        attempts: 1,
        lastError: "an earlier failure",
        interruptions: 1,
      });
      // The old owner's late write is fenced out.
      expect(await b.complete(staleAgain!.id, ownerOf(staleAgain!), "1", 60)).toBe(false);
      // Idempotent: nothing left to recover.
      expect(await b.recoverStale(0.04, crashLoopRule(3))).toEqual({
        requeued: [],
        deadLettered: [],
      });
    });

    it("recovery never touches a finished row, and a crash loop ends in the DLQ with attempts unchanged", async () => {
      const b = await make();
      const done = newJob();
      const poison = newJob({ maxAttempts: 5 });
      await b.enqueue([done]);
      const [d] = await b.claim({ workerId: "gone", queues: null, limit: 1 });
      await b.complete(d!.id, ownerOf(d!), null, 3600);
      await b.enqueue([poison]);
      for (let i = 1; i <= 2; i++) {
        const [p] = await b.claim({ workerId: `crashed-${i}`, queues: null, limit: 1 });
        expect(p?.id).toBe(poison.id);
        const r = await b.recoverStale(30, crashLoopRule(2));
        expect(r.requeued.map((j) => j.interruptions)).toEqual([i]);
      }
      const [p3] = await b.claim({ workerId: "crashed-3", queues: null, limit: 1 });
      const r3 = await b.recoverStale(30, crashLoopRule(2));
      expect(r3.requeued).toEqual([]);
      expect(r3.deadLettered).toMatchObject([
        { id: poison.id, interruptions: 3, previousOwner: "crashed-3" },
      ]);
      expect(await b.getJob(poison.id)).toBeNull();
      const dead = await b.getDeadLetter(poison.id);
      expect(dead).toMatchObject({ reason: "crash_loop", attempts: 0, interruptions: 3 });
      expect(dead?.lastError).toContain("crash_loop");
      expect(dead?.lastError).toBe(crashLoopMessage(3)); // the words of maintenance/policy.ts
      expect(await b.complete(poison.id, ownerOf(p3!), "1", 60)).toBe(false);
      expect(await b.getJob(done.id)).toMatchObject({ status: "done", attempts: 1 });
    });

    it("recoverStale › deferred claims › charges an interruption only where a start was marked", async () => {
      const b = await make();
      const unstarted = newJob();
      const started = newJob();
      const plain = newJob();
      await b.enqueue([unstarted]);
      const [u] = await b.claim({ workerId: "w-dead", queues: null, limit: 1, deferStart: true });
      expect(u).toMatchObject({ id: unstarted.id, unchargedRecoveries: 0 });
      expect(await b.getJob(unstarted.id)).toMatchObject({ startKnown: false });
      await b.enqueue([started]);
      const [s] = await b.claim({ workerId: "w-dead", queues: null, limit: 1, deferStart: true });
      expect(await b.markStarted(s!.id, ownerOf(s!))).toBe(true);
      expect(await b.markStarted(s!.id, { ...ownerOf(s!), claimToken: randomUUID() })).toBe(false);
      await b.enqueue([plain]);
      const [p] = await b.claim({ workerId: "w-dead", queues: null, limit: 1 });
      expect(await b.getJob(p!.id)).toMatchObject({ startKnown: true });
      const r = await b.recoverStale(30, crashLoopRule(0));
      // maxInterruptions 0: a charged recovery dead-letters; an uncharged one never does.
      expect(r.requeued).toMatchObject([{ id: unstarted.id, interruptions: 0, charged: false }]);
      expect(r.deadLettered.map((j) => j.id).sort()).toEqual([started.id, plain.id].sort());
      expect(r.deadLettered.every((j) => j.charged && j.interruptions === 1)).toBe(true);
      expect(await b.getJob(unstarted.id)).toMatchObject({
        status: "queued",
        interruptions: 0,
        unchargedRecoveries: 1,
        attempts: 0,
      });
      // Its next claim reports the crash history.
      const [again] = await b.claim({ workerId: "w2", queues: null, limit: 1, deferStart: true });
      expect(again).toMatchObject({ id: unstarted.id, unchargedRecoveries: 1, interruptions: 0 });
    });

    it("concurrent recoveries requeue each row once", async () => {
      const b = await make();
      await b.enqueue(Array.from({ length: 30 }, () => newJob()));
      await b.claim({ workerId: "dead", queues: null, limit: 30 });
      const [r1, r2, r3] = await Promise.all([
        b.recoverStale(30, crashLoopRule(5)),
        b.recoverStale(30, crashLoopRule(5)),
        b.recoverStale(30, crashLoopRule(5)),
      ]);
      const ids = [...r1!.requeued, ...r2!.requeued, ...r3!.requeued].map((j) => j.id);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
      expect((await b.stats()).queued).toBe(30);
    });

    it("pruneFinished › with a limit › deletes at most that many per call", async () => {
      const b = await make();
      const jobs = [newJob(), newJob(), newJob()];
      await b.enqueue(jobs);
      for (const c of await b.claim({ workerId: "w", queues: null, limit: 3 })) {
        await b.complete(c.id, ownerOf(c), null, 0);
      }
      expect(await b.pruneFinished(2)).toBe(2);
      expect(await b.pruneFinished(2)).toBe(1);
      expect(await b.pruneFinished(2)).toBe(0);
    });

    it("forgetWorkers › with a limit › deletes at most that many per call", async () => {
      const b = await make();
      for (const id of ["a", "b", "c"]) {
        await b.registerWorker({ id, hostname: "h", pid: 1, queues: null, concurrency: 1 });
      }
      await new Promise((r) => setTimeout(r, 60));
      expect(await b.forgetWorkers(0.04, 2)).toBe(2);
      expect(await b.forgetWorkers(0.04, 2)).toBe(1);
      expect(await b.listWorkers(60)).toEqual([]);
    });

    it("lists the processing rows a worker owns, with their claim tokens", async () => {
      const b = await make();
      await b.enqueue([newJob(), newJob(), newJob()]);
      const mine = await b.claim({ workerId: "me", queues: null, limit: 2 });
      await b.claim({ workerId: "other", queues: null, limit: 1 });
      await b.complete(mine[1]!.id, ownerOf(mine[1]!), null, 60);
      expect(await b.ownedBy("me")).toEqual([
        { id: mine[0]!.id, workerId: "me", claimToken: mine[0]!.claimToken },
      ]);
      expect(await b.ownedBy("nobody")).toEqual([]);
    });

    it("forgets workers not seen for a while", async () => {
      const b = await make();
      await b.registerWorker({ id: "old", hostname: "h", pid: 1, queues: null, concurrency: 1 });
      await new Promise((r) => setTimeout(r, 60));
      await b.registerWorker({ id: "new", hostname: "h", pid: 2, queues: null, concurrency: 1 });
      expect(await b.forgetWorkers(0.04)).toBe(1);
      expect((await b.listWorkers(60)).map((w) => w.id)).toEqual(["new"]);
    });

    it("a leader lease is held by one holder until it expires or is given up", async () => {
      const b = await make();
      expect(await b.tryLead("maintenance", "a", 0.15)).toBe(true);
      expect(await b.tryLead("maintenance", "b", 0.15)).toBe(false);
      expect(await b.tryLead("maintenance", "a", 0.15)).toBe(true); // renewal
      expect(await b.tryLead("other", "b", 10)).toBe(true); // leases are independent
      await new Promise((r) => setTimeout(r, 250));
      expect(await b.tryLead("maintenance", "b", 10)).toBe(true); // a's lease expired: fail-over
      expect(await b.tryLead("maintenance", "a", 10)).toBe(false);
      await b.resign("maintenance", "a"); // not a's: no effect
      expect(await b.tryLead("maintenance", "a", 10)).toBe(false);
      await b.resign("maintenance", "b");
      expect(await b.tryLead("maintenance", "a", 10)).toBe(true);
    });

    it("rejects calls after close with CLOSED", async () => {
      const b = await target.make();
      await b.close();
      const err = await b.stats().catch((e: unknown) => e);
      expect(isSoniqError(err, "CLOSED")).toBe(true);
    });

    if (target.share) {
      const share = target.share;
      it("several processes claim one pool of jobs, each job exactly once", async () => {
        const b = await make();
        const total = 600;
        const jobs = Array.from({ length: total }, () => newJob());
        for (let i = 0; i < total; i += 200) await b.enqueue(jobs.slice(i, i + 200));
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
        expect(await b.stats()).toMatchObject({ done: total, queued: 0, processing: 0 });
        // More than one process did real work.
        expect(outputs.filter((o) => o.length > 0).length).toBeGreaterThan(1);
      }, 120_000);
    }
  });
}

interface Claimer {
  ready: Promise<void>;
  go(): void;
  ids: Promise<string[]>;
}

function startClaimer(databaseUrl: string, schema: string, workerId: string): Claimer {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", claimerScript, databaseUrl, schema, workerId],
    { stdio: ["pipe", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
    if (err.includes("ready\n")) markReady();
  });
  const ids = new Promise<string[]>((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      markReady();
      if (code !== 0) reject(new Error(`claimer ${workerId} exited ${code}: ${err}`));
      else resolve(out.split("\n").filter((line) => line.length > 0));
    });
  });
  return { ready, go: () => child.stdin.end("go\n"), ids };
}
