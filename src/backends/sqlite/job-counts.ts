/**
 * SQLite's counts over the job tables, each from one snapshot: by status (`jobStats`) and by
 * queue with the oldest claimable age (`jobQueueMetrics`).
 */
import type { QueueMetrics, QueueStats } from "../contract/index.js";
import type { SqliteSession } from "./connection.js";

/** See `JobStore.jobStats`: live counts from `soniq_jobs`, finished from `soniq_finished_jobs`. */
export function countJobs(s: SqliteSession): QueueStats {
  const row = s.statement("stats").get() as Omit<QueueStats, "total" | "deadLetter"> & {
    jobs: number;
    dead_letter: number;
  };
  const { jobs, dead_letter: deadLetter, ...counts } = row;
  return { total: jobs + deadLetter, ...counts, deadLetter };
}

/** See `JobStore.jobQueueMetrics`. */
export function countJobsByQueue(s: SqliteSession): QueueMetrics[] {
  const rows = s.statement("queueMetrics").all() as Array<{
    queue: string;
    queued: number;
    processing: number;
    done: number;
    cancelled: number;
    dead_letter: number;
    oldest_age_ms: number;
  }>;
  return rows.map((row) => ({
    queue: row.queue,
    queued: row.queued,
    processing: row.processing,
    done: row.done,
    cancelled: row.cancelled,
    deadLetter: row.dead_letter,
    oldestClaimableAgeSeconds: Math.max(0, row.oldest_age_ms) / 1000,
  }));
}
