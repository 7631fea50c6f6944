/**
 * The rows of `soniq_worker_exits` as the contract returns them (`WorkerStore.workerExitCounts`):
 * known exit reasons only, in {@link WORKER_EXIT_REASONS} order — shared by both engines.
 */
import {
  WORKER_EXIT_REASONS,
  type WorkerExitCount,
  type WorkerExitReason,
} from "../contract/worker-store.js";

/** One stored row, engine-neutral: the reason as text, its count, its latest stop. */
export interface StoredWorkerExit {
  reason: string;
  exits: number;
  lastAt: Date;
}

/**
 * Keeps the rows whose reason this build knows (a newer build may count others), in the fixed
 * order.
 */
export function exitCounts(rows: readonly StoredWorkerExit[]): WorkerExitCount[] {
  const byReason = new Map(rows.map((r) => [r.reason, r]));
  const counts: WorkerExitCount[] = [];
  for (const exitReason of WORKER_EXIT_REASONS) {
    const row = byReason.get(exitReason satisfies WorkerExitReason);
    if (row) counts.push({ exitReason, exits: Number(row.exits), lastAt: row.lastAt });
  }
  return counts;
}
