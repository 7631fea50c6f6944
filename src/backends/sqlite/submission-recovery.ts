/**
 * SQLite's recovery of remote submissions whose owner is not live, by last durable phase
 * (docs/remote-jobs.md, "Dispositions"): `submitting` → frozen, `accepted` or `frozen` → handed
 * on, due now. Runs inside the caller's `BEGIN IMMEDIATE` transaction; each owner is cleared only
 * if it still holds the row.
 */
import type { RecoveredSubmission } from "../contract/submission-store.js";
import type { SqliteSession } from "./connection.js";

/**
 * See `SubmissionStore.submissionRecover`.
 * @param now - SQLite's clock, milliseconds since the epoch.
 * @param timeoutMs - the heartbeat timeout for owners that declared none (milliseconds; null =
 * stopped or unknown owners only).
 * @param liveWorkerId - the caller's own incarnation, never treated as not live (null: none).
 */
export function recoverSubmissions(
  s: SqliteSession,
  now: number,
  timeoutMs: number | null,
  liveWorkerId: string | null,
): RecoveredSubmission[] {
  const stale = s.statement("subStale").all({ now, timeoutMs, liveWorkerId }) as Array<{
    job_id: string;
    job_name: string;
    phase: "submitting" | "accepted" | "frozen";
    task_id: string | null;
    worker_id: string;
  }>;
  const out: RecoveredSubmission[] = [];
  for (const row of stale) {
    const cleared = s
      .statement("subClearDeadOwner")
      .run({ id: row.job_id, owner: row.worker_id, now }).changes;
    if (cleared === 0) continue;
    s.statement("subRecoverPhase").run({ id: row.job_id, now });
    out.push({
      jobId: row.job_id,
      name: row.job_name,
      phase: row.phase,
      taskId: row.task_id,
      previousOwner: row.worker_id,
      action: row.phase === "submitting" ? "freeze" : "handoff",
    });
  }
  return out;
}
