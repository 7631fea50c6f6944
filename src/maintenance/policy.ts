/**
 * The crash-loop policy (docs/reliability.md, "Interruptions are earned"), in one place: the
 * dead-letter reason, the `last_error` text and the threshold. A job whose worker is lost again and
 * again (a poison pill that kills its process) is requeued by each recovery until its interruption
 * count would exceed `maxInterruptions` (`interruptions + 1 > maxInterruptions`); that recovery
 * moves it to the dead-letter queue instead, with reason {@link CRASH_LOOP_REASON}.
 * `maxInterruptions: 0` sends a job there at its first crash recovery.
 *
 * The backends receive the rule as a {@link CrashLoopRule} built here and hold none of its words;
 * the decision is src/backends/shared/recovery-policy.ts, written by each backend atomically and
 * fenced.
 */

import {
  type CrashLoopRule,
  crashLoopText,
  INTERRUPTIONS_PLACEHOLDER,
} from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";

/** The dead-letter `reason` of a job moved there by the crash-loop rule. */
export const CRASH_LOOP_REASON = "crash_loop";

/**
 * The `last_error` of such a job; {@link INTERRUPTIONS_PLACEHOLDER} stands for its interruption
 * count (see {@link crashLoopMessage}).
 */
export const CRASH_LOOP_MESSAGE = `${CRASH_LOOP_REASON}: interrupted ${INTERRUPTIONS_PLACEHOLDER} times (its worker stopped heartbeating each time)`;

/**
 * The rule a recovery pass hands to `JobStore.jobRecoverStale`.
 * @param maxInterruptions - the `maxInterruptions` setting: how many crash recoveries a job may
 *   have (a count, ≥ 0). A row whose count after this recovery would exceed it is dead-lettered.
 * @throws SoniqError `INVALID_OPTION` when `maxInterruptions` is not a non-negative integer.
 */
export function crashLoopRule(maxInterruptions: number): CrashLoopRule {
  if (!Number.isInteger(maxInterruptions) || maxInterruptions < 0) {
    throw new SoniqError(
      "INVALID_OPTION",
      `maxInterruptions must be a non-negative integer, got ${maxInterruptions}`,
    );
  }
  return { maxInterruptions, reason: CRASH_LOOP_REASON, message: CRASH_LOOP_MESSAGE };
}

/** The `last_error` text of a job dead-lettered after `interruptions` interruptions. */
export function crashLoopMessage(interruptions: number): string {
  return crashLoopText(CRASH_LOOP_MESSAGE, interruptions);
}
