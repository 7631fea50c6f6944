/**
 * The memory submission store's reads for operators (`soniq remote list|show`, `soniq status`):
 * a submission row joined with its job row, as a {@link SubmissionRecord}.
 */

import { idempotencyKey } from "../../remote/phases.js";
import type { SubmissionCounts, SubmissionFilter, SubmissionRecord } from "../contract/index.js";
import type { MemoryState, MemorySubmissionRow } from "./state.js";

const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

/** One submission row with its job row's status, owner, attempts and error. */
export function recordOf(state: MemoryState, sub: MemorySubmissionRow): SubmissionRecord {
  const row = state.jobs.get(sub.jobId);
  return {
    jobId: sub.jobId,
    name: sub.name,
    queue: sub.queue,
    phase: sub.phase,
    generation: sub.generation,
    idempotencyKey: idempotencyKey(sub.jobId, sub.generation),
    taskId: sub.taskId,
    submittedAt: date(sub.submittedAt),
    acceptedAt: date(sub.acceptedAt),
    frozenAt: date(sub.frozenAt),
    frozenReason: sub.frozenReason,
    dueAt: date(sub.dueAt),
    polls: sub.polls,
    answer: sub.answer,
    updatedAt: new Date(sub.updatedAt),
    jobStatus: row?.status ?? null,
    workerId: row?.workerId ?? null,
    attempts: row?.attempts ?? null,
    lastError: row?.lastError ?? null,
  };
}

/** Records by filter, most recently updated first. */
export function listRecords(
  state: MemoryState,
  filter: SubmissionFilter,
  limit: number,
): SubmissionRecord[] {
  const phase = filter === "all" ? null : filter === "awaiting" ? "accepted" : filter;
  return [...state.submissions.values()]
    .filter((sub) => phase === null || sub.phase === phase)
    .sort((a, b) => b.updatedAt - a.updatedAt)
    .slice(0, limit)
    .map((sub) => recordOf(state, sub));
}

/** Counts of submissions in custody whose job is processing. */
export function countRecords(state: MemoryState): SubmissionCounts {
  const counts: SubmissionCounts = { submitting: 0, awaiting: 0, frozen: 0 };
  for (const sub of state.submissions.values()) {
    if (state.jobs.get(sub.jobId)?.status !== "processing") continue;
    if (sub.phase === "submitting") counts.submitting += 1;
    else if (sub.phase === "accepted") counts.awaiting += 1;
    else if (sub.phase === "frozen") counts.frozen += 1;
  }
  return counts;
}
