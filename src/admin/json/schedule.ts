/**
 * Schedules as JSON — the one shape `soniq schedules list|show --json` and the dashboard's
 * `GET /api/schedules` and `GET /api/schedules/:id` share (issue 16): snake_case keys (the CLI's
 * established `--json` shape), instants as ISO-8601 text, a zod schema to check a document against.
 */
import { z } from "zod";
import type { ScheduleRow, ScheduleRunRow } from "../../backends/contract/index.js";
import type { ScheduleDetails } from "../../scheduler/admin.js";

const instant = z.iso.datetime();

/** One schedule as JSON. */
export const scheduleJsonSchema = z.object({
  id: z.string(),
  job_name: z.string(),
  queue: z.string(),
  /** A cron expression (5 or 6 fields, or `@hourly` …), or null for an interval. */
  cron: z.string().nullable(),
  /** The interval in seconds, or null for a cron expression. */
  every_seconds: z.number().nullable(),
  /** IANA zone of `cron`. */
  timezone: z.string(),
  paused: z.boolean(),
  /** The cursor: the next occurrence not yet taken; null when the schedule has ended. */
  next_run_at: instant.nullable(),
  last_run_at: instant.nullable(),
  last_job_id: z.string().nullable(),
  missed: z.object({
    policy: z.string(),
    grace: z.number(),
    within: z.number(),
    max: z.number(),
  }),
  overlap: z.string(),
  start_at: instant.nullable(),
  end_at: instant.nullable(),
});
/** One schedule as JSON. */
export type ScheduleJson = z.infer<typeof scheduleJsonSchema>;

/** One occurrence's outcome as JSON. */
export const scheduleRunJsonSchema = z.object({
  occurrence: instant,
  /** `enqueued`, `late`, `missed`, `skipped_overlap` or `paused`. */
  outcome: z.string(),
  job_id: z.string().nullable(),
  manual: z.boolean(),
  recorded_at: instant,
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
    job_name: row.jobName,
    queue: row.queue,
    cron: row.cron,
    every_seconds: row.everySeconds,
    timezone: row.timezone,
    paused: row.paused,
    next_run_at: row.nextRunAt?.toISOString() ?? null,
    last_run_at: row.lastRunAt?.toISOString() ?? null,
    last_job_id: row.lastJobId,
    missed: {
      policy: row.missedPolicy,
      grace: row.missedGrace,
      within: row.missedWithin,
      max: row.missedMax,
    },
    overlap: row.overlap,
    start_at: row.startAt?.toISOString() ?? null,
    end_at: row.endAt?.toISOString() ?? null,
  };
}

/** A history row as JSON. */
export function scheduleRunJson(run: ScheduleRunRow): ScheduleRunJson {
  return {
    occurrence: run.occurrence.toISOString(),
    outcome: run.outcome,
    job_id: run.jobId,
    manual: run.manual,
    recorded_at: run.recordedAt.toISOString(),
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
