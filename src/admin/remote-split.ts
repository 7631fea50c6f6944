/**
 * Remote jobs reported apart from plain `processing` (docs/remote-jobs.md, "Counts"): a job row
 * stays `processing` while its submission is `submitting`, `accepted` (awaiting the remote side,
 * no worker slot held) or `frozen` (waiting for reconcile or an operator), so every count moves
 * those rows out of `processing` into their own statuses. Pure: the two reads are given.
 */
import type { QueueStats, SubmissionQueueCount } from "../backends/contract/index.js";

/** The status a remote phase is counted under (values, like `dead_letter`). */
export const REMOTE_STATUS = {
  submitting: "remote_submitting",
  accepted: "remote_accepted",
  frozen: "remote_frozen",
} as const;

/** One of {@link REMOTE_STATUS}'s values. */
export type RemoteStatus = (typeof REMOTE_STATUS)[keyof typeof REMOTE_STATUS];

/** Every remote status, in phase order. */
export const REMOTE_STATUSES: readonly RemoteStatus[] = Object.values(REMOTE_STATUS);

/** One queue × status count. */
export interface StatusCell {
  queue: string;
  status: string;
  count: number;
}

/**
 * Moves each queue's remote rows out of its `processing` cell into `remote_*` cells. The reads
 * are two snapshots: a `processing` cell never goes below 0, and one left at 0 is dropped (zero
 * cells are left out, as in the input).
 */
export function splitRemoteCells(
  cells: readonly StatusCell[],
  remote: readonly SubmissionQueueCount[],
): StatusCell[] {
  const held = new Map<string, number>();
  for (const r of remote) held.set(r.queue, (held.get(r.queue) ?? 0) + r.count);
  const out: StatusCell[] = [];
  for (const cell of cells) {
    if (cell.status !== "processing") {
      out.push(cell);
      continue;
    }
    const count = Math.max(0, cell.count - (held.get(cell.queue) ?? 0));
    if (count > 0) out.push({ ...cell, count });
  }
  for (const r of remote) {
    out.push({ queue: r.queue, status: REMOTE_STATUS[r.phase], count: r.count });
  }
  return out;
}

/** The remote rows of every queue, summed per phase. */
export function remoteTotals(remote: readonly SubmissionQueueCount[]): {
  submitting: number;
  accepted: number;
  frozen: number;
} {
  const totals = { submitting: 0, accepted: 0, frozen: 0 };
  for (const r of remote) totals[r.phase] += r.count;
  return totals;
}

/**
 * `soniq.stats()`: the counts by state, with remote jobs apart from `processing` (camelCase keys;
 * `processing` counts only rows whose handler a worker runs, or is about to).
 */
export interface JobStats extends QueueStats {
  /** Remote jobs whose submit request is in flight (phase `submitting`). */
  remoteSubmitting: number;
  /** Remote jobs the remote side accepted, awaiting its answer (phase `accepted`, polled). */
  remoteAccepted: number;
  /** Remote jobs frozen: no usable answer, waiting for reconcile or an operator. */
  remoteFrozen: number;
}

/** The backend's stats with the remote rows moved out of `processing` (never below 0). */
export function splitRemoteStats(
  stats: QueueStats,
  remote: readonly SubmissionQueueCount[],
): JobStats {
  const t = remoteTotals(remote);
  return {
    ...stats,
    processing: Math.max(0, stats.processing - t.submitting - t.accepted - t.frozen),
    remoteSubmitting: t.submitting,
    remoteAccepted: t.accepted,
    remoteFrozen: t.frozen,
  };
}
