/**
 * The claim's per-queue `max_running` rule, written once for both engines (docs/backends.md,
 * "Shared policy and engine code"): a paused queue gives a claim nothing; a limited queue gives
 * at most its room ({@link limitedRoom}), after the queues without a limit, in queue-name order,
 * until the claim's own limit. Each engine counts and claims in its own SQL, atomically with the
 * claim.
 */

/**
 * How many jobs a claim may take from a queue with a `max_running`: `maxRunning` minus its
 * `processing` rows (counted inside the claim's transaction, across every process), at most
 * `wanted` (the claim's limit minus what it already took), never below 0 (a limit lowered below
 * the running count gives no room).
 */
export function limitedRoom(load: {
  maxRunning: number;
  processing: number;
  wanted: number;
}): number {
  return Math.max(0, Math.min(load.wanted, load.maxRunning - load.processing));
}
