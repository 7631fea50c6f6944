/**
 * Contract area: the schedule store (scheduleSave, scheduleGet, scheduleList, scheduleDue,
 * scheduleAdvance, scheduleRemove, scheduleRuns) — the rows, the database clock, and the
 * compare-and-set that takes an occurrence exactly once. Run on every backend by ../runner.ts.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { NewJob, ScheduleSpec } from "../../../src/backends/contract/index.js";
import type { ContractContext } from "../helpers.js";

function spec(overrides: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    id: "reports.nightly",
    jobName: "report.send",
    queue: "default",
    priority: 0,
    maxAttempts: 3,
    args: '{"a":1}',
    cron: null,
    everySeconds: 60,
    timezone: "UTC",
    startAt: null,
    endAt: null,
    missedPolicy: "latest",
    missedGrace: 60,
    missedWithin: 3600,
    missedMax: 100,
    overlap: "allow",
    historyLimit: 100,
    ...overrides,
  };
}

function job(scheduleId: string, occurrence: Date): NewJob {
  return {
    id: randomUUID(),
    name: "report.send",
    queue: "default",
    args: '{"a":1}',
    priority: 0,
    maxAttempts: 3,
    runAt: null,
    delaySeconds: 0,
    dedupKey: `schedule:${scheduleId}:${occurrence.toISOString()}`,
    meta: JSON.stringify({ schedule: { id: scheduleId, occurrence: occurrence.toISOString() } }),
  };
}

/** The schedule store cases. */
export function schedulesCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("schedules", () => {
    it("schedule store › a new id › is inserted once; a second insert changes nothing", async () => {
      const schedules = await make();
      const next = new Date(Date.UTC(2030, 0, 1));
      expect(
        await schedules.scheduleSave({ spec: spec(), nextRunAt: next, expectRevision: null }),
      ).toBe(true);
      expect(
        await schedules.scheduleSave({
          spec: spec({ queue: "other" }),
          nextRunAt: null,
          expectRevision: null,
        }),
      ).toBe(false);
      const row = await schedules.scheduleGet({ id: "reports.nightly" });
      expect(row).toMatchObject({
        id: "reports.nightly",
        queue: "default",
        everySeconds: 60,
        cron: null,
        nextRunAt: next,
        paused: false,
        revision: 1,
        lastJobActive: false,
      });
      expect(await schedules.scheduleList()).toHaveLength(1);
    });

    it("schedule store › an update › applies only at the expected revision and bumps it", async () => {
      const schedules = await make();
      await schedules.scheduleSave({ spec: spec(), nextRunAt: null, expectRevision: null });
      expect(
        await schedules.scheduleSave({
          spec: spec({ everySeconds: 5 }),
          nextRunAt: null,
          expectRevision: 7,
        }),
      ).toBe(false);
      expect(
        await schedules.scheduleSave({
          spec: spec({ everySeconds: 5 }),
          nextRunAt: null,
          expectRevision: 1,
        }),
      ).toBe(true);
      expect(await schedules.scheduleGet({ id: "reports.nightly" })).toMatchObject({
        everySeconds: 5,
        revision: 2,
      });
    });

    it("schedule store › due schedules › are decided by the database clock", async () => {
      const backend = await make();
      const now = await backend.now();
      await backend.scheduleSave({
        spec: spec({ id: "a.past" }),
        nextRunAt: new Date(now.getTime() - 30_000),
        expectRevision: null,
      });
      await backend.scheduleSave({
        spec: spec({ id: "a.future" }),
        nextRunAt: new Date(now.getTime() + 3_600_000),
        expectRevision: null,
      });
      const due = await backend.scheduleDue({ overdueSeconds: 0 });
      expect(due.due.map((r) => r.id)).toEqual(["a.past"]);
      expect(Math.abs(due.now.getTime() - now.getTime())).toBeLessThan(5_000);
      expect(due.nextDueAt?.getTime()).toBe(now.getTime() + 3_600_000);
      expect((await backend.scheduleDue({ overdueSeconds: 60 })).due).toEqual([]);
    });

    it("schedule store › a compare-and-set › inserts the job, meta and history once; a stale one writes nothing", async () => {
      const backend = await make();
      const schedules = backend;
      const occurrence = new Date(Date.UTC(2030, 0, 1, 0, 0, 0));
      const next = new Date(occurrence.getTime() + 60_000);
      await schedules.scheduleSave({ spec: spec(), nextRunAt: occurrence, expectRevision: null });
      const first = await schedules.scheduleAdvance({
        id: "reports.nightly",
        expect: { nextRunAt: occurrence, revision: 1 },
        nextRunAt: next,
        runs: [
          {
            occurrence,
            outcome: "enqueued",
            manual: false,
            job: job("reports.nightly", occurrence),
          },
        ],
      });
      expect(first.advanced).toBe(true);
      expect(first.jobs).toHaveLength(1);
      const again = await schedules.scheduleAdvance({
        id: "reports.nightly",
        expect: { nextRunAt: occurrence, revision: 1 },
        nextRunAt: next,
        runs: [
          {
            occurrence,
            outcome: "enqueued",
            manual: false,
            job: job("reports.nightly", occurrence),
          },
        ],
      });
      expect(again).toEqual({ advanced: false, jobs: [] });
      const row = await schedules.scheduleGet({ id: "reports.nightly" });
      expect(row).toMatchObject({ nextRunAt: next, lastRunAt: occurrence, lastJobActive: true });
      expect(row?.lastJobId).toBe(first.jobs[0]?.id);
      const stored = await backend.jobGet({ id: first.jobs[0]?.id ?? "" });
      expect(stored?.dedupKey).toBe(`schedule:reports.nightly:${occurrence.toISOString()}`);
      expect(JSON.parse(stored?.meta ?? "null")).toEqual({
        schedule: { id: "reports.nightly", occurrence: occurrence.toISOString() },
      });
      const runs = await schedules.scheduleRuns({ id: "reports.nightly", limit: 10 });
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ outcome: "enqueued", occurrence, manual: false });
      expect(runs[0]?.jobId).toBe(first.jobs[0]?.id);
    });

    it("schedule store › many concurrent compare-and-sets of one occurrence › exactly one wins", async () => {
      const backend = await make();
      const occurrence = new Date(Date.UTC(2030, 0, 1));
      await backend.scheduleSave({ spec: spec(), nextRunAt: occurrence, expectRevision: null });
      const attempts = await Promise.all(
        Array.from({ length: 12 }, () =>
          backend.scheduleAdvance({
            id: "reports.nightly",
            expect: { nextRunAt: occurrence, revision: 1 },
            nextRunAt: new Date(occurrence.getTime() + 60_000),
            runs: [
              {
                occurrence,
                outcome: "enqueued",
                manual: false,
                job: job("reports.nightly", occurrence),
              },
            ],
          }),
        ),
      );
      expect(attempts.filter((a) => a.advanced)).toHaveLength(1);
      expect((await backend.jobStats()).total).toBe(1);
      expect(await backend.scheduleRuns({ id: "reports.nightly", limit: 100 })).toHaveLength(1);
    });

    it("schedule store › pause through the compare-and-set › bumps the revision so a tick planned before fails", async () => {
      const schedules = await make();
      const at = new Date(Date.UTC(2030, 0, 1));
      await schedules.scheduleSave({ spec: spec(), nextRunAt: at, expectRevision: null });
      expect(
        (
          await schedules.scheduleAdvance({
            id: "reports.nightly",
            expect: { nextRunAt: at, revision: 1 },
            nextRunAt: at,
            paused: true,
            runs: [],
          })
        ).advanced,
      ).toBe(true);
      expect(await schedules.scheduleGet({ id: "reports.nightly" })).toMatchObject({
        paused: true,
        revision: 2,
      });
      const stale = await schedules.scheduleAdvance({
        id: "reports.nightly",
        expect: { nextRunAt: at, revision: 1 },
        nextRunAt: new Date(at.getTime() + 60_000),
        runs: [
          { occurrence: at, outcome: "enqueued", manual: false, job: job("reports.nightly", at) },
        ],
      });
      expect(stale.advanced).toBe(false);
    });

    it("schedule store › history past its limit › keeps the newest rows", async () => {
      const schedules = await make();
      let at = new Date(Date.UTC(2030, 0, 1));
      await schedules.scheduleSave({
        spec: spec({ historyLimit: 3 }),
        nextRunAt: at,
        expectRevision: null,
      });
      for (let i = 0; i < 5; i += 1) {
        const next = new Date(at.getTime() + 60_000);
        const result = await schedules.scheduleAdvance({
          id: "reports.nightly",
          expect: { nextRunAt: at, revision: 1 },
          nextRunAt: next,
          runs: [{ occurrence: at, outcome: "missed", manual: false, job: null }],
        });
        expect(result.advanced).toBe(true);
        at = next;
      }
      const runs = await schedules.scheduleRuns({ id: "reports.nightly", limit: 10 });
      expect(runs.map((r) => r.occurrence.getUTCMinutes())).toEqual([4, 3, 2]);
    });

    it("schedule store › remove › deletes the row and its history", async () => {
      const schedules = await make();
      const at = new Date(Date.UTC(2030, 0, 1));
      await schedules.scheduleSave({ spec: spec(), nextRunAt: at, expectRevision: null });
      await schedules.scheduleAdvance({
        id: "reports.nightly",
        expect: { nextRunAt: at, revision: 1 },
        nextRunAt: null,
        runs: [{ occurrence: at, outcome: "missed", manual: false, job: null }],
      });
      expect(await schedules.scheduleRemove({ id: "reports.nightly" })).toBe(true);
      expect(await schedules.scheduleRemove({ id: "reports.nightly" })).toBe(false);
      expect(await schedules.scheduleGet({ id: "reports.nightly" })).toBeNull();
      expect(await schedules.scheduleRuns({ id: "reports.nightly", limit: 10 })).toEqual([]);
    });
  });
}
