/**
 * The outcome rules of a schedule tick (pure): given the occurrences that are due and the
 * database's now, which become jobs and which are recorded `missed`, `skipped_overlap` or
 * `paused` — the missed-run and overlap policies of docs/schedules.md, applied by the scheduler.
 * Instants are milliseconds since the epoch; `grace` and `within` are **seconds**.
 */

import type { ScheduleOutcome } from "../backends/contract/index.js";

/** What happened to one occurrence (the contract's words: backend.ts `ScheduleOutcome`). */
export type OccurrenceOutcome = ScheduleOutcome;

/** Every outcome, in documentation order. */
export const OCCURRENCE_OUTCOMES: readonly OccurrenceOutcome[] = [
  "enqueued",
  "late",
  "missed",
  "skipped_overlap",
  "paused",
];

/** What a schedule does with occurrences overdue by more than `grace`. */
export type MissedPolicyName = "skip" | "latest" | "all";

/** The missed-run policy of a schedule, resolved (every field set). */
export interface MissedPolicy {
  /** `skip`: record them `missed`; `latest`: enqueue the newest within the window; `all`: each within the window. */
  policy: MissedPolicyName;
  /** Seconds: an occurrence overdue by at most this much is on time (enqueued, not late). */
  grace: number;
  /** Seconds: the catch-up window; an occurrence overdue by more is always `missed`. */
  within: number;
  /** `all` only: at most this many late jobs per tick; the rest are recorded `missed`. */
  max: number;
}

/** Overlap policy: `skip` records `skipped_overlap` while the previous job is queued or running. */
export type OverlapPolicy = "allow" | "skip";

/** One occurrence's decision. */
export interface PlannedOccurrence {
  /** The occurrence instant, ms since the epoch. */
  occurrence: number;
  outcome: OccurrenceOutcome;
}

/** Inputs of {@link planOccurrences}. */
export interface PlanInput {
  /** Due occurrences (each `<= nowMs`), ascending, ms since the epoch. */
  due: readonly number[];
  /** The database's now, ms since the epoch. */
  nowMs: number;
  missed: MissedPolicy;
  overlap: OverlapPolicy;
  /** The schedule is paused: every due occurrence is recorded `paused`. */
  paused: boolean;
  /** The previous occurrence's job is still queued or processing. */
  previousActive: boolean;
}

/**
 * Decides each due occurrence's outcome. `enqueued` and `late` occurrences become jobs (`late`:
 * overdue by more than `grace`, enqueued by catch-up inside the window). With overlap `skip`, an
 * occurrence that would become a job while the previous one is active (or one enqueued earlier in
 * the same plan) is `skipped_overlap` instead.
 */
export function planOccurrences(input: PlanInput): PlannedOccurrence[] {
  const { due, nowMs, missed } = input;
  if (input.paused) return due.map((occurrence) => ({ occurrence, outcome: "paused" }));
  const graceMs = missed.grace * 1000;
  const withinMs = Math.max(missed.within, missed.grace) * 1000;
  const overdue = (o: number) => nowMs - o > graceMs;
  const inWindow = (o: number) => nowMs - o <= withinMs;
  const anyOnTime = due.some((o) => !overdue(o));
  // `latest` enqueues only the newest catchable occurrence, and none when an on-time one follows.
  let latest: number | undefined;
  if (missed.policy === "latest" && !anyOnTime) {
    for (const o of due) if (inWindow(o)) latest = o;
  }
  let lateBudget = missed.max;
  let active = input.previousActive;
  return due.map((occurrence) => {
    let outcome: OccurrenceOutcome;
    if (!overdue(occurrence)) outcome = "enqueued";
    else if (!inWindow(occurrence) || missed.policy === "skip") outcome = "missed";
    else if (missed.policy === "latest") outcome = occurrence === latest ? "late" : "missed";
    else if (lateBudget > 0) {
      lateBudget -= 1;
      outcome = "late";
    } else outcome = "missed";
    if ((outcome === "enqueued" || outcome === "late") && input.overlap === "skip") {
      if (active) outcome = "skipped_overlap";
      else active = true;
    }
    return { occurrence, outcome };
  });
}

/** True for the outcomes that insert a job. */
export function makesJob(outcome: OccurrenceOutcome): boolean {
  return outcome === "enqueued" || outcome === "late";
}

/** The dedup key of an occurrence's job: `schedule:<id>:<occurrence as ISO-8601 UTC>`. */
export function occurrenceDedupKey(scheduleId: string, occurrenceMs: number): string {
  return `schedule:${scheduleId}:${new Date(occurrenceMs).toISOString()}`;
}

/** The dedup key of a manual run (`run now`): `schedule:<id>:manual:<uuid>`. */
export function manualDedupKey(scheduleId: string, uuid: string): string {
  return `schedule:${scheduleId}:manual:${uuid}`;
}
