/**
 * Crash recovery's decision, written once for both engines (docs/backends.md, "Shared policy and
 * engine code"; the rule: docs/reliability.md, "Crash recovery, in brief"). An engine reads its
 * stale claims, takes {@link decideRecovery}'s decision for each, writes them atomically, each
 * fenced on the owner it read, and answers with {@link recoveryResult}. Pure: no I/O, no clock.
 */
import {
  type CrashLoopRule,
  crashLoopText,
  type RecoveredJob,
  type RecoveryResult,
} from "../contract/index.js";

/** A `processing` row whose owner is not live, as an engine's `staleClaims` read returns it. */
export interface StaleClaim {
  /** Job id, name and queue. */
  id: string;
  name: string;
  queue: string;
  /** The owner (`worker_id`, `claim_token`) the read saw: the fence of every write to the row. */
  workerId: string | null;
  claimToken: string | null;
  /** Its interruption count before this recovery. */
  interruptions: number;
  /** Whether the claim's start is durably known (`start_known`): only then is it charged. */
  startKnown: boolean;
  /** Whether an operator asked to cancel this claim (`cancel_claim_token` is its token). */
  cancelRequested: boolean;
}

/**
 * What recovery does to one stale claim; `job` is what the contract reports, and its
 * `interruptions` the count to write. `cancel`: finalised `cancelled` (kept the cancelled
 * retention). `requeue`: `queued`, due now, owner cleared (uncharged: `uncharged_recoveries + 1`).
 * `deadLetter`: moved to the DLQ with `reason` and `error` as `last_error`.
 */
export type RecoveryDecision =
  | { kind: "cancel"; claim: StaleClaim; job: RecoveredJob }
  | { kind: "requeue"; claim: StaleClaim; job: RecoveredJob }
  | { kind: "deadLetter"; claim: StaleClaim; job: RecoveredJob; reason: string; error: string };

/**
 * The decision for one stale claim under `rule`: `cancel` when its claim has a cancel request;
 * else charge an interruption only when its start is known, `deadLetter` when the charged count
 * exceeds `rule.maxInterruptions`, else `requeue` (an uncharged claim is always requeued).
 */
export function decideRecovery(claim: StaleClaim, rule: CrashLoopRule): RecoveryDecision {
  const { id, name, queue, workerId: previousOwner, interruptions } = claim;
  const job = { id, name, queue, previousOwner, interruptions, charged: false };
  if (claim.cancelRequested) return { kind: "cancel", claim, job };
  if (!claim.startKnown) return { kind: "requeue", claim, job };
  const charged = { ...job, interruptions: interruptions + 1, charged: true };
  if (charged.interruptions > rule.maxInterruptions) {
    const error = crashLoopText(rule.message, charged.interruptions);
    return { kind: "deadLetter", claim, job: charged, reason: rule.reason, error };
  }
  return { kind: "requeue", claim, job: charged };
}

/** Where the contract's answer lists each kind of decision. */
const RESULT_LIST = {
  cancel: "cancelled",
  requeue: "requeued",
  deadLetter: "deadLettered",
} as const;

/**
 * The contract's answer (`JobStore.jobRecoverStale`): the job of each decision whose fenced write
 * changed its row (its id in `changed`), in decision order; one the fence refused is left out.
 */
export function recoveryResult(
  decisions: readonly RecoveryDecision[],
  changed: ReadonlySet<string>,
): RecoveryResult {
  const result: RecoveryResult = { requeued: [], deadLettered: [], cancelled: [] };
  for (const d of decisions) if (changed.has(d.job.id)) result[RESULT_LIST[d.kind]].push(d.job);
  return result;
}
