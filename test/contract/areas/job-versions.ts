/**
 * Contract area: job versions (issue 25 item 2). A job carries the version it was enqueued with
 * (default 1) through its claim, its finish, the dead-letter queue and a replay; a claim given
 * `versions` takes a job only when the claimer's version of its name is at least the job's (the
 * plain claim and the `max_running` claim); a job of a higher version stays queued, untouched.
 * Run on every backend by ../runner.ts.
 */
import { describe, expect, it } from "vitest";
import type { ScheduleSpec } from "../../../src/backends/contract/index.js";
import { occurrenceJob } from "../../../src/scheduler/scheduler.js";
import { waitFor } from "../../helpers/wait.js";
import { type ContractContext, newJob, ownerOf } from "../helpers.js";
import { soniqOn } from "./admin-helpers.js";

/** A schedule spec of job `report.send`, every minute. */
function scheduleSpec(overrides: Partial<ScheduleSpec> = {}): ScheduleSpec {
  return {
    id: "reports.minutely",
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

/** The job-version cases. */
export function jobVersionCases(ctx: ContractContext): void {
  const { make } = ctx;
  describe("job versions", () => {
    it("jobEnqueue then jobGet and jobClaim › no version, version 2 › read as 1 and 2", async () => {
      const b = await make();
      const plain = newJob({ priority: 0 });
      const v2 = newJob({ priority: 1, version: 2 });
      await b.jobEnqueue({ jobs: [plain, v2] });
      expect((await b.jobGet({ id: plain.id }))?.version).toBe(1);
      expect((await b.jobGet({ id: v2.id }))?.version).toBe(2);
      const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(claimed.map((c) => [c.id, c.version])).toEqual([
        [plain.id, 1],
        [v2.id, 2],
      ]);
    });

    it("jobClaim › a version-2 job › not claimed at version 1, stays queued untouched; claimed at 2 and at 3", async () => {
      const b = await make();
      const v2 = newJob({ name: "mail.send", version: 2, priority: -5 });
      const v1 = newJob({ name: "mail.send" });
      const other = newJob({ name: "other.job", version: 3 });
      await b.jobEnqueue({ jobs: [v2, v1, other] });
      const before = await b.jobGet({ id: v2.id });
      const old = await b.jobClaim({
        workerId: "old",
        queues: null,
        names: ["other.job", "mail.send"],
        versions: [1, 1],
        limit: 10,
      });
      expect(old.map((c) => c.id)).toEqual([v1.id]);
      expect(await b.jobGet({ id: v2.id })).toEqual(before);
      expect(await b.jobGet({ id: other.id })).toMatchObject({ status: "queued", attempts: 0 });
      // One queue, then several queues: the other claim statements filter the same way.
      expect(
        await b.jobClaim({
          workerId: "old",
          queues: ["default"],
          names: ["mail.send"],
          versions: [1],
          limit: 10,
        }),
      ).toEqual([]);
      expect(
        await b.jobClaim({
          workerId: "old",
          queues: ["default", "x"],
          names: ["mail.send", "other.job"],
          versions: [1, 2],
          limit: 10,
        }),
      ).toEqual([]);
      const fresh = await b.jobClaim({
        workerId: "new",
        queues: ["default"],
        names: ["mail.send"],
        versions: [2],
        limit: 10,
      });
      expect(fresh.map((c) => [c.id, c.version])).toEqual([[v2.id, 2]]);
      const newer = await b.jobClaim({
        workerId: "newer",
        queues: null,
        names: ["mail.send", "other.job"],
        versions: [3, 3],
        limit: 10,
      });
      expect(newer.map((c) => c.id)).toEqual([other.id]);
    });

    it("jobClaim › names without versions › any version", async () => {
      const b = await make();
      const v7 = newJob({ name: "mail.send", version: 7 });
      await b.jobEnqueue({ jobs: [v7] });
      const claimed = await b.jobClaim({
        workerId: "w",
        queues: null,
        names: ["mail.send"],
        limit: 10,
      });
      expect(claimed.map((c) => c.id)).toEqual([v7.id]);
    });

    it("jobClaim › a queue with maxRunning › the limited claim skips a newer version too", async () => {
      const b = await make();
      const soniq = soniqOn(b);
      const v2 = newJob({ name: "mail.send", queue: "lim", version: 2, priority: -5 });
      const v1 = newJob({ name: "mail.send", queue: "lim" });
      await b.jobEnqueue({ jobs: [v2, v1] });
      await soniq.queues.set("lim", { maxRunning: 5 });
      const claimed: string[] = [];
      // The limited-queue list may be cached for a second (PostgreSQL): wait for the limited path.
      await waitFor(
        async () => {
          const rows = await b.jobClaim({
            workerId: "w1",
            queues: ["lim"],
            names: ["mail.send"],
            versions: [1],
            limit: 10,
          });
          claimed.push(...rows.map((j) => j.id));
          return claimed.length > 0;
        },
        3000,
        "the version-1 job claimed",
      );
      expect(claimed).toEqual([v1.id]);
      expect(await b.jobGet({ id: v2.id })).toMatchObject({ status: "queued", attempts: 0 });
      const upgraded = await b.jobClaim({
        workerId: "w2",
        queues: ["lim"],
        names: ["mail.send"],
        versions: [2],
        limit: 10,
      });
      expect(upgraded.map((c) => c.id)).toEqual([v2.id]);
    });

    it("schedule store › saved without a version, then with version 2 › reads 1, then 2; its occurrence's job carries 2", async () => {
      const b = await make();
      const next = new Date(Date.UTC(2030, 0, 1));
      await b.scheduleSave({ spec: scheduleSpec(), nextRunAt: next, expectRevision: null });
      expect((await b.scheduleGet({ id: "reports.minutely" }))?.jobVersion).toBe(1);
      expect(
        await b.scheduleSave({
          spec: scheduleSpec({ jobVersion: 2, args: '{"b":2}' }),
          nextRunAt: next,
          expectRevision: 1,
        }),
      ).toBe(true);
      const row = await b.scheduleGet({ id: "reports.minutely" });
      expect(row).toMatchObject({ jobVersion: 2, args: '{"b":2}', revision: 2 });
      if (!row) throw new Error("no schedule");
      const job = occurrenceJob(
        row,
        { id: row.id, occurrence: next.toISOString(), late: false, manual: false },
        `reports.minutely:${next.toISOString()}`,
      );
      await b.jobEnqueue({ jobs: [job] });
      expect((await b.jobGet({ id: job.id }))?.version).toBe(2);
    });

    it("a version-3 job › finished, and dead-lettered then replayed › keeps version 3", async () => {
      const b = await make();
      const done = newJob({ version: 3, priority: 0 });
      const dead = newJob({ version: 3, priority: 1 });
      await b.jobEnqueue({ jobs: [done, dead] });
      const [c1, c2] = await b.jobClaim({ workerId: "w", queues: null, limit: 2 });
      if (!c1 || !c2) throw new Error("nothing claimed");
      await b.jobComplete({
        id: c1.id,
        owner: ownerOf(c1),
        result: null,
        resultRetentionSeconds: 3600,
      });
      expect(await b.jobGet({ id: done.id })).toMatchObject({ status: "done", version: 3 });
      await b.jobDeadLetter({
        id: c2.id,
        owner: ownerOf(c2),
        error: "boom",
        reason: "max_attempts_exceeded",
        countAttempt: true,
      });
      expect((await b.deadLetterGet({ id: dead.id }))?.version).toBe(3);
      expect(await b.deadLetterReplay({ id: dead.id })).toBe(true);
      expect(await b.jobGet({ id: dead.id })).toMatchObject({ status: "queued", version: 3 });
    });
  });
}
