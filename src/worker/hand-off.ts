/**
 * The worker's side of hand-off at enqueue (contract/hand-off.ts): while RUNNING and idle on a
 * queue — a free slot, no claim waiting for its answer, the queue within its filter — it grants a
 * pool enqueue of one due job a slot reservation; a row the database then inserted already claimed
 * by this worker is started in the reply's event-loop iteration (after the enqueue's own
 * continuations) through the claim loop's own dispatch (start gate,
 * deadline, outcome recording unchanged). A row delivered after the drain began is NACK'd unstarted,
 * like a claim answered late (a `prefetch_released` event, reason `late_claim`); a lost reply marks the worker's owned rows as suspect, for the
 * heartbeat's orphan release (heartbeat.ts), exactly as a failed claim does.
 */
import type {
  ClaimedJob,
  HandOffDesk,
  HandOffReservation,
  HandOffTaker,
} from "../backends/contract/index.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import type { OrphanSource } from "./heartbeat.js";
import type { InFlightTable } from "./in-flight.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

/** Options of {@link WorkerHandOff}. */
export interface WorkerHandOffOptions {
  workerId: string;
  /** Queues the worker claims from; `null` = all. */
  queues: readonly string[] | null;
  /** Slots: jobs run at once. */
  concurrency: number;
  /**
   * True when the worker has a definition of the job name whose version is at least `version`
   * (the job's): it claims only those.
   */
  canRun(name: string, version: number): boolean;
  table: InFlightTable;
  machine: ShutdownMachine;
  logger: Logger;
  /**
   * True while the claim loop is running and no claim waits for its answer (the worker looked for
   * work and found none it could take); a reservation is granted only then.
   */
  idle(): boolean;
  /** Runs a claimed job (the claim loop's dispatch: tracked in `table` by the callee). */
  dispatch(job: ClaimedJob): void;
  /**
   * Releases a claimed job unstarted (NACK; tracked in `table` by the callee) and reports it as a
   * `prefetch_released` event: `late_claim` when the drain began while the enqueue was in flight,
   * `ttl` when the reply came past the start TTL.
   */
  releaseLate(job: ClaimedJob, reason: "late_claim" | "ttl"): void;
  /**
   * The start TTL in milliseconds: a row delivered longer than this after its reservation (the
   * worker was frozen meanwhile) is released unstarted, never run. Absent: no such check.
   */
  startTtlMs?: number;
  /** Clock in milliseconds for {@link startTtlMs}; default `Date.now`. */
  now?(): number;
}

/** See the module comment. */
export class WorkerHandOff implements HandOffTaker {
  private pending = 0;
  private suspect = false;
  private closed = false;
  private unregister: (() => void) | undefined;
  private whenSettled: (() => void) | undefined;

  constructor(private readonly options: WorkerHandOffOptions) {}

  /** Reservations granted and not settled yet (their enqueue statements are in flight). */
  get pendingCount(): number {
    return this.pending;
  }

  /** Offers this worker's free slots at `desk` (a no-op without one, or once closed). */
  open(desk: HandOffDesk | undefined): void {
    if (this.closed || !desk || this.unregister) return;
    this.unregister = desk.register(this);
  }

  /**
   * Grants no more reservations (the drain began, or the worker stops) and resolves once every
   * reservation granted before was settled, or after `boundMs` milliseconds — a reply that comes
   * later is still NACK'd unstarted.
   */
  close(boundMs: number): Promise<void> {
    this.closed = true;
    this.unregister?.();
    this.unregister = undefined;
    if (this.pending === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, boundMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.whenSettled = done;
    });
  }

  /**
   * Stops {@link close} waiting for replies (FORCE_TIMEOUT_PATH: the drain waits for no claim past
   * it). A reply that comes later is NACK'd unstarted all the same.
   */
  abandon(): void {
    this.whenSettled?.();
  }

  /**
   * True once (then cleared) after a hand-off reply was lost, when no reservation is pending: rows
   * this worker owns but does not track may be that enqueue's.
   */
  takeOrphanSuspicion(): boolean {
    if (!this.suspect || this.pending > 0) return false;
    this.suspect = false;
    return true;
  }

  /** See {@link HandOffTaker.reserve}. */
  reserve(queue: string, name: string, version = 1): HandOffReservation | undefined {
    const { queues, table, machine } = this.options;
    if (this.closed || machine.state !== "RUNNING") return undefined;
    if (queues !== null && !queues.includes(queue)) return undefined;
    if (!this.options.canRun(name, version)) return undefined;
    if (this.options.concurrency - table.busySlots <= 0 || !this.options.idle()) return undefined;
    table.reserveSlot();
    this.pending += 1;
    const now = this.options.now ?? Date.now;
    const reservedAt = now();
    let settled = false;
    const settle = (wake: boolean): boolean => {
      if (settled) return false;
      settled = true;
      this.pending -= 1;
      // Only a reservation that filled the last free slot can have kept a claim from running.
      table.releaseReserved(wake && table.busySlots >= this.options.concurrency);
      if (this.pending === 0) this.whenSettled?.();
      return true;
    };
    return {
      workerId: this.options.workerId,
      deliver: (job) => {
        if (settled) return;
        // In the reply's loop iteration, once the enqueue's own continuations (its caller's
        // `job_enqueued`) have run; the slot stays reserved until the job is tracked.
        setImmediate(() => {
          if (!settle(false)) return;
          // The drain began while the enqueue was in flight, or the reply came past the start
          // TTL (a frozen worker: recovery may have handed the row on): ours, never started.
          const { startTtlMs } = this.options;
          const late = startTtlMs !== undefined && now() - reservedAt > startTtlMs;
          if (machine.state !== "RUNNING") this.options.releaseLate(job, "late_claim");
          else if (late) this.options.releaseLate(job, "ttl");
          else this.options.dispatch(job);
        });
      },
      cancel: () => {
        settle(true);
      },
      lost: (error) => {
        if (!settle(true)) return;
        this.suspect = true;
        this.options.logger.warn(
          { queue, err: errorText(error, 500) },
          "a hand-off enqueue lost its reply: rows this worker owns but does not track will be released",
        );
      },
    };
  }
}

/**
 * The heartbeat's orphan source for a worker that claims and takes hand-offs: "in flight" while
 * either waits for an answer; the suspicion is taken only when neither does (so a release never
 * races an answer still on its way), and then from both; a release that had to skip rows keeps it
 * for the next beat.
 */
export function orphanSources(claims: OrphanSource, handOff: WorkerHandOff): OrphanSource {
  let retained = false;
  return {
    get claimInFlight() {
      return claims.claimInFlight || handOff.pendingCount > 0;
    },
    takeOrphanSuspicion() {
      if (claims.claimInFlight || handOff.pendingCount > 0) return false;
      const fromClaims = claims.takeOrphanSuspicion();
      const fromHandOff = handOff.takeOrphanSuspicion();
      const suspect = fromClaims || fromHandOff || retained;
      retained = false;
      return suspect;
    },
    retainOrphanSuspicion() {
      retained = true;
    },
  };
}
