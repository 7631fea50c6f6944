/**
 * Remote jobs (their submission records, docs/remote-jobs.md) as JSON — the one shape
 * `soniq remote list|show --json` and the dashboard's `GET /api/remote` and `GET /api/remote/:id`
 * share (issue 16): camelCase keys (the one key style of every JSON output, docs/operations.md),
 * instants as ISO-8601 text, the stored answer's kind only (never a result), a zod schema to check
 * a document against.
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
  jobId: z.string(),
  jobName: z.string(),
  queue: z.string(),
  /** The durable phase (`submitting`, `accepted`, `frozen`, …). */
  phase: z.string(),
  /** {@link REMOTE_STATES}: the phase as an operator reads it (awaiting vs polling right now, …). */
  state: z.string(),
  taskId: z.string().nullable(),
  idempotencyKey: z.string(),
  generation: z.number().int(),
  submittedAt: instant.nullable(),
  acceptedAt: instant.nullable(),
  frozenAt: instant.nullable(),
  /** `deadline`, `crash`, `submit_timeout`, `invalid_result`, … */
  frozenReason: z.string().nullable(),
  /** When it is next polled (accepted) or reconciled (frozen); null otherwise. */
  dueAt: instant.nullable(),
  /** Polls so far. */
  polls: z.number().int(),
  /** The last write to the record (a poll, a phase change, an answer). */
  updatedAt: instant,
  /** The stored answer's kind (`done`, `failed`), or null. */
  answer: z.string().nullable(),
  jobStatus: z.string().nullable(),
  workerId: z.string().nullable(),
  attempts: z.number().int().nullable(),
  lastError: z.string().nullable(),
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
    jobId: r.jobId,
    jobName: r.name,
    queue: r.queue,
    phase: r.phase,
    state: remoteState(r),
    taskId: r.taskId,
    idempotencyKey: r.idempotencyKey,
    generation: r.generation,
    submittedAt: iso(r.submittedAt),
    acceptedAt: iso(r.acceptedAt),
    frozenAt: iso(r.frozenAt),
    frozenReason: r.frozenReason,
    dueAt: iso(r.dueAt),
    polls: r.polls,
    updatedAt: r.updatedAt.toISOString(),
    answer: r.answer?.kind ?? null,
    jobStatus: r.jobStatus,
    workerId: r.workerId,
    attempts: r.attempts,
    lastError: lastError,
  };
}
