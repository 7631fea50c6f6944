/**
 * Remote jobs (their submission records, docs/remote-jobs.md) as JSON — the one shape
 * `soniq remote list|show --json` and the dashboard's `GET /api/remote` and `GET /api/remote/:id`
 * share (issue 16): snake_case keys (the CLI's established `--json` shape), instants as ISO-8601
 * text, the stored answer's kind only (never a result), a zod schema to check a document against.
 */
import { z } from "zod";
import type { SubmissionRecord } from "../../backends/contract/submission-store.js";

const instant = z.iso.datetime();

/** What an operator reads of a submission's phase. */
export const REMOTE_STATES = [
  "submitting",
  "awaiting",
  "polling",
  "frozen",
  "reconciling",
  "released",
  "finished",
] as const;

/** One remote job as JSON. */
export const remoteJobJsonSchema = z.object({
  job_id: z.string(),
  job_name: z.string(),
  queue: z.string(),
  /** The durable phase (`submitting`, `accepted`, `frozen`, …). */
  phase: z.string(),
  /** {@link REMOTE_STATES}: the phase as an operator reads it (awaiting vs polling right now, …). */
  state: z.string(),
  task_id: z.string().nullable(),
  idempotency_key: z.string(),
  generation: z.number().int(),
  submitted_at: instant.nullable(),
  accepted_at: instant.nullable(),
  frozen_at: instant.nullable(),
  /** `deadline`, `crash`, `submit_timeout`, `invalid_result`, … */
  frozen_reason: z.string().nullable(),
  /** When it is next polled (accepted) or reconciled (frozen); null otherwise. */
  due_at: instant.nullable(),
  /** Polls so far. */
  polls: z.number().int(),
  /** The last write to the record (a poll, a phase change, an answer). */
  updated_at: instant,
  /** The stored answer's kind (`done`, `failed`), or null. */
  answer: z.string().nullable(),
  job_status: z.string().nullable(),
  worker_id: z.string().nullable(),
  attempts: z.number().int().nullable(),
  last_error: z.string().nullable(),
});
/** One remote job as JSON. */
export type RemoteJobJson = z.infer<typeof remoteJobJsonSchema>;

/** What an operator reads: frozen, awaiting (handed off), polling now, submitting, released, finished. */
export function remoteState(r: SubmissionRecord): string {
  if (r.phase === "accepted") return r.workerId ? "polling" : "awaiting";
  if (r.phase === "frozen") return r.workerId ? "reconciling" : "frozen";
  return r.phase;
}

/** A submission record as JSON (`lastError` may be cut by the caller first). */
export function remoteJobJson(r: SubmissionRecord, lastError = r.lastError): RemoteJobJson {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    job_id: r.jobId,
    job_name: r.name,
    queue: r.queue,
    phase: r.phase,
    state: remoteState(r),
    task_id: r.taskId,
    idempotency_key: r.idempotencyKey,
    generation: r.generation,
    submitted_at: iso(r.submittedAt),
    accepted_at: iso(r.acceptedAt),
    frozen_at: iso(r.frozenAt),
    frozen_reason: r.frozenReason,
    due_at: iso(r.dueAt),
    polls: r.polls,
    updated_at: r.updatedAt.toISOString(),
    answer: r.answer?.kind ?? null,
    job_status: r.jobStatus,
    worker_id: r.workerId,
    attempts: r.attempts,
    last_error: lastError,
  };
}
