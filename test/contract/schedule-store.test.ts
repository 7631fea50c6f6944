/**
 * The schedule store contract (src/backends/schedule-store.ts) on every backend: the rows, the
 * database clock, and the compare-and-set that takes an occurrence exactly once.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Backend, NewJob, ScheduleSpec } from "../../src/backends/backend.js";
import { MemoryBackend } from "../../src/backends/memory/memory-backend.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

const pgAvailable = await postgresAvailable();
const schemas: string[] = [];
const opened: Backend[] = [];

afterAll(async () => {
  for (const backend of opened.splice(0)) await backend.close();
  await dropSchemas(schemas.splice(0));
  removeTempDirs();
});

const targets: Array<{ label: string; skip: boolean; make: () => Promise<Backend> }> = [
  { label: "memory", skip: false, make: async () => new MemoryBackend() },
  {
    label: "sqlite",
    skip: false,
    make: async () => new SqliteBackend({ path: join(tempDir("soniq-sched-"), "soniq.db") }),
  },
  {
    label: "postgres",
    skip: !pgAvailable,
    make: async () => {
      const schema = freshSchema();
      schemas.push(schema);
      return new PostgresBackend({ connectionString: TEST_DATABASE_URL, schema, poolSize: 6 });
    },
  },
];

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

for (const target of targets) {
  describe.skipIf(target.skip)(`schedule store on ${target.label}`, () => {
    async function fresh(): Promise<Backend> {
      const backend = await target.make();
      opened.push(backend);
      await backend.setup();
      return backend;
    }

    it("schedule store › a new id › is inserted once; a second insert changes nothing", async () => {
      const { schedules } = await fresh();
      const next = new Date(Date.UTC(2030, 0, 1));
      expect(await schedules.saveSchedule(spec(), next, null)).toBe(true);
      expect(await schedules.saveSchedule(spec({ queue: "other" }), null, null)).toBe(false);
      const row = await schedules.getSchedule("reports.nightly");
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
      expect(await schedules.listSchedules()).toHaveLength(1);
    });

    it("schedule store › an update › applies only at the expected revision and bumps it", async () => {
      const { schedules } = await fresh();
      await schedules.saveSchedule(spec(), null, null);
      expect(await schedules.saveSchedule(spec({ everySeconds: 5 }), null, 7)).toBe(false);
      expect(await schedules.saveSchedule(spec({ everySeconds: 5 }), null, 1)).toBe(true);
      expect(await schedules.getSchedule("reports.nightly")).toMatchObject({
        everySeconds: 5,
        revision: 2,
      });
    });

    it("schedule store › due schedules › are decided by the database clock", async () => {
      const backend = await fresh();
      const now = await backend.now();
      await backend.schedules.saveSchedule(
        spec({ id: "a.past" }),
        new Date(now.getTime() - 30_000),
        null,
      );
      await backend.schedules.saveSchedule(
        spec({ id: "a.future" }),
        new Date(now.getTime() + 3_600_000),
        null,
      );
      const due = await backend.schedules.dueSchedules(0);
      expect(due.due.map((r) => r.id)).toEqual(["a.past"]);
      expect(Math.abs(due.now.getTime() - now.getTime())).toBeLessThan(5_000);
      expect(due.nextDueAt?.getTime()).toBe(now.getTime() + 3_600_000);
      expect((await backend.schedules.dueSchedules(60)).due).toEqual([]);
    });

    it("schedule store › a compare-and-set › inserts the job, meta and history once; a stale one writes nothing", async () => {
      const backend = await fresh();
      const { schedules } = backend;
      const occurrence = new Date(Date.UTC(2030, 0, 1, 0, 0, 0));
      const next = new Date(occurrence.getTime() + 60_000);
      await schedules.saveSchedule(spec(), occurrence, null);
      const first = await schedules.advanceSchedule({
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
      const again = await schedules.advanceSchedule({
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
      const row = await schedules.getSchedule("reports.nightly");
      expect(row).toMatchObject({ nextRunAt: next, lastRunAt: occurrence, lastJobActive: true });
      expect(row?.lastJobId).toBe(first.jobs[0]?.id);
      const stored = await backend.getJob(first.jobs[0]?.id ?? "");
      expect(stored?.dedupKey).toBe(`schedule:reports.nightly:${occurrence.toISOString()}`);
      expect(JSON.parse(stored?.meta ?? "null")).toEqual({
        schedule: { id: "reports.nightly", occurrence: occurrence.toISOString() },
      });
      const runs = await schedules.scheduleRuns("reports.nightly", 10);
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ outcome: "enqueued", occurrence, manual: false });
      expect(runs[0]?.jobId).toBe(first.jobs[0]?.id);
    });

    it("schedule store › many concurrent compare-and-sets of one occurrence › exactly one wins", async () => {
      const backend = await fresh();
      const occurrence = new Date(Date.UTC(2030, 0, 1));
      await backend.schedules.saveSchedule(spec(), occurrence, null);
      const attempts = await Promise.all(
        Array.from({ length: 12 }, () =>
          backend.schedules.advanceSchedule({
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
      expect((await backend.stats()).total).toBe(1);
      expect(await backend.schedules.scheduleRuns("reports.nightly", 100)).toHaveLength(1);
    });

    it("schedule store › pause through the compare-and-set › bumps the revision so a tick planned before fails", async () => {
      const { schedules } = await fresh();
      const at = new Date(Date.UTC(2030, 0, 1));
      await schedules.saveSchedule(spec(), at, null);
      expect(
        (
          await schedules.advanceSchedule({
            id: "reports.nightly",
            expect: { nextRunAt: at, revision: 1 },
            nextRunAt: at,
            paused: true,
            runs: [],
          })
        ).advanced,
      ).toBe(true);
      expect(await schedules.getSchedule("reports.nightly")).toMatchObject({
        paused: true,
        revision: 2,
      });
      const stale = await schedules.advanceSchedule({
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
      const { schedules } = await fresh();
      let at = new Date(Date.UTC(2030, 0, 1));
      await schedules.saveSchedule(spec({ historyLimit: 3 }), at, null);
      for (let i = 0; i < 5; i += 1) {
        const next = new Date(at.getTime() + 60_000);
        const result = await schedules.advanceSchedule({
          id: "reports.nightly",
          expect: { nextRunAt: at, revision: 1 },
          nextRunAt: next,
          runs: [{ occurrence: at, outcome: "missed", manual: false, job: null }],
        });
        expect(result.advanced).toBe(true);
        at = next;
      }
      const runs = await schedules.scheduleRuns("reports.nightly", 10);
      expect(runs.map((r) => r.occurrence.getUTCMinutes())).toEqual([4, 3, 2]);
    });

    it("schedule store › remove › deletes the row and its history", async () => {
      const { schedules } = await fresh();
      const at = new Date(Date.UTC(2030, 0, 1));
      await schedules.saveSchedule(spec(), at, null);
      await schedules.advanceSchedule({
        id: "reports.nightly",
        expect: { nextRunAt: at, revision: 1 },
        nextRunAt: null,
        runs: [{ occurrence: at, outcome: "missed", manual: false, job: null }],
      });
      expect(await schedules.removeSchedule("reports.nightly")).toBe(true);
      expect(await schedules.removeSchedule("reports.nightly")).toBe(false);
      expect(await schedules.getSchedule("reports.nightly")).toBeNull();
      expect(await schedules.scheduleRuns("reports.nightly", 10)).toEqual([]);
    });
  });
}
