/**
 * The memory backend's shared state: the tables as maps, the clock, the wake bus and the
 * open/closed guard, held once and handed to each memory store.
 */
import { SoniqError } from "../../errors.js";
import type { DeadLetterRow, JobRow, WorkerRow } from "../contract/index.js";
import { WakeBus } from "../shared/wake-bus.js";

/** The tables and clock every memory store reads and writes. */
export class MemoryState {
  /** `soniq_jobs` by id. */
  readonly jobs = new Map<string, JobRow>();
  /** `soniq_dead_letter_jobs` by id. */
  readonly dead = new Map<string, DeadLetterRow>();
  /** `soniq_workers` by id. */
  readonly workers = new Map<string, WorkerRow>();
  /** `soniq_leases` by name; `expiresAt` in milliseconds since the epoch. */
  readonly leases = new Map<string, { holder: string; expiresAt: number }>();
  /** This backend's wake-ups. */
  readonly bus = new WakeBus();
  private closed = false;

  /** @param clock The "database clock": milliseconds since the epoch. */
  constructor(readonly clock: () => number) {}

  /** @throws SoniqError `CLOSED` after {@link close}. */
  check(): void {
    if (this.closed) throw new SoniqError("CLOSED", "the memory backend is closed");
  }

  /** Marks the state closed and drops every wake-up subscriber. */
  close(): void {
    this.closed = true;
    this.bus.close();
  }

  /** The clock's now plus `offsetSeconds` (**seconds**), as a `Date`. */
  date(offsetSeconds = 0): Date {
    return new Date(this.clock() + Math.round(offsetSeconds * 1000));
  }

  /**
   * Whether `workerId` is a live incarnation: registered, not stopped, and (when
   * `staleAfterSeconds` is given) heartbeating within that many **seconds**.
   */
  isLive(workerId: string | null, staleAfterSeconds: number | undefined): boolean {
    const w = workerId === null ? undefined : this.workers.get(workerId);
    return (
      w !== undefined &&
      w.status !== "stopped" &&
      (staleAfterSeconds === undefined ||
        this.clock() - w.lastHeartbeatAt.getTime() <= staleAfterSeconds * 1000)
    );
  }
}
