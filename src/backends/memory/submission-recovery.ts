/**
 * The memory backend's recovery and pruning of remote submissions (seed 002): a submission whose
 * owner is not live is recovered by its last durable phase (`submitting` → frozen, `accepted` or
 * `frozen` → handed on, due now), and submission rows whose job is gone are pruned.
 */
import { REMOTE_CUSTODY_PHASES, type RecoveredSubmission } from "../contract/submission-store.js";
import type { MemoryState } from "./state.js";

/**
 * See `SubmissionStore.submissionRecover`. An owner is judged by the heartbeat timeout it declared
 * (`heartbeatTimeoutSeconds`, seconds, only for owners that declared none; null = stopped or
 * unknown owners only). `liveWorkerId` (the caller's own incarnation) is always live.
 */
export function recoverSubmissions(
  state: MemoryState,
  heartbeatTimeoutSeconds: number | null,
  liveWorkerId?: string,
): RecoveredSubmission[] {
  state.check();
  const now = state.clock();
  const live = (workerId: string) =>
    workerId === liveWorkerId || state.isLive(workerId, heartbeatTimeoutSeconds ?? undefined);
  const out: RecoveredSubmission[] = [];
  for (const sub of state.submissions.values()) {
    const row = state.jobs.get(sub.jobId);
    if (row?.status !== "processing" || row.workerId === null || live(row.workerId)) continue;
    if (!REMOTE_CUSTODY_PHASES.includes(sub.phase)) continue;
    const phase = sub.phase as RecoveredSubmission["phase"];
    const previousOwner = row.workerId;
    if (phase === "submitting") {
      Object.assign(sub, { phase: "frozen", frozenAt: now, frozenReason: "crash" });
    }
    sub.dueAt = now;
    sub.updatedAt = now;
    row.workerId = null;
    row.claimToken = null;
    row.updatedAt = new Date(now);
    out.push({
      jobId: sub.jobId,
      name: sub.name,
      phase,
      taskId: sub.taskId,
      previousOwner,
      action: phase === "submitting" ? "freeze" : "handoff",
    });
  }
  return out;
}

/** See `SubmissionStore.submissionPrune`: up to `limit` rows whose job is neither live nor dead-lettered. */
export function pruneSubmissions(state: MemoryState, limit: number): number {
  state.check();
  let pruned = 0;
  for (const id of [...state.submissions.keys()]) {
    if (pruned >= limit) break;
    if (state.jobs.has(id) || state.dead.has(id)) continue;
    state.submissions.delete(id);
    pruned += 1;
  }
  return pruned;
}
