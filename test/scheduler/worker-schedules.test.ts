/**
 * Schedules through real workers: `ctx.schedule` in a handler; the leader killed just before an
 * occurrence (another worker's heartbeat catch-up or its new lease enqueues it within the lease
 * time-to-live plus one heartbeat, `late` only past the schedule's grace) on SQLite and
 * PostgreSQL; two schedulers on separate connections racing the same instants; and the process
 * clock skewed ±10 min against PostgreSQL's.
 */
import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import { Soniq } from "../../src/index.js";
import type { ScheduleContext } from "../../src/jobs/context.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import {
  availableKinds,
  kindAvailable,
  memoryBackend,
  SHARED_KINDS,
  useBackends,
} from "../helpers/test-backends.js";
import { waitFor } from "../helpers/wait.js";

const silent = pino({ level: "silent" });
const available = await availableKinds(SHARED_KINDS);
const pgAvailable = await kindAvailable("PostgreSQL");

describe("worker › ctx.schedule", () => {
  it("worker › a scheduled and a manual job › the handler sees ctx.schedule", async () => {
    const backend = await memoryBackend();
    const soniq = new Soniq({
      backend,
      logger: silent,
      env: {},
      pollInterval: 0.05,
      heartbeatInterval: 0.1,
    });
    const seen: Array<ScheduleContext | undefined> = [];
    const job = soniq.job({
      name: "tick.job",
      handler: async (_args, ctx) => {
        seen.push(ctx.schedule);
      },
    });
    soniq.schedule({ id: "every.second", job, every: 1, args: {} });
    const plain = soniq.job({
      name: "plain.job",
      handler: async (_a, ctx) => seen.push(ctx.schedule),
    });
    const events: Array<{ outcome: string; schedule: string; worker_id: string }> = [];
    soniq.events.on("schedule_occurrence", (e) => events.push(e));
    const worker = soniq.worker();
    await worker.start();
    await plain.enqueue({});
    await soniq.schedules.runNow("every.second");
    await waitFor(() => seen.filter((s) => s && !s.manual).length >= 1, 5_000, "a scheduled run");
    await waitFor(() => seen.some((s) => s?.manual), 5_000, "the manual run");
    await worker.stop();
    expect(seen).toContain(undefined);
    const scheduled = seen.find((s) => s && !s.manual);
    expect(scheduled).toMatchObject({ id: "every.second", late: false, manual: false });
    expect(scheduled?.occurrence).toBeInstanceOf(Date);
    expect((scheduled?.occurrence.getTime() ?? 1) % 1000).toBe(0);
    // Every occurrence reported on soniq.events, by the worker that took it.
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events[0]).toMatchObject({ schedule: "every.second", worker_id: worker.id });
  });

  it("worker › a schedule whose arguments fail an asynchronous schema › the start fails (exit 2), nothing written", async () => {
    const backend = await memoryBackend();
    const soniq = new Soniq({ backend, logger: silent, env: {} });
    // A Standard Schema whose validation is asynchronous: checked at sync, not at definition.
    const asyncSchema = {
      "~standard": {
        version: 1 as const,
        vendor: "test",
        validate: async (value: unknown) =>
          typeof (value as { n?: unknown }).n === "number"
            ? { value: value as { n: number } }
            : { issues: [{ message: "n must be a number" }] },
      },
    };
    const job = soniq.job({ name: "async.checked", args: asyncSchema, handler: async () => 1 });
    soniq.schedule({ id: "bad.args", job, every: 60, args: { n: "x" as unknown as number } });
    const worker = soniq.worker();
    await expect(worker.start()).rejects.toMatchObject({ code: "INVALID_ARGS" });
    expect(await worker.finished).toMatchObject({ reason: "start_failed", exitCode: 2 });
    expect(await backend.scheduleList()).toEqual([]);
  });
});

for (const kind of SHARED_KINDS) {
  describe.skipIf(!available.has(kind))(`worker schedules on ${kind}`, () => {
    const stores = useBackends(kind);
    it(`leader killed just before an occurrence › ${kind} › another worker enqueues it within the lease TTL + one heartbeat; late only past the grace`, async () => {
      const settings = stores.freshAddress();
      const heartbeat = 0.2;
      const leaseTtl = 3 * heartbeat;
      const soniq = new Soniq({
        ...settings,
        logger: silent,
        env: {},
        pollInterval: 0.05,
        heartbeatInterval: heartbeat,
        heartbeatTimeout: 1,
      });
      await soniq.setup();
      const backend = await soniq.backend();
      const job = soniq.job({ name: "tick.job", handler: async () => "ok" });
      soniq.schedule({
        id: "on.time",
        job,
        every: 1,
        args: {},
        missed: { grace: 2 },
        history: 1000,
      });
      soniq.schedule({
        id: "strict",
        job,
        every: 1,
        args: {},
        missed: { policy: "all", grace: 0.3, within: 10 },
        history: 1000,
      });
      // The leader: holds the lease, renews it right before an occurrence, then dies.
      await backend.leaseTryTake({ name: "maintenance", holder: "dead-leader", ttlSeconds: 30 });
      const worker = soniq.worker();
      await worker.start();
      const now = (await backend.now()).getTime();
      const occurrence = Math.ceil((now + 1_000) / 1000) * 1000;
      await new Promise((r) => setTimeout(r, occurrence - 100 - Date.now()));
      await backend.leaseResign({ name: "maintenance", holder: "dead-leader" });
      await backend.leaseTryTake({
        name: "maintenance",
        holder: "dead-leader",
        ttlSeconds: leaseTtl,
      }); // its last renewal
      const diedAt = (await backend.now()).getTime();
      await waitFor(
        async () =>
          (await backend.scheduleRuns({ id: "strict", limit: 1000 })).some(
            (r) => r.occurrence.getTime() >= diedAt + 2_000,
          ),
        10_000,
        "occurrences after the new leader took over",
      );
      await worker.stop();
      const bound = (leaseTtl + heartbeat) * 1000 + 400; // + one tick and the machine's jitter
      for (const id of ["on.time", "strict"]) {
        const runs = await backend.scheduleRuns({ id, limit: 1000 });
        const afterDeath = runs.filter((r) => r.occurrence.getTime() >= occurrence);
        expect(afterDeath.length).toBeGreaterThanOrEqual(2);
        for (const run of afterDeath) {
          expect(run.jobId).not.toBeNull();
          const lag = run.recordedAt.getTime() - run.occurrence.getTime();
          expect(lag).toBeLessThan(bound);
          if (id === "on.time") expect(run.outcome).toBe("enqueued");
          else expect(run.outcome).toBe(lag > 300 ? "late" : "enqueued");
        }
      }
      // The occurrence right after the death was taken by catch-up, overdue past the strict grace.
      const first = (await backend.scheduleRuns({ id: "strict", limit: 1000 })).find(
        (r) => r.occurrence.getTime() === occurrence,
      );
      expect(first?.outcome).toBe("late");
      await soniq.close();
    });

    it(`two schedulers on separate connections › ${kind} › racing every instant for 3 s, one job per occurrence`, async () => {
      const settings = stores.freshAddress();
      const make = () => new Soniq({ ...settings, logger: silent, env: {}, poolSize: 2 });
      const a = make();
      await a.setup();
      const job = a.job({ name: "tick.job", handler: async () => "ok" });
      a.schedule({
        id: "every.second",
        job,
        every: 1,
        args: {},
        missed: { grace: 5 },
        history: 1000,
      });
      await a.schedules.sync();
      const b = make();
      const schedulers = [
        new Scheduler({ store: await a.backend(), logger: silent }),
        new Scheduler({ store: await b.backend(), logger: silent }),
      ];
      const end = Date.now() + 3_000;
      let ticks = 0;
      await Promise.all(
        schedulers.map(async (s) => {
          while (Date.now() < end) {
            await s.tick(0);
            ticks += 1;
          }
        }),
      );
      const backend = await a.backend();
      const runs = await backend.scheduleRuns({ id: "every.second", limit: 1000 });
      const stats = await backend.jobStats();
      expect(ticks).toBeGreaterThan(20);
      expect(runs.length).toBeGreaterThanOrEqual(2);
      expect(stats.total).toBe(runs.length);
      const occurrences = runs.map((r) => r.occurrence.getTime());
      expect(new Set(occurrences).size).toBe(occurrences.length);
      await a.close();
      await b.close();
    });
  });
}

describe.skipIf(!pgAvailable)("worker schedules › the database clock on PostgreSQL", () => {
  const stores = useBackends("PostgreSQL");
  it("scheduler › the process clock 10 min ahead or behind PostgreSQL's › neither fires early nor skips", async () => {
    const soniq = new Soniq({ ...stores.freshAddress(), logger: silent, env: {} });
    await soniq.setup();
    const backend = await soniq.backend();
    const job = soniq.job({ name: "tick.job", handler: async () => "ok" });
    soniq.schedule({ id: "soon", job, every: 3600, args: {} });
    await soniq.schedules.sync();
    const scheduler = new Scheduler({ store: backend, logger: silent });
    const dbNow = (await backend.now()).getTime();
    const row = await backend.scheduleGet({ id: "soon" });
    if (!row) throw new Error("no row");
    try {
      vi.useFakeTimers({ toFake: ["Date"], now: dbNow + 10 * 60_000 }); // process clock ahead
      expect((await scheduler.tick(0)).taken).toBe(0); // the cursor is in the future by the database
      // Put the cursor 1 s in the past by the database clock; the process clock is now behind.
      const past = new Date(dbNow - 1_000);
      await backend.scheduleSave({
        spec: { ...row },
        nextRunAt: past,
        expectRevision: row.revision,
      });
      vi.setSystemTime(dbNow - 10 * 60_000);
      expect((await scheduler.tick(0)).taken).toBe(1);
    } finally {
      vi.useRealTimers();
    }
    const [run] = await backend.scheduleRuns({ id: "soon", limit: 5 });
    expect(run?.outcome).toBe("enqueued");
    await soniq.close();
  });
});
