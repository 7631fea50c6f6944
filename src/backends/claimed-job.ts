/**
 * The {@link ClaimedJob} view of a job row: {@link claimedJobOf} for a whole row (memory, and
 * SQLite's hand-off insert), {@link claimedJobOfRow} for the claim columns the SQL backends
 * select (postgres/rows.ts and sqlite/rows.ts `CLAIMED_COLUMNS`).
 */
import type { ClaimedJob, JobRow } from "./contract/index.js";

/**
 * The claimed-job fields of `row`, a row just claimed (so `workerId` and `claimToken` are set).
 * @throws Error when the row has no owner: a bug in the calling backend, not a user error.
 */
export function claimedJobOf(row: JobRow): ClaimedJob {
  if (row.workerId === null || row.claimToken === null) {
    throw new Error(`claimed row ${row.id} has no owner`);
  }
  return {
    id: row.id,
    name: row.name,
    queue: row.queue,
    args: row.args,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.maxAttempts,
    interruptions: row.interruptions,
    unchargedRecoveries: row.unchargedRecoveries,
    scheduledAt: row.scheduledAt,
    createdAt: row.createdAt,
    workerId: row.workerId,
    claimToken: row.claimToken,
    meta: row.meta,
    traceContext: row.traceContext ?? null,
  };
}

/**
 * A claimed row as the SQL backends select it (`CLAIMED_COLUMNS`, snake_case), its two instants as
 * epoch milliseconds: a number (SQLite's INTEGER) or decimal text (PostgreSQL's `numeric`).
 */
export interface ClaimedRowFields {
  id: string;
  name: string;
  queue: string;
  args: string;
  priority: number;
  attempts: number;
  max_attempts: number;
  interruptions: number;
  uncharged_recoveries: number;
  scheduled_ms: number | string;
  created_ms: number | string;
  worker_id: string;
  claim_token: string;
  meta: string | null;
  trace_context: string | null;
}

/** Maps a row selected with a SQL backend's `CLAIMED_COLUMNS`. */
export function claimedJobOfRow(row: ClaimedRowFields): ClaimedJob {
  return {
    id: row.id,
    name: row.name,
    queue: row.queue,
    args: row.args,
    priority: row.priority,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    interruptions: row.interruptions,
    unchargedRecoveries: row.uncharged_recoveries ?? 0,
    scheduledAt: new Date(Number(row.scheduled_ms)),
    createdAt: new Date(Number(row.created_ms)),
    workerId: row.worker_id,
    claimToken: row.claim_token,
    meta: row.meta ?? null,
    traceContext: row.trace_context ?? null,
  };
}
