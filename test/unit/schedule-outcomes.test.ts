/** The outcome rules (src/scheduler/outcomes.ts): missed-run and overlap policies, pause. */
import { describe, expect, it } from "vitest";
import { type MissedPolicy, planOccurrences } from "../../src/scheduler/outcomes.js";

const H = 3_600_000;
const now = Date.parse("2026-01-01T12:00:30Z");
// Hourly, down for three hours: 09:00, 10:00, 11:00 overdue; 12:00 is 30 s late (within grace).
const threeMissed = [now - 30_000 - 3 * H, now - 30_000 - 2 * H, now - 30_000 - H];
const missed = (policy: MissedPolicy["policy"], within = 4 * 3600): MissedPolicy => ({
  policy,
  grace: 60,
  within,
  max: 100,
});
const plan = (
  due: number[],
  policy: MissedPolicy,
  extra: Partial<{ overlap: "allow" | "skip"; paused: boolean; previousActive: boolean }> = {},
) =>
  planOccurrences({
    due,
    nowMs: now,
    missed: policy,
    overlap: extra.overlap ?? "allow",
    paused: extra.paused ?? false,
    previousActive: extra.previousActive ?? false,
  }).map((p) => p.outcome);

describe("outcomes › missed-run policy", () => {
  it("outcomes › skip after 3 h down › 0 jobs, 3 missed", () => {
    expect(plan(threeMissed, missed("skip"))).toEqual(["missed", "missed", "missed"]);
  });

  it("outcomes › latest after 3 h down › 1 late job (the newest), 2 missed", () => {
    expect(plan(threeMissed, missed("latest"))).toEqual(["missed", "missed", "late"]);
  });

  it("outcomes › all after 3 h down › 3 late jobs", () => {
    expect(plan(threeMissed, missed("all"))).toEqual(["late", "late", "late"]);
  });

  it("outcomes › all with max 2 › 2 late, the rest missed", () => {
    expect(plan(threeMissed, { ...missed("all"), max: 2 })).toEqual(["late", "late", "missed"]);
  });

  it("outcomes › outside the window › missed whatever the policy", () => {
    expect(plan(threeMissed, missed("all", 2.5 * 3600))).toEqual(["missed", "late", "late"]);
    expect(plan(threeMissed, missed("latest", 1800))).toEqual(["missed", "missed", "missed"]);
  });

  it("outcomes › latest with an on-time occurrence after the misses › the on-time one is the job", () => {
    expect(plan([...threeMissed, now - 30_000], missed("latest"))).toEqual([
      "missed",
      "missed",
      "missed",
      "enqueued",
    ]);
  });

  it("outcomes › within grace › enqueued, not late", () => {
    expect(plan([now - 59_000], missed("skip"))).toEqual(["enqueued"]);
    expect(plan([now - 61_000], missed("latest"))).toEqual(["late"]);
  });
});

describe("outcomes › overlap and pause", () => {
  it("outcomes › overlap skip with the previous job active › skipped_overlap", () => {
    expect(plan([now], missed("latest"), { overlap: "skip", previousActive: true })).toEqual([
      "skipped_overlap",
    ]);
    expect(plan([now], missed("latest"), { overlap: "allow", previousActive: true })).toEqual([
      "enqueued",
    ]);
  });

  it("outcomes › overlap skip with several jobs in one tick › only the first becomes a job", () => {
    expect(plan(threeMissed, missed("all"), { overlap: "skip" })).toEqual([
      "late",
      "skipped_overlap",
      "skipped_overlap",
    ]);
  });

  it("outcomes › paused › every due occurrence is recorded paused", () => {
    expect(plan(threeMissed, missed("all"), { paused: true })).toEqual([
      "paused",
      "paused",
      "paused",
    ]);
  });
});
