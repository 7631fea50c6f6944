/**
 * The engine-neutral parts of the submission store's reads for operators (`soniq remote
 * list|show`, `soniq status`); the rows themselves map through shared/columns.ts
 * `SUBMISSION_RECORDS`.
 */
import type {
  SubmissionCounts,
  SubmissionFilter,
  SubmissionPhase,
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
