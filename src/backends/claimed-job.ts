/**
 * The claim's row mapper: {@link claimedJobOfRow} maps the claimed columns both engines select
 * (shared/columns.ts `CLAIMED_FIELDS`; postgres/rows.ts and sqlite/rows.ts `CLAIMED_COLUMNS`) to a
 * {@link ClaimedJob}. Every claim goes through it: the claim, hand-off at enqueue and the remote
 * poll claim. Written out by hand because it is on the hot path; test/schema/columns.test.ts holds
 * it to the catalogue.
 */
import type { ClaimedJob } from "./contract/index.js";

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
  version: number;
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
    unchargedRecoveries: row.uncharged_recoveries,
    scheduledAt: new Date(Number(row.scheduled_ms)),
    createdAt: new Date(Number(row.created_ms)),
    workerId: row.worker_id,
    claimToken: row.claim_token,
    meta: row.meta,
    traceContext: row.trace_context,
    version: row.version,
  };
}
