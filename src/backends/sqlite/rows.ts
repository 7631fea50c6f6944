/**
 * The SQLite backend's stored row shapes (snake_case, times as INTEGER milliseconds since the
 * epoch) and their conversion to the contract's rows (camelCase, times as `Date`).
 *
 * Declared apart from postgres/rows.ts on purpose: only the column names are common (and
 * test/schema/columns.test.ts holds both lists to their tables); the types (ms integers vs
 * `Date`, JSON text vs `text[]`), the casts PostgreSQL selects with and the mappers all differ.
 */
import type { ClaimedRowFields } from "../claimed-job.js";
import type {
  DeadLetterRow,
  JobRow,
  JobStatus,
  WorkerRow,
  WorkerStatus,
} from "../contract/index.js";

/** The columns of `soniq_jobs`, in table order: a {@link JobRecord}. */
export const JOB_COLUMNS = `id, name, queue, args, status, priority, attempts, max_attempts,
  interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
  claim_token, last_error, result, result_expires_at, dedup_key, meta, start_known,
  uncharged_recoveries, trace_context`;

/**
 * {@link JOB_COLUMNS} without `result`: what job lists select (a {@link JobListRecord}). A result
 * may be megabytes and no list shows it; the one-job statements read it.
 */
export const JOB_LIST_COLUMNS = `id, name, queue, args, status, priority, attempts, max_attempts,
  interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
  claim_token, last_error, result_expires_at, dedup_key, meta, start_known,
  uncharged_recoveries, trace_context`;

/**
 * The columns a claim returns: a {@link ClaimedRecord}, only what a `ClaimedJob` holds, because
 * better-sqlite3 builds each row object from every column returned — every column of
 * {@link JOB_COLUMNS} nearly doubled a claim's cost per row (docs/performance.md, "Why the hot
 * statements look as they do").
 */
export const CLAIMED_COLUMNS = `id, name, queue, args, priority, attempts, max_attempts,
  interruptions, uncharged_recoveries, scheduled_at AS scheduled_ms, created_at AS created_ms,
  worker_id, claim_token, meta, trace_context`;

/** The columns of `soniq_dead_letter_jobs`, in table order: a {@link DeadLetterRecord}. */
export const DEAD_LETTER_COLUMNS = `id, name, queue, args, priority, attempts, max_attempts,
  interruptions, scheduled_at, created_at, updated_at, started_at, finished_at, worker_id,
  claim_token, last_error, dedup_key, reason, dead_at`;

/** The columns of `soniq_workers`, in table order: a {@link WorkerRecord}. */
export const WORKER_COLUMNS = `id, hostname, pid, queues, concurrency, status, started_at,
  last_heartbeat_at, stopped_at, heartbeat_timeout_ms, shutdown_state, drain_started_at,
  deadline_at`;

/** A row of `soniq_jobs` as better-sqlite3 returns it. */
export interface JobRecord {
  id: string;
  name: string;
  queue: string;
  args: string;
  status: string;
  priority: number;
  attempts: number;
  max_attempts: number;
  interruptions: number;
  scheduled_at: number;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  worker_id: string | null;
  claim_token: string | null;
  last_error: string | null;
  result: string | null;
  result_expires_at: number | null;
  dedup_key: string | null;
  meta: string | null;
  /** 0 or 1 (CHECK constraint); absent in dead-letter records. */
  start_known?: number;
  /** Absent in dead-letter records. */
  uncharged_recoveries?: number;
  /** Absent in dead-letter records (the column is not copied there). */
  trace_context?: string | null;
}

/**
 * A row selected with {@link CLAIMED_COLUMNS}: the instants as INTEGER epoch milliseconds.
 * Mapped by `claimedJobOfRow` (backends/claimed-job.ts), PostgreSQL's mapper too.
 */
export type ClaimedRecord = ClaimedRowFields & { scheduled_ms: number; created_ms: number };

/** A row of `soniq_jobs` selected with {@link JOB_LIST_COLUMNS}: no result. */
export type JobListRecord = Omit<JobRecord, "result">;

/** A row of `soniq_dead_letter_jobs` as better-sqlite3 returns it. */
export interface DeadLetterRecord
  extends Omit<
    JobRecord,
    "status" | "result" | "result_expires_at" | "meta" | "start_known" | "uncharged_recoveries"
  > {
  reason: string;
  dead_at: number;
}

/** A row of `soniq_workers` as better-sqlite3 returns it (`queues`: JSON array text or NULL). */
export interface WorkerRecord {
  id: string;
  hostname: string;
  pid: number;
  queues: string | null;
  concurrency: number;
  status: string;
  started_at: number;
  last_heartbeat_at: number;
  stopped_at: number | null;
}

function dateOrNull(ms: number | null): Date | null {
  return ms === null ? null : new Date(ms);
}

/** Converts a `soniq_jobs` record. */
export function toJobRow(r: JobRecord): JobRow {
  return {
    id: r.id,
    name: r.name,
    queue: r.queue,
    args: r.args,
    // The table's CHECK constraint keeps status within JobStatus.
    status: r.status as JobStatus,
    priority: r.priority,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    interruptions: r.interruptions,
    scheduledAt: new Date(r.scheduled_at),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    startedAt: dateOrNull(r.started_at),
    finishedAt: dateOrNull(r.finished_at),
    workerId: r.worker_id,
    claimToken: r.claim_token,
    lastError: r.last_error,
    result: r.result,
    resultExpiresAt: dateOrNull(r.result_expires_at),
    dedupKey: r.dedup_key,
    meta: r.meta ?? null,
    traceContext: r.trace_context ?? null,
    startKnown: (r.start_known ?? 1) === 1,
    unchargedRecoveries: r.uncharged_recoveries ?? 0,
  };
}

/** Converts a record selected with {@link JOB_LIST_COLUMNS}: a {@link JobRow} without its result. */
export function toJobListRow(r: JobListRecord): Omit<JobRow, "result"> {
  const { result: _r, ...job } = toJobRow({ ...r, result: null });
  return job;
}

/** Converts a `soniq_dead_letter_jobs` record: the job's fields plus why and when. */
export function toDeadLetterRow(r: DeadLetterRecord): DeadLetterRow {
  const {
    status: _s,
    result: _r,
    resultExpiresAt: _e,
    meta: _m,
    startKnown: _k,
    unchargedRecoveries: _u,
    ...job
  } = toJobRow({
    ...r,
    status: "queued",
    result: null,
    result_expires_at: null,
    meta: null,
  });
  return { ...job, reason: r.reason, deadAt: new Date(r.dead_at) };
}

/** Converts a `soniq_workers` record. */
export function toWorkerRow(r: WorkerRecord): WorkerRow {
  return {
    id: r.id,
    hostname: r.hostname,
    pid: r.pid,
    queues: r.queues === null ? null : (JSON.parse(r.queues) as string[]),
    concurrency: r.concurrency,
    // The table's CHECK constraint keeps status within WorkerStatus.
    status: r.status as WorkerStatus,
    startedAt: new Date(r.started_at),
    lastHeartbeatAt: new Date(r.last_heartbeat_at),
    stoppedAt: dateOrNull(r.stopped_at),
  };
}
