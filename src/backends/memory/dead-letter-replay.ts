/**
 * The memory backend's replay of a dead letter: the entry goes back to `soniq_jobs` as a fresh
 * queued job (attempts, interruptions and result reset), unless another job holds its dedup key.
 */
import { SoniqError } from "../../errors.js";
import type { MemoryState } from "./state.js";

/**
 * See `JobStore.deadLetterReplay`: false when there is no entry `id`.
 * @throws SoniqError `DEDUP_CONFLICT` when a job holds the entry's dedup key (nothing changes).
 */
export function replayDeadLetter(state: MemoryState, id: string): boolean {
  state.check();
  const entry = state.dead.get(id);
  if (!entry) return false;
  if (entry.dedupKey !== null) {
    for (const row of state.jobs.values()) {
      if (row.dedupKey === entry.dedupKey) {
        throw new SoniqError(
          "DEDUP_CONFLICT",
          `job ${row.id} already holds dedup key ${JSON.stringify(entry.dedupKey)}`,
        );
      }
    }
  }
  state.dead.delete(id);
  const { reason: _reason, deadAt: _deadAt, ...rest } = entry;
  const now = state.date();
  state.jobs.set(id, {
    ...rest,
    meta: null,
    status: "queued",
    attempts: 0,
    interruptions: 0,
    unchargedRecoveries: 0,
    startKnown: true,
    scheduledAt: now,
    updatedAt: now,
    startedAt: null,
    finishedAt: null,
    workerId: null,
    claimToken: null,
    result: null,
    resultExpiresAt: null,
  });
  state.bus.wake(entry.queue);
  return true;
}
