/**
 * The shared backend contract suite: the same cases run against memory, a SQLite file and
 * PostgreSQL (see memory.test.ts, sqlite.test.ts, postgres.test.ts).
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import type { Backend, NewJob, Owner } from "../../src/backends/contract/index.js";
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
      expect((await b.jobStats()).total).toBe(0);
    });

    it("enqueue → claim → complete records the outcome", async () => {
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
          "scheduledAt",
          "createdAt",
          "workerId",
          "claimToken",
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
        dead_letter: 0,
        cancelled: 0,
      });
    });

    it("completes many jobs in one write, each fenced on its own", async () => {
      const b = await make();
      await b.jobEnqueue({ jobs: [newJob(), newJob(), newJob()] });
      const [x, y, z] = await b.jobClaim({ workerId: "w", queues: null, limit: 3 });
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

    it("claims respect the limit and the queue filter", async () => {
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
      await b.jobEnqueue({ jobs });
      const order: string[] = [];
      for (;;) {
        const [next] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
        if (!next) break;
        order.push(next.name);
      }
      expect(order).toEqual(["neg", "p0_early", "p0_late", "p5", "p10"]);
    });

    it("does not claim jobs that are not due", async () => {
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

    it("failure → retry with delay → dead-letter queue when exhausted, reason kept", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 2 });
      await b.jobEnqueue({ jobs: [job] });
      const [c1] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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
      expect(await b.jobClaim({ workerId: "w", queues: null, limit: 1 })).toHaveLength(0);

      const job2 = newJob({ maxAttempts: 2 });
      await b.jobEnqueue({ jobs: [job2] });
      const [c2] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      expect(
        await b.jobRetry({ id: job2.id, owner: ownerOf(c2!), error: "first", delaySeconds: 0 }),
      ).toBe(true);
      const [c3] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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
      expect((await b.jobStats()).dead_letter).toBe(1);
    });

    it("a dead-letter move that did not run keeps attempts", async () => {
      const b = await make();
      const job = newJob();
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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

    it("replays from the dead-letter queue", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 1, dedupKey: "replay-me" });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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
      const [again] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      expect(again?.id).toBe(job.id);
    });

    it("replay refuses a dedup conflict and changes nothing", async () => {
      const b = await make();
      const job = newJob({ dedupKey: "k" });
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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

    it("dedup returns the existing job's id, also within one batch", async () => {
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
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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

    it("snooze requeues without spending an attempt", async () => {
      const b = await make();
      const job = newJob();
      await b.jobEnqueue({ jobs: [job] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      expect(await b.jobSnooze({ id: job.id, owner: ownerOf(c!), delaySeconds: 3600 })).toBe(true);
      expect(await b.jobGet({ id: job.id })).toMatchObject({
        status: "queued",
        attempts: 0,
        workerId: null,
        claimToken: null,
      });
      expect(await b.jobClaim({ workerId: "w", queues: null, limit: 1 })).toHaveLength(0);
    });

    it("NACK keeps the seed's field contract", async () => {
      const b = await make();
      const job = newJob({ maxAttempts: 5 });
      await b.jobEnqueue({ jobs: [job] });
      const [c1] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      await b.jobRetry({
        id: job.id,
        owner: ownerOf(c1!),
        error: "earlier failure",
        delaySeconds: 0,
      });
      const [c2] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
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
      const [c3] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      expect(c3?.id).toBe(job.id);
    });

    it("every finishing write is fenced by the owner", async () => {
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

    it("cancels queued jobs only", async () => {
      const b = await make();
      const a = newJob();
      const p = newJob({ delaySeconds: 0 });
      await b.jobEnqueue({ jobs: [a] });
      const [c] = await b.jobClaim({ workerId: "w", queues: null, limit: 1 });
      await b.jobEnqueue({ jobs: [p] });
      expect(await b.jobCancel({ id: c!.id, retentionSeconds: 60 })).toBe(false);
      expect(await b.jobCancel({ id: p.id, retentionSeconds: 60 })).toBe(true);
      expect(await b.jobGet({ id: p.id })).toMatchObject({ status: "cancelled" });
      expect(await b.jobCancel({ id: p.id, retentionSeconds: 60 })).toBe(false);
      expect(await b.jobClaim({ workerId: "w", queues: null, limit: 1 })).toHaveLength(0);
      expect(await b.jobStats()).toMatchObject({ processing: 1, cancelled: 1, total: 2 });
    });

    it("prunes finished rows whose retention has passed", async () => {
      const b = await make();
      const keep = newJob();
      const drop = newJob({ dedupKey: "pruned-key" });
      await b.jobEnqueue({ jobs: [keep, drop] });
      for (const c of await b.jobClaim({ workerId: "w", queues: null, limit: 2 })) {
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: c.id === drop.id ? 0 : 3600,
        });
      }
      expect(await b.jobPruneFinished({})).toBe(1);
      expect(await b.jobGet({ id: drop.id })).toBeNull();
      expect(await b.jobGet({ id: keep.id })).not.toBeNull();
      // The key is free again.
      const fresh = newJob({ dedupKey: "pruned-key" });
      expect((await b.jobEnqueue({ jobs: [fresh] }))[0]).toEqual({ id: fresh.id, inserted: true });
    });

    it("registers workers, heartbeats them and tells live from stopped", async () => {
      const b = await make();
      await b.workerRegister({
        id: "w-a",
        hostname: "h",
        pid: 1,
        queues: ["x", "y"],
        concurrency: 4,
      });
      await b.workerRegister({ id: "w-b", hostname: "h", pid: 2, queues: null, concurrency: 1 });
      await b.workerHeartbeat({ workerId: "w-a", status: "draining" });
      await b.workerMarkStopped({ workerId: "w-b" });
      const rows = await b.workerList({ heartbeatTimeoutSeconds: 60 });
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

    it("concurrent claims filtered by queue claim each job once, and each claim fills up", async () => {
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

    it("wakes subscribers on enqueue", async () => {
      const b = await make();
      const woke = new Promise<string>((resolve) => {
        const off = b.notifier.subscribe((queue) => {
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
        await b.jobEnqueue({ jobs: [newJob({ queue: "wake" })] });
        await Promise.race([woke, new Promise((r) => setTimeout(r, 500))]);
      }
      await expect(woke).resolves.toBe("wake");
    });

    it("recovery requeues rows of unknown, stopped and stale owners, and leaves live ones", async () => {
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
      await new Promise((r) => setTimeout(r, 60));
      await b.workerHeartbeat({ workerId: "live", status: "running" });
      // Without a vouched-for timeout, a stale heartbeat is not enough: only the stopped and the
      // unknown owners' rows come back.
      const cautious = await b.jobRecoverStale({ crashLoop: crashLoopRule(3) });
      expect(cautious.requeued.map((j) => j.id).sort()).toEqual([stopped!.id, ghost!.id].sort());
      expect(await b.jobGet({ id: staleAgain!.id })).toMatchObject({
        status: "processing",
        workerId: "stale",
      });
      const result = await b.jobRecoverStale({
        staleAfterSeconds: 0.04,
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
      // Idempotent: nothing left to recover.
      expect(
        await b.jobRecoverStale({ staleAfterSeconds: 0.04, crashLoop: crashLoopRule(3) }),
      ).toEqual({
        requeued: [],
        deadLettered: [],
      });
    });

    it("recovery never touches a finished row, and a crash loop ends in the DLQ with attempts unchanged", async () => {
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

    it("concurrent recoveries requeue each row once", async () => {
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

    it("pruneFinished › with a limit › deletes at most that many per call", async () => {
      const b = await make();
      const jobs = [newJob(), newJob(), newJob()];
      await b.jobEnqueue({ jobs });
      for (const c of await b.jobClaim({ workerId: "w", queues: null, limit: 3 })) {
        await b.jobComplete({
          id: c.id,
          owner: ownerOf(c),
          result: null,
          resultRetentionSeconds: 0,
        });
      }
      expect(await b.jobPruneFinished({ limit: 2 })).toBe(2);
      expect(await b.jobPruneFinished({ limit: 2 })).toBe(1);
      expect(await b.jobPruneFinished({ limit: 2 })).toBe(0);
    });

    it("forgetWorkers › with a limit › deletes at most that many per call", async () => {
      const b = await make();
      for (const id of ["a", "b", "c"]) {
        await b.workerRegister({ id, hostname: "h", pid: 1, queues: null, concurrency: 1 });
      }
      await new Promise((r) => setTimeout(r, 60));
      expect(await b.workerForget({ notSeenForSeconds: 0.04, limit: 2 })).toBe(2);
      expect(await b.workerForget({ notSeenForSeconds: 0.04, limit: 2 })).toBe(1);
      expect(await b.workerList({ heartbeatTimeoutSeconds: 60 })).toEqual([]);
    });

    it("lists the processing rows a worker owns, with their claim tokens", async () => {
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

    it("forgets workers not seen for a while", async () => {
      const b = await make();
      await b.workerRegister({ id: "old", hostname: "h", pid: 1, queues: null, concurrency: 1 });
      await new Promise((r) => setTimeout(r, 60));
      await b.workerRegister({ id: "new", hostname: "h", pid: 2, queues: null, concurrency: 1 });
      expect(await b.workerForget({ notSeenForSeconds: 0.04 })).toBe(1);
      expect((await b.workerList({ heartbeatTimeoutSeconds: 60 })).map((w) => w.id)).toEqual([
        "new",
      ]);
    });

    it("a leader lease is held by one holder until it expires or is given up", async () => {
      const b = await make();
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 0.15 })).toBe(
        true,
      );
      expect(await b.leaseTryTake({ name: "maintenance", holder: "b", ttlSeconds: 0.15 })).toBe(
        false,
      );
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 0.15 })).toBe(
        true,
      ); // renewal
      expect(await b.leaseTryTake({ name: "other", holder: "b", ttlSeconds: 10 })).toBe(true); // leases are independent
      await new Promise((r) => setTimeout(r, 250));
      expect(await b.leaseTryTake({ name: "maintenance", holder: "b", ttlSeconds: 10 })).toBe(true); // a's lease expired: fail-over
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 10 })).toBe(
        false,
      );
      await b.leaseResign({ name: "maintenance", holder: "a" }); // not a's: no effect
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 10 })).toBe(
        false,
      );
      await b.leaseResign({ name: "maintenance", holder: "b" });
      expect(await b.leaseTryTake({ name: "maintenance", holder: "a", ttlSeconds: 10 })).toBe(true);
    });

    it("rejects calls after close with CLOSED", async () => {
      const b = await target.make();
      await b.close();
      const err = await b.jobStats().catch((e: unknown) => e);
      expect(isSoniqError(err, "CLOSED")).toBe(true);
    });

    if (target.share) {
      const share = target.share;
      it("several processes claim one pool of jobs, each job exactly once", async () => {
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
