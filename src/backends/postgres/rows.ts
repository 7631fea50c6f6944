/**
 * Row mapping between PostgreSQL result rows (snake_case, as the driver decodes them) and the
 * backend contract's shapes. JSON columns are selected as `::text` so they come back as the
 * exact text that was written; timestamps arrive as `Date` (millisecond precision).
 */
import { type ClaimedRowFields, claimedJobOfRow } from "../claimed-job.js";
import type {
  ClaimedJob,
  DeadLetterRow,
  JobRow,
  JobStatus,
  WorkerRow,
  WorkerStatus,
} from "../contract/index.js";

/** The job columns every job query selects, in `RawJobRow` shape. */
export const JOB_COLUMNS = `id::text AS id, name, queue, args::text AS args, status, priority, attempts,
  max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at, finished_at,
  worker_id, claim_token::text AS claim_token, last_error, result::text AS result,
  result_expires_at, dedup_key, meta::text AS meta, start_known, uncharged_recoveries,
  trace_context`;

/**
 * {@link JOB_COLUMNS} without `result`, in `RawJobListRow` shape: what job lists select. A result
 * may be megabytes and no list shows it; the one-job statements read it.
 */
export const JOB_LIST_COLUMNS = `id::text AS id, name, queue, args::text AS args, status, priority,
  attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
  finished_at, worker_id, claim_token::text AS claim_token, last_error, result_expires_at,
  dedup_key, meta::text AS meta, start_known, uncharged_recoveries, trace_context`;

/**
 * The columns a claim returns, in `RawClaimedRow` shape (see `ClaimedJob`). The two instants come
 * as whole epoch milliseconds (truncated, as the driver's timestamp parsing truncates the
 * microseconds), not as `timestamptz` text: a claim returns hundreds of rows, and parsing two
 * timestamps per row with the driver's regular expression was the largest allocation of the
 * claim's row parsing (docs/performance.md). They stay `numeric` (decimal text to the driver):
 * a row written by hand with an infinite timestamp comes back as `Infinity` (an invalid `Date`)
 * instead of failing every claim, as a cast to `int8` would.
 */
export const CLAIMED_COLUMNS = `id::text AS id, name, queue, args::text AS args, priority, attempts,
  max_attempts, interruptions, uncharged_recoveries,
  floor(extract(epoch FROM scheduled_at) * 1000) AS scheduled_ms,
  floor(extract(epoch FROM created_at) * 1000) AS created_ms, worker_id,
  claim_token::text AS claim_token, meta::text AS meta, trace_context`;

/** The dead-letter columns every dead-letter query selects, in `RawDeadLetterRow` shape. */
export const DEAD_LETTER_COLUMNS = `id::text AS id, name, queue, args::text AS args, priority,
  attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
  finished_at, worker_id, claim_token::text AS claim_token, last_error, dedup_key, reason, dead_at`;

/** The worker columns every worker query selects, in `RawWorkerRow` shape. */
export const WORKER_COLUMNS = `id, hostname, pid, queues, concurrency, status, started_at,
  last_heartbeat_at, stopped_at, heartbeat_timeout, shutdown_state, drain_started_at, deadline_at`;

/** A `soniq_jobs` row as selected with {@link JOB_COLUMNS}. */
export interface RawJobRow {
  id: string;
  name: string;
  queue: string;
  args: string;
  status: string;
  priority: number;
  attempts: number;
  max_attempts: number;
  interruptions: number;
  scheduled_at: Date;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  worker_id: string | null;
  claim_token: string | null;
  last_error: string | null;
  result: string | null;
  result_expires_at: Date | null;
  dedup_key: string | null;
  meta?: string | null;
  /** Absent in dead-letter rows (the column is not copied there). */
  start_known?: boolean;
  /** Absent in dead-letter rows (the column is not copied there). */
  uncharged_recoveries?: number;
  /** Absent in dead-letter rows (the column is not copied there). */
  trace_context?: string | null;
}

/** A `soniq_jobs` row as selected with {@link JOB_LIST_COLUMNS}: no result. */
export type RawJobListRow = Omit<RawJobRow, "result">;

/**
 * A claimed row as returned with {@link CLAIMED_COLUMNS}: the instants as `numeric` epoch
 * milliseconds (decimal text; `Infinity`/`-Infinity` for infinite). Mapped by `claimedJobOfRow`.
 */
export type RawClaimedRow = ClaimedRowFields & { scheduled_ms: string; created_ms: string };

/** Maps a row selected with {@link CLAIMED_COLUMNS} (the SQL backends' one mapper). */
export const toClaimedJob: (row: RawClaimedRow) => ClaimedJob = claimedJobOfRow;

/** A `soniq_dead_letter_jobs` row as selected with {@link DEAD_LETTER_COLUMNS}. */
export interface RawDeadLetterRow
  extends Omit<RawJobRow, "status" | "result" | "result_expires_at"> {
  reason: string;
  dead_at: Date;
}

/** A `soniq_workers` row as selected with {@link WORKER_COLUMNS}. */
export interface RawWorkerRow {
  id: string;
  hostname: string;
  pid: number;
  queues: string[] | null;
  concurrency: number;
  status: string;
  started_at: Date;
  last_heartbeat_at: Date;
  stopped_at: Date | null;
}

/** Maps a selected job row to a {@link JobRow}. */
export function toJobRow(row: RawJobRow): JobRow {
  return {
    id: row.id,
    name: row.name,
    queue: row.queue,
    args: row.args,
    status: row.status as JobStatus,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    interruptions: row.interruptions,
    scheduledAt: row.scheduled_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    workerId: row.worker_id,
    claimToken: row.claim_token,
    lastError: row.last_error,
    result: row.result,
    resultExpiresAt: row.result_expires_at,
    dedupKey: row.dedup_key,
    meta: row.meta ?? null,
    traceContext: row.trace_context ?? null,
    startKnown: row.start_known ?? true,
    unchargedRecoveries: row.uncharged_recoveries ?? 0,
  };
}

/** Maps a row selected with {@link JOB_LIST_COLUMNS}: a {@link JobRow} without its result. */
export function toJobListRow(row: RawJobListRow): Omit<JobRow, "result"> {
  const { result: _r, ...job } = toJobRow({ ...row, result: null });
  return job;
}

/** Maps a selected dead-letter row to a {@link DeadLetterRow}: the job's fields plus why and when. */
export function toDeadLetterRow(row: RawDeadLetterRow): DeadLetterRow {
  const {
    status: _s,
    result: _r,
    resultExpiresAt: _e,
    meta: _m,
    startKnown: _k,
    unchargedRecoveries: _u,
    ...job
  } = toJobRow({
    ...row,
    status: "queued",
    result: null,
    result_expires_at: null,
  });
  return { ...job, reason: row.reason, deadAt: row.dead_at };
}

/** Maps a selected worker row to a {@link WorkerRow}. */
export function toWorkerRow(row: RawWorkerRow): WorkerRow {
  return {
    id: row.id,
    hostname: row.hostname,
    pid: row.pid,
    queues: row.queues,
    concurrency: row.concurrency,
    status: row.status as WorkerStatus,
    startedAt: row.started_at,
    lastHeartbeatAt: row.last_heartbeat_at,
    stoppedAt: row.stopped_at,
  };
}
