/**
 * Schedules as JSON — the one shape `soniq schedules list|show --json` and the dashboard's
 * `GET /api/schedules` and `GET /api/schedules/:id` share (issue 16): camelCase keys (the one key
 * style of every JSON output, docs/operations.md), instants as ISO-8601 text, a zod schema to
 * check a document against.
 */
import { z } from "zod";
import type { ScheduleRow, ScheduleRunRow } from "../../backends/contract/index.js";
import type { ScheduleDetails } from "../../scheduler/admin.js";

const instant = z.iso.datetime();

/** One schedule as JSON. */
export const scheduleJsonSchema = z.object({
  id: z.string(),
  jobName: z.string(),
  queue: z.string(),
  /** A cron expression (5 or 6 fields, or `@hourly` …), or null for an interval. */
  cron: z.string().nullable(),
  /** The interval in seconds, or null for a cron expression. */
  everySeconds: z.number().nullable(),
  /** IANA zone of `cron`. */
  timezone: z.string(),
  paused: z.boolean(),
  /** The cursor: the next occurrence not yet taken; null when the schedule has ended. */
  nextRunAt: instant.nullable(),
  lastRunAt: instant.nullable(),
  lastJobId: z.string().nullable(),
  missed: z.object({
    policy: z.string(),
    grace: z.number(),
    within: z.number(),
    max: z.number(),
  }),
  overlap: z.string(),
  startAt: instant.nullable(),
  endAt: instant.nullable(),
});
/** One schedule as JSON. */
export type ScheduleJson = z.infer<typeof scheduleJsonSchema>;

/** One occurrence's outcome as JSON. */
export const scheduleRunJsonSchema = z.object({
  occurrence: instant,
  /** `enqueued`, `late`, `missed`, `skipped_overlap` or `paused`. */
  outcome: z.string(),
  jobId: z.string().nullable(),
  manual: z.boolean(),
  recordedAt: instant,
});
/** One occurrence's outcome as JSON. */
export type ScheduleRunJson = z.infer<typeof scheduleRunJsonSchema>;

/** A schedule with its next instants and its history (newest first), as JSON. */
export const scheduleDetailJsonSchema = scheduleJsonSchema.extend({
  upcoming: z.array(instant),
  runs: z.array(scheduleRunJsonSchema),
});
/** A schedule with its next instants and history, as JSON. */
export type ScheduleDetailJson = z.infer<typeof scheduleDetailJsonSchema>;

/** A schedule row as JSON. */
export function scheduleJson(row: ScheduleRow): ScheduleJson {
  return {
    id: row.id,
    jobName: row.jobName,
    queue: row.queue,
    cron: row.cron,
    everySeconds: row.everySeconds,
    timezone: row.timezone,
    paused: row.paused,
    nextRunAt: row.nextRunAt?.toISOString() ?? null,
    lastRunAt: row.lastRunAt?.toISOString() ?? null,
    lastJobId: row.lastJobId,
    missed: {
      policy: row.missedPolicy,
      grace: row.missedGrace,
      within: row.missedWithin,
      max: row.missedMax,
    },
    overlap: row.overlap,
    startAt: row.startAt?.toISOString() ?? null,
    endAt: row.endAt?.toISOString() ?? null,
  };
}

/** A history row as JSON. */
export function scheduleRunJson(run: ScheduleRunRow): ScheduleRunJson {
  return {
    occurrence: run.occurrence.toISOString(),
    outcome: run.outcome,
    jobId: run.jobId,
    manual: run.manual,
    recordedAt: run.recordedAt.toISOString(),
  };
}

/** `soniq.schedules.show(…)` as JSON. */
export function scheduleDetailJson(details: ScheduleDetails): ScheduleDetailJson {
  return {
    ...scheduleJson(details.schedule),
    upcoming: details.upcoming.map((d) => d.toISOString()),
    runs: details.runs.map(scheduleRunJson),
  };
}
