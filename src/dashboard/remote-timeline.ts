/**
 * The remote phases of a job's timeline (docs/remote-jobs.md, "The phases"): a remote job's
 * submission record holds when it was submitted (with its idempotency key), accepted (with the task
 * id) and frozen (with the reason); the job detail merges them into the timeline in time order,
 * beside the NACKs, recoveries and retries.
 */
import type { TimelineEntryLike } from "../admin/json/index.js";
import type { SubmissionRecord } from "../backends/contract/submission-store.js";
import { isSoniqError } from "../errors.js";
import type { DashboardSource } from "./source.js";

/** Timeline entries of a submission record: `remote_submitting`, `remote_accepted`, `remote_frozen`. */
export function remoteTimeline(r: SubmissionRecord): TimelineEntryLike[] {
  const entries: TimelineEntryLike[] = [];
  const entry = (at: Date | null, kind: string, detail: string) => {
    if (at !== null) entries.push({ at, kind, attempt: null, workerId: null, detail });
  };
  entry(r.submittedAt, "remote_submitting", `idempotency key ${r.idempotencyKey}`);
  entry(r.acceptedAt, "remote_accepted", `task id ${r.taskId ?? "?"}`);
  entry(r.frozenAt, "remote_frozen", `frozen: ${r.frozenReason ?? "unknown reason"}`);
  return entries;
}

/** `timeline` with the job's remote phases merged in time order (stable), when it is remote. */
export async function withRemotePhases<
  T extends { id: string; timeline: readonly TimelineEntryLike[] },
>(soniq: DashboardSource, job: T): Promise<T> {
  let record: SubmissionRecord;
  try {
    record = await soniq.remote.show(job.id);
  } catch (err) {
    if (isSoniqError(err) && err.code === "NOT_FOUND") return job;
    throw err;
  }
  const merged = [...job.timeline, ...remoteTimeline(record)]
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) => a.entry.at.getTime() - b.entry.at.getTime() || a.index - b.index)
    .map(({ entry }) => entry);
  return { ...job, timeline: merged };
}
