/**
 * The {@link ClaimedJob} view of a job row, for backends that read whole rows when claiming
 * (SQLite, memory); PostgreSQL selects these columns directly (postgres/rows.ts).
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
    scheduledAt: row.scheduledAt,
    createdAt: row.createdAt,
    workerId: row.workerId,
    claimToken: row.claimToken,
    meta: row.meta,
    traceContext: row.traceContext ?? null,
  };
}
