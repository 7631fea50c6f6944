/**
 * The memory backend's counting and pruning over its job maps: counts by status, counts and the
 * oldest claimable age by queue, and the pruning of finished jobs whose retention has passed.
 */
import type { QueueMetrics, QueueStats } from "../contract/index.js";
import type { MemoryState } from "./state.js";

/** See `JobStore.jobStats`. */
export function countJobs(state: MemoryState): QueueStats {
  state.check();
  const stats: QueueStats = {
    total: state.jobs.size + state.dead.size,
    queued: 0,
    processing: 0,
    done: 0,
    dead_letter: state.dead.size,
    cancelled: 0,
  };
  for (const row of state.jobs.values()) stats[row.status] += 1;
  return stats;
}

/** See `JobStore.jobQueueMetrics`: one entry per queue, sorted by queue name. */
export function countJobsByQueue(state: MemoryState): QueueMetrics[] {
  state.check();
  const now = state.clock();
  const byQueue = new Map<string, QueueMetrics>();
  const entry = (queue: string): QueueMetrics => {
    let metrics = byQueue.get(queue);
    if (!metrics) {
      metrics = {
        queue,
        queued: 0,
        processing: 0,
        done: 0,
        cancelled: 0,
        deadLetter: 0,
        oldestClaimableAgeSeconds: 0,
      };
      byQueue.set(queue, metrics);
    }
    return metrics;
  };
  for (const row of state.jobs.values()) {
    const metrics = entry(row.queue);
    metrics[row.status] += 1;
    const due = row.scheduledAt.getTime();
    if (row.status === "queued" && due <= now) {
      metrics.oldestClaimableAgeSeconds = Math.max(
        metrics.oldestClaimableAgeSeconds,
        (now - due) / 1000,
      );
    }
  }
  for (const row of state.dead.values()) entry(row.queue).deadLetter += 1;
  return [...byQueue.values()].sort((a, b) => (a.queue < b.queue ? -1 : a.queue > b.queue ? 1 : 0));
}

/**
 * See `JobStore.jobPruneFinished`: deletes up to `limit` done or cancelled jobs whose
 * `resultExpiresAt` has passed; returns how many.
 */
export function pruneFinishedJobs(state: MemoryState, limit: number): number {
  state.check();
  const now = state.clock();
  let pruned = 0;
  for (const [id, row] of state.jobs) {
    if (pruned >= limit) break;
    if (
      (row.status === "done" || row.status === "cancelled") &&
      row.resultExpiresAt !== null &&
      row.resultExpiresAt.getTime() <= now
    ) {
      state.jobs.delete(id);
      pruned += 1;
    }
  }
  return pruned;
}
