/**
 * The in-process hand-off desk (contract/hand-off.ts): the workers of this process that may take
 * a job at enqueue, asked in registration order for a slot reservation. Lives beside the wake bus:
 * both are how a backend's own writes reach this process's workers without a round trip.
 */
import type { HandOffDesk, HandOffReservation, HandOffTaker } from "../contract/index.js";

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

  /** Whether any worker is registered (a cheap test before building anything for a hand-off). */
  get size(): number {
    return this.takers.size;
  }

  /**
   * The first reservation a registered worker grants for a job of `queue`, or `undefined` when none
   * is idle on it. The caller must settle it exactly once (contract/hand-off.ts).
   */
  reserve(queue: string): HandOffReservation | undefined {
    for (const taker of this.takers) {
      const reservation = taker.reserve(queue);
      if (reservation) return reservation;
    }
    return undefined;
  }

  /** Drops every worker; later registrations do nothing (the backend is closed). */
  close(): void {
    this.closed = true;
    this.takers.clear();
  }
}
