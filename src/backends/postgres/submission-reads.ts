/**
 * The PostgreSQL submission store's row mapping for operators' reads (`soniq remote list|show`,
 * `soniq status`): a submission row joined with its job row, as a {@link SubmissionRecord}.
 */

import type { JobStatus } from "../contract/index.js";
import { idempotencyKey, parsePhase } from "../contract/phases.js";
import {
  decodeAnswer,
  type SubmissionCounts,
  type SubmissionFilter,
  type SubmissionPhase,
  type SubmissionRecord,
} from "../contract/submission-store.js";

/** A row of the `get` / `list` statements. */
export interface RecordRow {
  job_id: string;
  job_name: string;
  queue: string;
  phase: string;
  generation: number;
  task_id: string | null;
  submitted_at: Date | null;
  accepted_at: Date | null;
  frozen_at: Date | null;
  frozen_reason: string | null;
  due_at: Date | null;
  polls: number;
  answer: string | null;
  updated_at: Date;
  job_status: JobStatus | null;
  job_worker_id: string | null;
  job_attempts: number | null;
  job_last_error: string | null;
}

export function toRecord(r: RecordRow): SubmissionRecord {
  return {
    jobId: r.job_id,
    name: r.job_name,
    queue: r.queue,
    phase: parsePhase(r.phase),
    generation: r.generation,
    idempotencyKey: idempotencyKey(r.job_id, r.generation),
    taskId: r.task_id,
    submittedAt: r.submitted_at,
    acceptedAt: r.accepted_at,
    frozenAt: r.frozen_at,
    frozenReason: r.frozen_reason,
    dueAt: r.due_at,
    polls: r.polls,
    answer: decodeAnswer(r.answer),
    updatedAt: r.updated_at,
    jobStatus: r.job_status,
    workerId: r.job_worker_id,
    attempts: r.job_attempts,
    lastError: r.job_last_error,
  };
}

/** The phase a list filter selects, or null for all. */
export function filterPhase(filter: SubmissionFilter): SubmissionPhase | null {
  return filter === "all" ? null : filter === "awaiting" ? "accepted" : filter;
}

/** The `counts` statement's rows as {@link SubmissionCounts}. */
export function countsOf(rows: ReadonlyArray<{ phase: string; n: number }>): SubmissionCounts {
  const counts: SubmissionCounts = { submitting: 0, awaiting: 0, frozen: 0 };
  for (const r of rows) {
    if (r.phase === "submitting") counts.submitting = r.n;
    else if (r.phase === "accepted") counts.awaiting = r.n;
    else if (r.phase === "frozen") counts.frozen = r.n;
  }
  return counts;
}
