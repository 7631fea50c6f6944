/**
 * The in-process hand-off desk (contract/hand-off.ts): the workers of this process that may take
 * a job at enqueue, asked in registration order for a slot reservation. Lives beside the wake bus:
 * both are how a backend's own writes reach this process's workers without a round trip.
 */

import type { HandOffDesk, HandOffReservation, HandOffTaker, NewJob } from "../contract/index.js";
import { hasConcurrencyKey } from "./concurrency-meta.js";

/** See the module comment. */
export class LocalHandOffDesk implements HandOffDesk {
  private readonly takers = new Set<HandOffTaker>();
  private closed = false;

  /** See {@link HandOffDesk.register}. After {@link close}, registers nothing. */
  register(taker: HandOffTaker): () => void {
    if (this.closed) return () => undefined;
    this.takers.add(taker);
    return () => {
      this.takers.delete(taker);
    };
  }

  /**
   * The first reservation a registered worker grants for a job named `name` of `queue` and
   * version `version` (default 1), or `undefined` when none that can run it is idle on it. The caller must settle it exactly once
   * (contract/hand-off.ts).
   */
  reserve(queue: string, name: string, version = 1): HandOffReservation | undefined {
    for (const taker of this.takers) {
      const reservation = taker.reserve(queue, name, version);
      if (reservation) return reservation;
    }
    return undefined;
  }

  /**
   * The hand-off rule's first half, the same on every backend: a reservation for a pool enqueue of
   * `jobs` when it is exactly one job due now (no `runAt`, no delay) and a worker that can run its
   * name and version is idle on its queue, and it has no concurrency key; otherwise `undefined` (the ordinary path). Synchronous.
   * The caller must not ask for an enqueue inside a caller's transaction, and must settle the
   * reservation exactly once.
   */
  reserveFor(
    jobs: readonly NewJob[],
  ): { job: NewJob; reservation: HandOffReservation } | undefined {
    const job = jobs.length === 1 ? jobs[0] : undefined;
    if (!job || job.runAt !== null || job.delaySeconds !== 0 || this.takers.size === 0) {
      return undefined;
    }
    // A job with a concurrency key is never handed off: only a claim counts its key's running
    // jobs (docs/flow-control.md).
    if (hasConcurrencyKey(job.meta)) return undefined;
    const reservation = this.reserve(job.queue, job.name, job.version ?? 1);
    return reservation ? { job, reservation } : undefined;
  }

  /** Drops every worker; later registrations do nothing (the backend is closed). */
  close(): void {
    this.closed = true;
    this.takers.clear();
  }
}
