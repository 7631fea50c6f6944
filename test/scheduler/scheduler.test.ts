/**
 * Scheduler ticks on the memory backend with an injected database clock: missed-run and overlap
 * policies, DST, pause/resume, the database clock, split-brain schedulers, reconciliation and the
 * definition's bad-input errors.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isSoniqError } from "../../src/errors.js";
import { Soniq } from "../../src/index.js";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { memoryBackend } from "../helpers/test-backends.js";

const silent = pino({ level: "silent" });
const H = 3_600_000;

async function setup(startIso: string) {
  const clock = { now: Date.parse(startIso) };
  const backend = await memoryBackend({ clock: () => clock.now });
  const soniq = new Soniq({ backend, logger: silent, env: {} });
  const report = soniq.job({
    name: "report.send",
    args: z.object({ day: z.string() }),
    handler: async () => "ok",
  });
  const events: Array<{ outcome: string }> = [];
  const scheduler = new Scheduler({
    store: backend,
    logger: silent,
    emit: (payload) => events.push(payload),
  });
  const advance = (ms: number) => {
    clock.now += ms;
  };
  const jobs = async () => {
    const rows = [];
    for (const row of await backend.scheduleList()) {
      for (const run of await backend.scheduleRuns({ id: row.id, limit: 1000 })) {
        if (run.jobId) rows.push(await backend.jobGet({ id: run.jobId }));
      }
    }
    return rows;
  };
  const outcomes = async (id: string) =>
    (await backend.scheduleRuns({ id, limit: 1000 })).reverse().map((r) => r.outcome);
  return { clock, backend, soniq, report, scheduler, advance, jobs, outcomes, events };
}

describe("scheduler › missed-run policies (3 h down, hourly)", () => {
  for (const [policy, expected, jobCount] of [
    ["skip", ["missed", "missed", "missed"], 0],
    ["latest", ["missed", "missed", "late"], 1],
    ["all", ["late", "late", "late"], 3],
  ] as const) {
    it(`scheduler › policy ${policy} after 3 h of downtime › ${jobCount} job(s) and every miss recorded`, async () => {
      const t = await setup("2026-01-01T08:30:00Z");
      t.soniq.schedule({
        id: "reports.hourly",
        job: t.report,
        cron: "0 * * * *",
        args: { day: "x" },
        missed: { policy, within: 4 * 3600 },
      });
      await t.soniq.schedules.sync();
      t.advance(3 * H); // 11:30: 09:00, 10:00, 11:00 are 2.5, 1.5 and 0.5 h overdue
      const result = await t.scheduler.tick(0);
      expect(result.taken).toBe(3);
      expect(await t.outcomes("reports.hourly")).toEqual(expected);
      const jobs = await t.jobs();
      expect(jobs).toHaveLength(jobCount);
      const keys = jobs.map((j) => j?.dedupKey);
      expect(new Set(keys).size).toBe(jobCount);
      for (const job of jobs) {
        expect(JSON.parse(job?.meta ?? "{}").schedule).toMatchObject({
          id: "reports.hourly",
          late: true,
          manual: false,
        });
      }
      expect(t.events.filter((e) => e.outcome === "missed")).toHaveLength(3 - jobCount);
      expect(
        (await t.backend.scheduleGet({ id: "reports.hourly" }))?.nextRunAt?.toISOString(),
      ).toBe("2026-01-01T12:00:00.000Z");
    });
  }

  it("scheduler › a schedule created during the gap › owes nothing from before its creation", async () => {
    const t = await setup("2026-01-01T11:30:00Z");
    t.soniq.schedule({
      id: "reports.hourly",
      job: t.report,
      cron: "0 * * * *",
      args: { day: "x" },
      missed: { policy: "all", within: 24 * 3600 },
    });
    await t.soniq.schedules.sync();
    expect((await t.scheduler.tick(0)).taken).toBe(0);
    expect(await t.jobs()).toHaveLength(0);
  });

  it("scheduler › an occurrence within grace › enqueued, not late", async () => {
    const t = await setup("2026-01-01T08:59:00Z");
    t.soniq.schedule({
      id: "reports.hourly",
      job: t.report,
      cron: "0 * * * *",
      args: { day: "x" },
    });
    await t.soniq.schedules.sync();
    t.advance(90_000); // 09:00:30, 30 s late, grace 60 s
    await t.scheduler.tick(0);
    expect(await t.outcomes("reports.hourly")).toEqual(["enqueued"]);
    expect(JSON.parse((await t.jobs())[0]?.meta ?? "{}").schedule.late).toBe(false);
  });
});

describe("scheduler › overlap, pause, resume", () => {
  it("scheduler › overlap skip while the previous job runs › skipped_overlap recorded, no second job", async () => {
    const t = await setup("2026-01-01T00:00:30Z");
    t.soniq.schedule({
      id: "sync.often",
      job: t.report,
      every: 60,
      args: { day: "x" },
      overlap: "skip",
    });
    await t.soniq.schedules.sync();
    t.advance(30_000); // 00:01:00
    await t.scheduler.tick(0);
    const [claimed] = await t.backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
    expect(claimed).toBeDefined();
    t.advance(60_000); // 00:02:00: the first job is still processing
    await t.scheduler.tick(0);
    expect(await t.outcomes("sync.often")).toEqual(["enqueued", "skipped_overlap"]);
    expect(await t.jobs()).toHaveLength(1);
    await t.backend.jobComplete({
      id: claimed?.id ?? "",
      owner: { workerId: "w", claimToken: claimed?.claimToken ?? "" },
      result: null,
      resultRetentionSeconds: 60,
    });
    t.advance(60_000); // 00:03:00: done now
    await t.scheduler.tick(0);
    expect(await t.outcomes("sync.often")).toEqual(["enqueued", "skipped_overlap", "enqueued"]);
  });

  it("scheduler › paused, then resumed › paused occurrences recorded, no backfill after resume", async () => {
    const t = await setup("2026-01-01T00:00:30Z");
    t.soniq.schedule({ id: "sync.often", job: t.report, every: 60, args: { day: "x" } });
    await t.soniq.schedules.sync();
    await t.soniq.schedules.pause("sync.often");
    t.advance(60_000); // 00:01:30
    await t.scheduler.tick(0);
    t.advance(3 * 60_000); // 00:04:30: 02, 03, 04 not ticked yet
    await t.soniq.schedules.resume("sync.often");
    expect(await t.outcomes("sync.often")).toEqual(["paused", "paused", "paused", "paused"]);
    expect((await t.backend.scheduleGet({ id: "sync.often" }))?.nextRunAt?.toISOString()).toBe(
      "2026-01-01T00:05:00.000Z",
    );
    await t.scheduler.tick(0);
    expect(await t.jobs()).toHaveLength(0);
    t.advance(30_000);
    await t.scheduler.tick(0);
    expect(await t.outcomes("sync.often")).toEqual([
      "paused",
      "paused",
      "paused",
      "paused",
      "enqueued",
    ]);
  });

  it("scheduler › run now › one manual job, cursor unchanged", async () => {
    const t = await setup("2026-01-01T00:00:30Z");
    t.soniq.schedule({ id: "sync.often", job: t.report, every: 60, args: { day: "x" } });
    await t.soniq.schedules.sync();
    const id = await t.soniq.schedules.runNow("sync.often");
    const job = await t.backend.jobGet({ id });
    expect(job?.dedupKey).toMatch(/^schedule:sync\.often:manual:/);
    expect(JSON.parse(job?.meta ?? "{}").schedule).toMatchObject({ manual: true, late: false });
    expect((await t.backend.scheduleGet({ id: "sync.often" }))?.nextRunAt?.toISOString()).toBe(
      "2026-01-01T00:01:00.000Z",
    );
  });
});

describe("scheduler › DST and the database clock", () => {
  it("scheduler › Europe/Paris 02:30 on the spring-forward night › one job, at 03:00 local", async () => {
    const t = await setup("2026-03-28T12:00:00Z");
    t.soniq.schedule({
      id: "paris.night",
      job: t.report,
      cron: "30 2 * * *",
      timezone: "Europe/Paris",
      args: { day: "x" },
    });
    await t.soniq.schedules.sync();
    t.advance(Date.parse("2026-03-29T01:00:00Z") - t.clock.now);
    await t.scheduler.tick(0);
    const runs = await t.backend.scheduleRuns({ id: "paris.night", limit: 10 });
    expect(runs.map((r) => [r.outcome, r.occurrence.toISOString()])).toEqual([
      ["enqueued", "2026-03-29T01:00:00.000Z"],
    ]);
    t.advance(2 * H);
    await t.scheduler.tick(0);
    expect(await t.jobs()).toHaveLength(1);
  });

  it("scheduler › America/New_York 01:30 on the fall-back night › one job, at the first 01:30", async () => {
    const t = await setup("2026-10-31T12:00:00Z");
    t.soniq.schedule({
      id: "ny.night",
      job: t.report,
      cron: "30 1 * * *",
      timezone: "America/New_York",
      args: { day: "x" },
    });
    await t.soniq.schedules.sync();
    t.advance(Date.parse("2026-11-01T05:30:00Z") - t.clock.now);
    await t.scheduler.tick(0);
    t.advance(H); // 06:30Z is 01:30 EST, the repeated wall time
    await t.scheduler.tick(0);
    const runs = await t.backend.scheduleRuns({ id: "ny.night", limit: 10 });
    expect(runs.map((r) => r.occurrence.toISOString())).toEqual(["2026-11-01T05:30:00.000Z"]);
  });

  it("scheduler › the database clock 10 min behind or ahead of the process clock › due instants follow the database", async () => {
    // The injected database clock is far from the process clock (2026-12 today): a scheduler
    // reading its own clock would fire everything at once or nothing at all.
    const t = await setup("2031-06-01T00:00:00Z");
    t.soniq.schedule({ id: "sync.often", job: t.report, every: 60, args: { day: "x" } });
    await t.soniq.schedules.sync();
    t.advance(59_000);
    expect((await t.scheduler.tick(0)).taken).toBe(0); // not early
    t.advance(1_000);
    expect((await t.scheduler.tick(0)).taken).toBe(1); // not skipped
    t.advance(-10 * 60_000); // the database clock jumps back 10 min: nothing fires early
    expect((await t.scheduler.tick(0)).taken).toBe(0);
    expect(await t.outcomes("sync.often")).toEqual(["enqueued"]);
  });
});

describe("scheduler › split brain", () => {
  it("scheduler › two schedulers forced to tick the same instant 1000 times › one job per occurrence", async () => {
    const t = await setup("2026-01-01T00:00:00.500Z");
    t.soniq.schedule({
      id: "every.second",
      job: t.report,
      every: 1,
      args: { day: "x" },
      history: 1000,
    });
    await t.soniq.schedules.sync();
    const other = new Scheduler({ store: t.backend, logger: silent });
    for (let i = 0; i < 1000; i += 1) {
      t.advance(1000);
      const [a, b] = await Promise.all([t.scheduler.tick(0), other.tick(0)]);
      expect(a.taken + b.taken).toBe(1);
    }
    const jobs = await t.jobs();
    expect(jobs).toHaveLength(1000);
    expect(new Set(jobs.map((j) => j?.dedupKey)).size).toBe(1000);
    expect((await t.backend.jobStats()).total).toBe(1000);
  });
});

describe("scheduler › definitions and sync", () => {
  function code(fn: () => unknown): string | undefined {
    try {
      fn();
    } catch (err) {
      return isSoniqError(err) ? err.code : String(err);
    }
    return undefined;
  }

  it("schedule › bad input › a coded error at definition, nothing declared", async () => {
    const t = await setup("2026-01-01T00:00:00Z");
    const base = { job: t.report, args: { day: "x" } };
    expect(code(() => t.soniq.schedule({ ...base, id: "a.b", cron: "61 * * * *" }))).toBe(
      "INVALID_SCHEDULE",
    );
    expect(
      code(() =>
        t.soniq.schedule({ ...base, id: "a.b", cron: "0 * * * *", timezone: "Nowhere/X" }),
      ),
    ).toBe("INVALID_SCHEDULE");
    expect(code(() => t.soniq.schedule({ ...base, id: "a.b", every: 0.5 }))).toBe(
      "INVALID_SCHEDULE",
    );
    expect(code(() => t.soniq.schedule({ ...base, id: "a.b" }))).toBe("INVALID_SCHEDULE");
    expect(code(() => t.soniq.schedule({ ...base, id: "a.b", every: 5, cron: "* * * * *" }))).toBe(
      "INVALID_SCHEDULE",
    );
    expect(code(() => t.soniq.schedule({ ...base, id: "Bad Id", every: 5 }))).toBe(
      "INVALID_SCHEDULE",
    );
    expect(
      code(() =>
        // @ts-expect-error the arguments are type-checked against the job's schema input
        t.soniq.schedule({ id: "a.b", job: t.report, every: 5, args: { day: 3 } }),
      ),
    ).toBe("INVALID_ARGS");
    expect(
      code(() =>
        t.soniq.schedule({
          ...base,
          id: "a.b",
          every: 5,
          missed: { policy: "sometimes" as "all" },
        }),
      ),
    ).toBe("INVALID_SCHEDULE");
    expect(t.soniq.scheduleDefinitions.size).toBe(0);
    t.soniq.schedule({ ...base, id: "a.b", every: 5 });
    expect(code(() => t.soniq.schedule({ ...base, id: "a.b", every: 10 }))).toBe(
      "DUPLICATE_SCHEDULE",
    );
    const foreign = new Soniq({ backend: await memoryBackend(), logger: silent, env: {} });
    expect(code(() => foreign.schedule({ ...base, id: "c.d", every: 5 }))).toBe("INVALID_SCHEDULE");
  });

  it("sync › a changed expression › updates the row and recomputes the cursor; undeclared rows kept, pruned on demand", async () => {
    const t = await setup("2026-01-01T00:00:30Z");
    t.soniq.schedule({ id: "sync.often", job: t.report, every: 60, args: { day: "x" } });
    t.soniq.schedule({ id: "old.one", job: t.report, every: 60, args: { day: "x" } });
    expect((await t.soniq.schedules.sync()).created.sort()).toEqual(["old.one", "sync.often"]);
    expect((await t.soniq.schedules.sync()).unchanged.sort()).toEqual(["old.one", "sync.often"]);
    const next = new Soniq({ backend: t.backend, logger: silent, env: {} });
    const report = next.job({
      name: "report.send",
      args: z.object({ day: z.string() }),
      handler: async () => 1,
    });
    next.schedule({ id: "sync.often", job: report, every: 3600, args: { day: "x" } });
    const first = await next.schedules.sync();
    expect(first).toMatchObject({ updated: ["sync.often"], undeclared: ["old.one"], pruned: [] });
    expect((await t.backend.scheduleGet({ id: "sync.often" }))?.nextRunAt?.toISOString()).toBe(
      "2026-01-01T01:00:00.000Z",
    );
    expect(await t.backend.scheduleGet({ id: "old.one" })).not.toBeNull();
    expect((await next.schedules.sync({ prune: true })).pruned).toEqual(["old.one"]);
    expect(await t.backend.scheduleGet({ id: "old.one" })).toBeNull();
  });

  it("admin › show and preview › next instants from the cursor and from an expression", async () => {
    const t = await setup("2026-01-01T00:00:30Z");
    t.soniq.schedule({ id: "sync.often", job: t.report, every: 60, args: { day: "x" } });
    await t.soniq.schedules.sync();
    const details = await t.soniq.schedules.show("sync.often", { next: 3 });
    expect(details.upcoming.map((d) => d.toISOString())).toEqual([
      "2026-01-01T00:01:00.000Z",
      "2026-01-01T00:02:00.000Z",
      "2026-01-01T00:03:00.000Z",
    ]);
    const preview = await t.soniq.schedules.preview({
      cron: "0 9 * * 1",
      timezone: "Europe/Paris",
      count: 2,
    });
    expect(preview.map((d) => d.toISOString())).toEqual([
      "2026-01-05T08:00:00.000Z",
      "2026-01-12T08:00:00.000Z",
    ]);
    await expect(t.soniq.schedules.show("nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
