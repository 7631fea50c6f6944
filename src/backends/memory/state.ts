/**
 * The memory backend's shared state: the tables as maps, the clock, the wake bus and the
 * open/closed guard, held once and handed to each memory store.
 */
import { SoniqError } from "../../errors.js";
import type {
  DeadLetterRow,
  JobRow,
  RecoveredJob,
  WorkerRow,
  WorkerShutdownState,
} from "../contract/index.js";
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
  /** `soniq_queues` by name (operations: pause, `maxRunning`). */
  readonly queues = new Map<string, MemoryQueueConfig>();
  /** `soniq_job_controls` by job id (cancel request bound to a claim, progress). */
  readonly controls = new Map<string, MemoryControls>();
  /** What each worker declared (the extra `soniq_workers` columns), by worker id. */
  readonly declared = new Map<string, MemoryWorkerDeclared>();
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
    if (w === undefined || w.status === "stopped") return false;
    if (staleAfterSeconds === undefined) return true;
    // The worker's own declared heartbeat timeout wins over the caller's.
    const timeout = this.declared.get(w.id)?.heartbeatTimeoutSeconds ?? staleAfterSeconds;
    return this.clock() - w.lastHeartbeatAt.getTime() <= timeout * 1000;
  }

  /**
   * The claim's view of the queue configuration: for each paused queue 0, for each queue with a
   * `maxRunning` the room left (`maxRunning` minus its processing rows); other queues absent.
   */
  queueRoom(): Map<string, number> {
    const room = new Map<string, number>();
    for (const [name, config] of this.queues) {
      if (config.paused) room.set(name, 0);
      else if (config.maxRunning !== null) room.set(name, config.maxRunning);
    }
    for (const row of this.jobs.values()) {
      const left = room.get(row.queue);
      if (row.status === "processing" && left !== undefined) room.set(row.queue, left - 1);
    }
    return room;
  }

  /** Recovery of a claim with a cancel request: `cancelled`, kept `retentionSeconds`. */
  finaliseCancelled(row: JobRow, retentionSeconds: number): RecoveredJob {
    const stamp = this.date();
    const job = {
      id: row.id,
      name: row.name,
      queue: row.queue,
      previousOwner: row.workerId,
      interruptions: row.interruptions,
    };
    Object.assign(row, {
      status: "cancelled",
      finishedAt: stamp,
      updatedAt: stamp,
      resultExpiresAt: this.date(retentionSeconds),
    });
    return job;
  }

  /** True when the claim `claimToken` of job `id` has a cancel request. */
  cancelRequested(id: string, claimToken: string | null): boolean {
    const c = this.controls.get(id);
    return claimToken !== null && c !== undefined && c.cancelClaimToken === claimToken;
  }
}

/** A `soniq_queues` row. */
export interface MemoryQueueConfig {
  paused: boolean;
  maxRunning: number | null;
  updatedAt: Date;
}

/** A `soniq_job_controls` row. */
export interface MemoryControls {
  cancelRequestedAt: Date | null;
  /** The claim the cancel request binds. */
  cancelClaimToken: string | null;
  progress: number | null;
  progressMessage: string | null;
  progressAt: Date | null;
}

/** What a worker declared (the extra `soniq_workers` columns). */
export interface MemoryWorkerDeclared {
  heartbeatTimeoutSeconds: number | null;
  shutdownState: WorkerShutdownState;
  drainStartedAt: Date | null;
  deadlineAt: Date | null;
}
