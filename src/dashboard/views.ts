/**
 * The HTTP API's response shapes (documented in docs/dashboard.openapi.json; the page's types) and
 * how they are built from the admin API's views: redacted, values as truncated previews, errors
 * cut, dates as ISO text by JSON.
 */
import type { DashboardUser, ResolvedOptions } from "./options.js";
import { type Preview, preview, previewText } from "./preview.js";
import type { SourceJob, SourceTimelineEntry } from "./source.js";

/** Preview size of arguments in lists, in bytes. */
export const LIST_PREVIEW_BYTES = 256;
/** Error text is cut to this many bytes in lists and details. */
export const ERROR_PREVIEW_BYTES = 4096;

/** A job or dead letter in a list. */
export interface JobSummary {
  id: string;
  name: string;
  queue: string;
  /** `queued`, `processing`, `done`, `cancelled` or `dead_letter`. */
  status: string;
  priority: number;
  attempts: number;
  maxAttempts: number;
  interruptions: number;
  scheduledAt: Date;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  workerId: string | null;
  lastError: string | null;
  cancelRequestedAt: Date | null;
  progress: { fraction: number; message: string | null } | null;
  /** Dead letters: why and when. */
  reason: string | null;
  deadAt: Date | null;
  args: Preview;
}

/** A job with its values and timeline. */
export interface JobDetailView extends JobSummary {
  dedupKey: string | null;
  updatedAt: Date;
  result: Preview;
  timeline: SourceTimelineEntry[];
}

type Options = ResolvedOptions<DashboardUser>;

function redactedError(o: Options, job: SourceJob): string | null {
  const text = job.lastError;
  if (text === null) return null;
  return previewText(o.redact.error ? o.redact.error(job.name, text) : text, ERROR_PREVIEW_BYTES);
}

/** The arguments to show (after `redact.args`). */
export function shownArgs(o: Options, job: SourceJob): unknown {
  return o.redact.args ? o.redact.args(job.name, job.args) : job.args;
}

/** The result to show (after `redact.result`). */
export function shownResult(o: Options, job: SourceJob): unknown {
  const result = "result" in job ? job.result : null;
  return o.redact.result ? o.redact.result(job.name, result) : result;
}

/** A list row. */
export function jobSummary(o: Options, job: SourceJob): JobSummary {
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
    scheduledAt: job.scheduledAt,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    finishedAt: job.finishedAt,
    workerId: job.workerId,
    lastError: redactedError(o, job),
    cancelRequestedAt: live?.cancelRequestedAt ?? null,
    progress: live?.progress
      ? { fraction: live.progress.fraction, message: live.progress.message }
      : null,
    reason: dead?.reason ?? null,
    deadAt: dead?.deadAt ?? null,
    args: preview(shownArgs(o, job), LIST_PREVIEW_BYTES, o.hideArgs),
  };
}

/** A detail view; `showArgs` overrides `hideArgs` for this response. */
export function jobDetail(
  o: Options,
  job: SourceJob & { timeline?: SourceTimelineEntry[] },
  showArgs: boolean,
): JobDetailView {
  const timeline = (job.timeline ?? []).map((entry) => ({
    ...entry,
    detail: previewText(entry.detail, ERROR_PREVIEW_BYTES),
  }));
  return {
    ...jobSummary(o, job),
    args: preview(shownArgs(o, job), o.maxPreviewBytes, o.hideArgs && !showArgs),
    dedupKey: job.dedupKey,
    updatedAt: job.updatedAt,
    result: preview(shownResult(o, job), o.maxPreviewBytes),
    timeline,
  };
}
