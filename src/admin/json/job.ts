/**
 * Jobs and dead letters as JSON — the one shape `soniq jobs … --json`, `soniq dlq … --json` and the
 * dashboard's `GET /api/jobs`, `GET /api/jobs/:id` and `GET /api/dead-letter` share (issue 16): camelCase
 * keys, instants as ISO-8601 text, a zod schema to check a document against. The value fields
 * (`args`, `result`) are the one difference by design: the CLI prints the whole value, the
 * dashboard a server-cut preview (`{ json, bytes, truncated, hidden }`), so the schema lets them be
 * any JSON.
 */
import { z } from "zod";
import type {
  CheckpointView,
  DeadLetterView,
  JobListView,
  JobView,
  StepView,
  TimelineEntry,
} from "../views.js";

const instant = z.iso.datetime();

/** One timeline entry as JSON. */
export const timelineEntryJsonSchema = z.object({
  at: instant,
  /**
   * `enqueued`, `started`, `done`, `checkpoint` (the last one), `step` (one per step, in its
   * current state), a stored event kind (`nack`, `recovered`, `step_resolved`, …) or a remote
   * phase.
   */
  kind: z.string(),
  attempt: z.number().int().nullable(),
  workerId: z.string().nullable(),
  detail: z.string().nullable(),
});
/** One timeline entry as JSON. */
export type TimelineEntryJson = z.infer<typeof timelineEntryJsonSchema>;

/** The fields every job and dead letter has, as JSON. */
export const jobJsonSchema = z.object({
  id: z.string(),
  name: z.string(),
  queue: z.string(),
  /**
   * `queued` (due), `scheduled` (queued, due at `scheduledAt`, later), `processing`, `done`,
   * `cancelled` or `dead_letter`.
   */
  status: z.enum(["queued", "scheduled", "processing", "done", "cancelled", "dead_letter"]),
  priority: z.number().int(),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  interruptions: z.number().int(),
  /**
   * The version of the job definition that enqueued it (>= 1; 1 for jobs from before job
   * versions): a worker claims it only with a definition of at least this version.
   */
  version: z.number().int(),
  scheduledAt: instant,
  createdAt: instant,
  startedAt: instant.nullable(),
  finishedAt: instant.nullable(),
  workerId: z.string().nullable(),
  lastError: z.string().nullable(),
  cancelRequestedAt: instant.nullable(),
  progress: z.object({ fraction: z.number(), message: z.string().nullable() }).nullable(),
  /** Dead letters: why (`max_attempts_exceeded`, `crash_loop`, …); null for a job. */
  reason: z.string().nullable(),
  /** Dead letters: when; null for a job. */
  deadAt: instant.nullable(),
  /** The arguments: the whole value (CLI) or a preview (dashboard). */
  args: z.unknown(),
});
/** A job or dead letter as JSON (see {@link jobJsonSchema}). */
export type JobJson = z.infer<typeof jobJsonSchema>;

/** A job's checkpoint as JSON (docs/checkpoints.md); null when it has none. */
export const checkpointJsonSchema = z.object({
  /** Checkpoints written over all its attempts (coalesced calls count once). */
  count: z.number().int(),
  /** When the last one was written (database clock), or null when not recorded. */
  at: instant.nullable(),
  /** The stored state's size, in UTF-8 **bytes** of its JSON text. */
  bytes: z.number().int(),
  /** The state the next attempt reads as `ctx.resume`: the whole value (CLI) or a preview (dashboard). */
  value: z.unknown(),
});

/** One durable step of a job as JSON (docs/checkpoints.md). */
export const stepJsonSchema = z.object({
  name: z.string(),
  /** `done`, `running` (an effect step started; outcome unknown if its attempt ended) or `frozen`. */
  state: z.enum(["running", "done", "frozen"]),
  /** When it reached that state (the recording process's clock), or null when not recorded. */
  at: instant.nullable(),
});

/** A job or dead letter with its values and timeline, as JSON (`jobs show`, `GET /api/jobs/:id`). */
export const jobDetailJsonSchema = jobJsonSchema.extend({
  dedupKey: z.string().nullable(),
  updatedAt: instant,
  /** The result: the whole value (CLI) or a preview (dashboard). */
  result: z.unknown(),
  /** The checkpoint (`ctx.checkpoint`); null when none (always for a dead letter). */
  checkpoint: checkpointJsonSchema.nullable(),
  /** The durable steps (`ctx.step`); empty when none (always for a dead letter). */
  steps: z.array(stepJsonSchema),
  timeline: z.array(timelineEntryJsonSchema),
});
/** A job with its timeline as JSON. */
export type JobDetailJson = z.infer<typeof jobDetailJsonSchema>;

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

/**
 * The shared fields of a job or dead letter (`args` is the value as is; the caller may replace it
 * with a preview). `lastError` is given when the caller redacts or cuts it.
 */
export function jobJson(job: JobListView | DeadLetterView, lastError = job.lastError): JobJson {
  const dead = "reason" in job ? job : null;
  const live = "status" in job ? job : null;
  return {
    id: job.id,
    name: job.name,
    queue: job.queue,
    status: live ? live.status : "dead_letter",
    priority: job.priority,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    interruptions: job.interruptions,
    version: job.version,
    scheduledAt: job.scheduledAt.toISOString(),
    createdAt: job.createdAt.toISOString(),
    startedAt: iso(job.startedAt),
    finishedAt: iso(job.finishedAt),
    workerId: job.workerId,
    lastError,
    cancelRequestedAt: iso(live?.cancelRequestedAt ?? null),
    progress: live?.progress
      ? { fraction: live.progress.fraction, message: live.progress.message }
      : null,
    reason: dead?.reason ?? null,
    deadAt: iso(dead?.deadAt ?? null),
    args: job.args,
  };
}

/** A timeline entry as JSON (`detail` may be cut by the caller first). */
export function timelineEntryJson(entry: TimelineEntry | TimelineEntryLike): TimelineEntryJson {
  return {
    at: entry.at.toISOString(),
    kind: entry.kind,
    attempt: entry.attempt,
    workerId: entry.workerId,
    detail: entry.detail,
  };
}

/** A timeline entry of any kind (the admin API's, or one the dashboard adds for a remote phase). */
export interface TimelineEntryLike {
  at: Date;
  kind: string;
  attempt: number | null;
  workerId: string | null;
  detail: string | null;
}

/**
 * A job with its whole arguments but no result and no timeline, as JSON (the CLI's list rows:
 * `jobs list --json`, `dlq list --json`, the lines of `dlq export`). Lists carry no result;
 * `jobs show --json` does.
 */
export const jobValuesJsonSchema = jobDetailJsonSchema.omit({
  timeline: true,
  result: true,
  checkpoint: true,
  steps: true,
});
/** A job with its whole arguments, as JSON (see {@link jobValuesJsonSchema}). */
export type JobValuesJson = z.infer<typeof jobValuesJsonSchema>;

/** `jobs list --json`: one page of jobs, newest first, and the cursor of the next (or null). */
export const jobPageJsonSchema = z.object({
  jobs: z.array(jobValuesJsonSchema),
  nextCursor: z.string().nullable(),
});

/** `dlq list --json`: one page of dead letters, newest first, and the cursor of the next. */
export const deadLetterPageJsonSchema = z.object({
  deadLetters: z.array(jobValuesJsonSchema),
  nextCursor: z.string().nullable(),
});

/** The shared fields plus dedup key and last write (the whole arguments; no result). */
export function jobValuesJson(job: JobListView | DeadLetterView): JobValuesJson {
  return {
    ...jobJson(job),
    dedupKey: job.dedupKey,
    updatedAt: job.updatedAt.toISOString(),
  };
}

/**
 * A job or dead letter with its timeline as JSON: the shared fields plus dedup key, last write,
 * result (null for a dead letter) and timeline (the CLI's `jobs show` / `dlq show`).
 */
export function jobDetailJson(
  job: (JobView | DeadLetterView) & { timeline: readonly TimelineEntryLike[] },
): JobDetailJson {
  const live = "result" in job ? job : null;
  return {
    ...jobValuesJson(job),
    result: live ? live.result : null,
    checkpoint: live?.checkpoint ? checkpointJson(live.checkpoint) : null,
    steps: (live?.steps ?? []).map(stepJson),
    timeline: job.timeline.map(timelineEntryJson),
  };
}

/** A checkpoint as JSON (`value` as is; the dashboard replaces it with a preview). */
export function checkpointJson(cp: CheckpointView): z.infer<typeof checkpointJsonSchema> {
  return { count: cp.count, at: iso(cp.at), bytes: cp.bytes, value: cp.value };
}

/** A step as JSON. */
export function stepJson(step: StepView): z.infer<typeof stepJsonSchema> {
  return { name: step.name, state: step.state, at: iso(step.at) };
}
