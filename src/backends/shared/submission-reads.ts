/**
 * The engine-neutral parts of the submission store's reads for operators (`soniq remote
 * list|show`, `soniq status`); the rows themselves map through shared/columns.ts
 * `SUBMISSION_RECORDS`.
 */
import type {
  SubmissionCounts,
  SubmissionFilter,
  SubmissionPhase,
  SubmissionQueueCount,
} from "../contract/submission-store.js";

/** The phase a list filter selects, or null for all. */
export function filterPhase(filter: SubmissionFilter): SubmissionPhase | null {
  return filter === "all" ? null : filter === "awaiting" ? "accepted" : filter;
}

/** The rows of a count by phase (`phase`, `n`) as {@link SubmissionCounts}. */
export function countsOf(rows: ReadonlyArray<{ phase: string; n: number }>): SubmissionCounts {
  const counts: SubmissionCounts = { submitting: 0, awaiting: 0, frozen: 0 };
  for (const r of rows) {
    if (r.phase === "submitting") counts.submitting = r.n;
    else if (r.phase === "accepted") counts.awaiting = r.n;
    else if (r.phase === "frozen") counts.frozen = r.n;
  }
  return counts;
}

/** Rows of `queue`, `phase`, `n` → the contract's cells (known phases only, by queue then phase). */
export function queueCountsOf(
  rows: ReadonlyArray<{ queue: string; phase: string; n: number }>,
): SubmissionQueueCount[] {
  const phases = ["submitting", "accepted", "frozen"] as const;
  const cells: SubmissionQueueCount[] = [];
  for (const r of rows) {
    const phase = phases.find((p) => p === r.phase);
    if (phase && Number(r.n) > 0) cells.push({ queue: r.queue, phase, count: Number(r.n) });
  }
  return cells.sort(
    (a, b) => a.queue.localeCompare(b.queue) || phases.indexOf(a.phase) - phases.indexOf(b.phase),
  );
}
