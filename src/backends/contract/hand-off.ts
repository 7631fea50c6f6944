/**
 * Hand-off at enqueue (docs/performance.md, "Hand-off at enqueue"): a pool enqueue of one job due
 * now may insert the row already claimed by an idle worker of the same process, so the job needs
 * one round trip and one commit flush instead of two of each (enqueue, then claim). The backend
 * asks the workers registered at its {@link HandOffDesk} for a slot {@link HandOffReservation}
 * before the insert; the database decides in the same statement whether the job is handed off (its
 * queue has no due backlog and is neither paused nor limited) or queued as usual.
 *
 * Rules every implementation keeps:
 * - Only a pool enqueue of exactly one job, due now (no `runAt`, no delay), asks for a
 *   reservation; never an enqueue inside a caller's transaction (the row would exist before the
 *   caller commits, and a rollback would have run a job that never existed).
 * - Every reservation is settled exactly once: {@link HandOffReservation.deliver} (the row was
 *   committed as `processing`, owned by the reserving worker), {@link HandOffReservation.cancel}
 *   (nothing of it was claimed: queued, a dedup hit, or a statement known to have failed before
 *   it committed) or {@link HandOffReservation.lost} (the reply is missing: the row may exist,
 *   owned by the worker, which must look for rows it owns but does not track).
 * - A handed-off row is written exactly as a worker's claim writes it: `status = 'processing'`,
 *   `worker_id`, a fresh `claim_token`, `started_at` and `updated_at` = now, start not known
 *   (`start_known = false`), `attempts` 0. It does not wake anyone (it is not `queued`).
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */
import type { ClaimedJob } from "./types.js";

/** A worker's free slot, held for one enqueue until the enqueue's reply settles it. */
export interface HandOffReservation {
  /** The worker incarnation that will own the row (the claim's `worker_id`). */
  readonly workerId: string;
  /**
   * The row was committed as claimed by {@link workerId}: the worker takes it as it takes a claimed
   * row (and NACKs it unstarted when its drain began meanwhile). Called when the reply arrives; the
   * worker starts the job in that event-loop iteration.
   */
  deliver(job: ClaimedJob): void;
  /** Nothing was claimed for the worker: the slot is free again. */
  cancel(): void;
  /**
   * The enqueue's reply was lost (timeout, dropped connection): the row may have been committed as
   * claimed by the worker. The slot is free again, and the worker releases rows it owns but does
   * not track (its orphan release, after a lost claim answer).
   */
  lost(error: unknown): void;
}

/** A worker that may take jobs at enqueue. */
export interface HandOffTaker {
  /**
   * A reservation of one free slot for a job named `name` of `queue` and version `version`
   * (default 1), or `undefined` when this worker is not idle on it (not RUNNING, no free slot,
   * busy claiming, its queue filter excludes `queue`, or it has no definition of `name` whose
   * version is at least `version` — it would never claim such a job). Synchronous: the
   * reservation counts as a busy slot at once.
   */
  reserve(queue: string, name: string, version?: number): HandOffReservation | undefined;
}

/** Where a backend finds this process's workers that may take a job at enqueue. */
export interface HandOffDesk {
  /**
   * Registers `taker` (a started worker). Takers are asked in registration order.
   * @returns The unregister function (idempotent).
   */
  register(taker: HandOffTaker): () => void;
}
