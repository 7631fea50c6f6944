/**
 * Dispositions: where a remote job was when the drain deadline came or its worker died, and what
 * happens to it. One table for both clocks — the drain deadline (FORCE_TIMEOUT_PATH) and crash
 * recovery after SIGKILL — because recovery follows the last durable phase exactly as the deadline
 * does. docs/remote-jobs.md renders it ("Dispositions").
 */

/** Where a remote job is, as far as the worker holding it knows. */
export type RemoteWhere =
  /** Claimed; `submitting` not written (preflight, admission, or waiting to start). */
  | "claimed"
  /** `submitting` written; the POST may be in flight and no usable answer came. */
  | "submitting"
  /** `accepted` with a task id; a poll (or a reconcile) is in flight. */
  | "accepted";

/** What is done with it. */
export type HandoffAction =
  /** Back to `queued`, due now, attempts kept (the shutdown NACK; crash recovery's requeue). */
  | "release"
  /** `frozen`: owner cleared, attempts kept, never claimed automatically; reconcile or operator. */
  | "freeze"
  /** Handed to polling: owner cleared, next poll due now, on any worker. */
  | "handoff";

/** The clock that decided. */
export type DispositionClock = "deadline" | "crash";

/** The disposition table: the same on both clocks. */
export const DISPOSITIONS: Readonly<Record<RemoteWhere, HandoffAction>> = {
  claimed: "release",
  submitting: "freeze",
  accepted: "handoff",
};

/**
 * The action for a job found in `where` when `clock` decides (see {@link DISPOSITIONS}). A
 * definite answer that arrived in time is recorded as such and never reaches this table.
 */
export function dispositionOf(where: RemoteWhere, _clock: DispositionClock): HandoffAction {
  return DISPOSITIONS[where];
}
