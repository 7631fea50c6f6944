/**
 * Exactly once under churn, short in-suite version (`npm run chaos:schedules` is the several-minute
 * one): five workers on PostgreSQL and three on a SQLite file run an `every: 1` schedule for 20 s
 * under random SIGKILL, SIGTERM and restarts; every occurrence gets one history row, every
 * enqueued/late one exactly one job, and no dedup key appears twice.
 */
import { describe, expect, it } from "vitest";
import { check, scheduleChurn } from "../../chaos/schedule-churn.js";
import { postgresAvailable, TEST_DATABASE_URL } from "../helpers/postgres.js";

const pgUp = await postgresAvailable();

describe("schedule churn", () => {
  it("churn › check › finds a duplicate, a gap, a missing job and a job for a miss", () => {
    const at = Date.parse("2026-01-01T00:00:00Z");
    const key = (ms: number) => `schedule:chaos.every_second:${new Date(ms).toISOString()}`;
    const result = check(
      [
        { occurrence: at, outcome: "enqueued", job_id: "a" },
        { occurrence: at, outcome: "enqueued", job_id: "b" },
        { occurrence: at + 2000, outcome: "late", job_id: null },
        { occurrence: at + 3000, outcome: "missed", job_id: null },
      ],
      [
        { id: "a", dedup_key: key(at), meta: null },
        { id: "b", dedup_key: key(at), meta: null },
        { id: "c", dedup_key: key(at + 3000), meta: null },
      ],
    );
    expect(result.violations.join("\n")).toMatch(/2 history rows/);
    expect(result.violations.join("\n")).toMatch(/00:00:01.000Z has no history row/);
    expect(result.violations.join("\n")).toMatch(/appears 2 times/);
    expect(result.violations.join("\n")).toMatch(/late occurrence .* has no job/);
    expect(result.violations.join("\n")).toMatch(/missed occurrence .* has a job/);
  });

  it("churn › 5 PostgreSQL + 3 SQLite workers, every: 1, 20 s of SIGKILL/SIGTERM/restarts › exactly one job per occurrence, one history row each", async () => {
    const lines: string[] = [];
    const reports = await scheduleChurn({
      postgresWorkers: pgUp ? 5 : 0,
      sqliteWorkers: 3,
      durationMs: 20_000,
      faultEveryMs: 2_000,
      // The check below needs more than 5: the churn goes on until it injected 6 (a loaded
      // machine injected 5 in 20 s once).
      minFaults: 6,
      postgresUrl: TEST_DATABASE_URL,
      log: (line) => lines.push(line),
    });
    expect(reports).toHaveLength(pgUp ? 2 : 1);
    for (const report of reports) {
      expect(report.violations, `${report.store}\n${lines.join("\n")}`).toEqual([]);
      // Not vacuous: the schedule kept firing through the churn. A bound, not a count: worker
      // start-up and restarts eat into the 20 s (14 was seen on a quiet CI machine).
      expect(report.occurrences).toBeGreaterThanOrEqual(10);
      expect(report.faults.sigkill + report.faults.sigterm + report.faults.restart).toBeGreaterThan(
        5,
      );
    }
  }, 90_000);
});
