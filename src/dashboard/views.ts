/**
 * The HTTP API's response shapes (documented in docs/dashboard.openapi.json; the page's types) and
 * how they are built from the admin API's views: redacted, values as truncated previews, errors
 * cut, dates as ISO text by JSON.
 */
import {
  checkpointJson,
  type JobDetailJson,
  type JobJson,
  jobJson,
  stepJson,
  type TimelineEntryLike,
  timelineEntryJson,
} from "../admin/json/index.js";
import type { DashboardUser, ResolvedOptions } from "./options.js";
import { type Preview, preview, previewText } from "./preview.js";
import type { SourceJob, SourceListJob } from "./source.js";
import { shownErrorText } from "./stack-frames.js";

/** Preview size of arguments in lists, in bytes. */
export const LIST_PREVIEW_BYTES = 256;
/** Error text is cut to this many bytes in lists and details. */
export const ERROR_PREVIEW_BYTES = 4096;

/**
 * A job or dead letter in a list: the shape the CLI's `--json` prints too (admin/json/job.ts),
 * with the arguments as a server-cut preview.
 */
export type JobSummary = Omit<JobJson, "args"> & { args: Preview };

/** A job with its values (previews) and timeline; the CLI's `jobs show --json` shape otherwise. */
export type JobDetailView = Omit<JobDetailJson, "args" | "result" | "checkpoint"> & {
  args: Preview;
  result: Preview;
  /** The checkpoint with its state as a preview (hidden like arguments under `hideArgs`). */
  checkpoint: (Omit<NonNullable<JobDetailJson["checkpoint"]>, "value"> & { value: Preview }) | null;
};

type Options = ResolvedOptions<DashboardUser>;

/**
 * An error text as the user sees it, whole: after `redact.error`, with its stack frames hidden
 * or shown with relative paths (`stackTraces`, decided per request in `showStacks`).
 */
export function shownError(o: Options, jobName: string, text: string | null): string | null {
  if (text === null) return null;
  return shownErrorText(o.redact.error ? o.redact.error(jobName, text) : text, o.showStacks);
}

function redactedError(o: Options, job: SourceListJob): string | null {
  return previewText(shownError(o, job.name, job.lastError), ERROR_PREVIEW_BYTES);
}

/** The arguments to show (after `redact.args`). */
export function shownArgs(o: Options, job: SourceListJob): unknown {
  return o.redact.args ? o.redact.args(job.name, job.args) : job.args;
}

/** The result to show (after `redact.result`). */
export function shownResult(o: Options, job: SourceJob): unknown {
  const result = "result" in job ? job.result : null;
  return o.redact.result ? o.redact.result(job.name, result) : result;
}

/** A list row (from a list: a job without its result). */
export function jobSummary(o: Options, job: SourceListJob): JobSummary {
  return {
    ...jobJson(job, redactedError(o, job)),
    args: preview(shownArgs(o, job), LIST_PREVIEW_BYTES, o.hideArgs),
  };
}

/** A detail view; `showArgs` overrides `hideArgs` for this response. */
export function jobDetail(
  o: Options,
  job: SourceJob & { timeline?: readonly TimelineEntryLike[] },
  showArgs: boolean,
): JobDetailView {
  const timeline = (job.timeline ?? []).map((entry) =>
    timelineEntryJson({
      ...entry,
      detail: previewText(shownError(o, job.name, entry.detail), ERROR_PREVIEW_BYTES),
    }),
  );
  return {
    ...jobSummary(o, job),
    args: preview(shownArgs(o, job), o.maxPreviewBytes, o.hideArgs && !showArgs),
    dedupKey: job.dedupKey,
    updatedAt: job.updatedAt.toISOString(),
    result: preview(shownResult(o, job), o.maxPreviewBytes),
    checkpoint:
      "checkpoint" in job && job.checkpoint
        ? {
            ...checkpointJson(job.checkpoint),
            value: preview(job.checkpoint.value, o.maxPreviewBytes, o.hideArgs && !showArgs),
          }
        : null,
    steps: "steps" in job ? job.steps.map(stepJson) : [],
    timeline,
  };
}
