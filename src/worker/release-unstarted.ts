/**
 * The NACK of claimed rows that never started, in one write (the prefetch window; docs/shutdown.md):
 * the buffer at drain start, rows past their TTL, a claim answered after drain start. The NACK
 * field contract per row (back to `queued`, owner cleared, attempts, interruptions and
 * `last_error` untouched), fenced on each row's owner, each queue woken once. Not a deadline
 * release: the rows are not in `WorkerExit.released` and the exit code is unaffected; they get a
 * `nack` timeline entry and one `prefetch_released` event per batch.
 */
import type { Backend, ClaimedJob } from "../backends/contract/index.js";
import type { EventBus } from "../observability/event-bus.js";
import type { PrefetchReleasedEvent, SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";

/** Why claimed rows are handed back unstarted. */
export type UnstartedReleaseReason = PrefetchReleasedEvent["reason"];

/** What {@link releaseUnstarted} needs. */
export interface ReleaseUnstartedDeps {
  backend: Backend;
  workerId: string;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  /** Runs the write with the outcome recorder's retries (OutcomeRecorder.writeWithRetry). */
  writeWithRetry<T>(write: () => Promise<T>, what: string): Promise<T>;
}

const WHY: Record<UnstartedReleaseReason, string> = {
  drain: "drain start: the prefetch buffer",
  ttl: "not started within the prefetch TTL",
  late_claim: "a claim answered after drain start",
};

/**
 * NACKs `jobs` (all claimed by this worker, none started) in one write. Never rejects: a write
 * given up leaves the rows `processing` under this worker, and crash recovery requeues them
 * uncharged once the worker is stopped or stale (their start is not known).
 * @returns The ids that went back to `queued`.
 */
export async function releaseUnstarted(
  deps: ReleaseUnstartedDeps,
  jobs: readonly ClaimedJob[],
  reason: UnstartedReleaseReason,
): Promise<string[]> {
  if (jobs.length === 0) return [];
  const { backend, workerId, logger, events } = deps;
  const items = jobs.map((job) => ({
    id: job.id,
    owner: { workerId: job.workerId, claimToken: job.claimToken },
  }));
  let changed: boolean[];
  try {
    changed = await deps.writeWithRetry(
      () => backend.jobNackMany({ items }),
      `NACK of ${jobs.length} unstarted job(s)`,
    );
  } catch {
    return []; // logged by writeWithRetry; recovery requeues the rows uncharged
  }
  const released = jobs.filter((_, i) => changed[i] === true);
  const ids = released.map((job) => job.id);
  const fencedOut = jobs.length - released.length;
  logger.info(
    { reason, released: ids.length, fenced_out: fencedOut },
    `claimed jobs that never started went back to queued (${WHY[reason]}); attempts unchanged`,
  );
  events.emit("prefetch_released", {
    worker_id: workerId,
    reason,
    job_ids: ids,
    fenced_out: fencedOut,
  });
  if (released.length > 0) {
    backend.admin
      .jobEventsAppend({
        events: released.map((job) => ({
          jobId: job.id,
          kind: "nack" as const,
          attempt: job.attempts + 1,
          workerId,
          detail: `${WHY[reason]}: never started, back to queued, attempts kept`,
        })),
      })
      .catch((err: unknown) =>
        logger.debug({ err: errorText(err, 300) }, "timeline events not written"),
      );
  }
  return ids;
}
