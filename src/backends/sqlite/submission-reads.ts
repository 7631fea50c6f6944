/**
 * The SQLite submission store's reads for operators (`soniq remote list|show`, `soniq status`):
 * a submission row joined with its job row, as a {@link SubmissionRecord}.
 */

import type { JobStatus } from "../contract/index.js";
import { idempotencyKey, parsePhase } from "../contract/phases.js";
import {
  decodeAnswer,
  type SubmissionCounts,
  type SubmissionFilter,
  type SubmissionRecord,
} from "../contract/submission-store.js";
import type { SqliteSession } from "./connection.js";

/** A row of `subGet` / `subList`. */
export interface RecordRow {
  job_id: string;
  job_name: string;
  queue: string;
  phase: string;
  generation: number;
  task_id: string | null;
  submitted_at: number | null;
  accepted_at: number | null;
  frozen_at: number | null;
  frozen_reason: string | null;
  due_at: number | null;
  polls: number;
  answer: string | null;
  updated_at: number;
  job_status: JobStatus | null;
  job_worker_id: string | null;
  job_attempts: number | null;
  job_last_error: string | null;
}

/** A stored instant (ms) as a Date, or null. */
export const date = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));

export function toRecord(r: RecordRow): SubmissionRecord {
  return {
    jobId: r.job_id,
    name: r.job_name,
    queue: r.queue,
    phase: parsePhase(r.phase),
    generation: r.generation,
    idempotencyKey: idempotencyKey(r.job_id, r.generation),
    taskId: r.task_id,
    submittedAt: date(r.submitted_at),
    acceptedAt: date(r.accepted_at),
    frozenAt: date(r.frozen_at),
    frozenReason: r.frozen_reason,
    dueAt: date(r.due_at),
    polls: r.polls,
    answer: decodeAnswer(r.answer),
    updatedAt: new Date(r.updated_at),
    jobStatus: r.job_status,
    workerId: r.job_worker_id,
    attempts: r.job_attempts,
    lastError: r.job_last_error,
  };
}

/** One record, or null. */
export function readSubmission(s: SqliteSession, jobId: string): SubmissionRecord | null {
  const row = s.statement("subGet").get({ id: jobId }) as RecordRow | undefined;
  return row ? toRecord(row) : null;
}

/** Records by filter, most recently updated first. */
export function listSubmissions(
  s: SqliteSession,
  filter: SubmissionFilter,
  limit: number,
): SubmissionRecord[] {
  const phase = filter === "all" ? null : filter === "awaiting" ? "accepted" : filter;
  return (s.statement("subList").all({ phase, limit }) as RecordRow[]).map(toRecord);
}

/** Counts of submissions in custody whose job is processing. */
export function countSubmissions(s: SqliteSession): SubmissionCounts {
  const counts: SubmissionCounts = { submitting: 0, awaiting: 0, frozen: 0 };
  for (const r of s.statement("subCounts").all() as Array<{ phase: string; n: number }>) {
    if (r.phase === "submitting") counts.submitting = r.n;
    else if (r.phase === "accepted") counts.awaiting = r.n;
    else if (r.phase === "frozen") counts.frozen = r.n;
  }
  return counts;
}
