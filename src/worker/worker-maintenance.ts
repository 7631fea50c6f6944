/**
 * How a worker takes part in maintenance (docs/reliability.md, "Maintenance: small services behind
 * one lease"): recovery once at start-up, then the maintainer (elector on the maintenance lease;
 * rescuer, pruner and worker reaper while this worker leads) until the drain starts, when it stops
 * and hands the lease on. The only place the worker touches `src/maintenance/`.
 */
import type { Backend } from "../backends/contract/index.js";
import { isSoniqError } from "../errors.js";
import type { Service } from "../lifecycle/service.js";
import { createMaintenance, type Maintenance } from "../maintenance/maintenance.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import type { SoniqSettings } from "../settings.js";
import { errorText } from "./error-text.js";

/** Longest wait from a worker's start to its first try for the maintenance lease, in milliseconds. */
export const LEADERSHIP_SETTLE_MAX_MS = 1000;
/** Bound of the maintainer's stop at drain start, in milliseconds. */
const MAINTENANCE_STOP_BOUND_MS = 2000;

/** Options of {@link WorkerMaintenance}. */
export interface WorkerMaintenanceOptions {
  backend: Backend;
  workerId: string;
  settings: SoniqSettings;
  /**
   * The longest result retention of this worker's jobs, in seconds (the instance's and its job
   * definitions'): the pruner keeps the finished-jobs partitions made that far ahead.
   */
  longestResultRetention?: number;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  /** Seconds this worker has heartbeated without a break. */
  healthySeconds(): number;
  /** Clock in milliseconds since the epoch. */
  now(): number;
  /** More leader-only services for the maintainer (the schedules' scheduler). */
  leaderServices?: readonly Service[];
}

/** See the module comment. */
export class WorkerMaintenance {
  private readonly maintenance: Maintenance;
  private settle: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: WorkerMaintenanceOptions) {
    const { backend, workerId, settings, logger, events } = options;
    this.maintenance = createMaintenance({
      backend,
      workerId,
      settings: {
        ...settings,
        ...(options.longestResultRetention === undefined
          ? {}
          : { longestResultRetention: options.longestResultRetention }),
      },
      logger,
      events,
      clock: options.now,
      healthyForSeconds: options.healthySeconds,
      ...(options.leaderServices ? { leaderServices: options.leaderServices } : {}),
    });
  }

  /** Seconds the maintenance lease lives after each renewal. */
  get leaseSeconds(): number {
    return this.maintenance.leaseSeconds;
  }

  /**
   * Starts the maintainer after a short settle ({@link settleMs}): a new worker's first moments
   * go to its first claims, not to taking the lease and the leader's first pruning, reaping and
   * recovery passes (start-up recovery has already run). Then the elector tries at once; on
   * gaining the lease the leader's services make their first pass and go on at their intervals.
   * Does nothing after {@link stop}.
   */
  start(): void {
    if (this.stopped || this.settle) return;
    this.settle = setTimeout(() => {
      if (!this.stopped) void this.maintenance.service.start();
    }, this.settleMs);
  }

  /**
   * Milliseconds from the worker's start to its first try for the lease: one heartbeat interval,
   * at most {@link LEADERSHIP_SETTLE_MAX_MS}.
   */
  get settleMs(): number {
    return Math.min(LEADERSHIP_SETTLE_MAX_MS, this.options.settings.heartbeatInterval * 1000);
  }

  /**
   * Recovery at start-up (one of its clocks): jobs of stopped or unknown owners. Owners with a
   * stale heartbeat wait for the leader's rescuer, once that worker has itself heartbeated for
   * `heartbeatTimeout` (after an outage every heartbeat is stale, live workers' too). Never throws.
   */
  async recoverAtStart(): Promise<void> {
    await this.maintenance.rescuer.runOnce({ staleMeansDead: false }).catch((err: unknown) => {
      // The worker stopped while the call was out and the backend was closed: nothing retries.
      if (this.stopped && isSoniqError(err, "CLOSED")) {
        this.options.logger.debug(
          { err: errorText(err, 300) },
          "start-up recovery ended by the stop",
        );
        return;
      }
      this.options.logger.warn(
        { err: errorText(err, 300) },
        "start-up recovery failed; the maintenance loop will retry",
      );
    });
  }

  /** At drain start: stop the maintainer (bounded), which hands the lease on. Never throws. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.settle);
    await this.maintenance.service.stop(MAINTENANCE_STOP_BOUND_MS).catch(() => undefined);
  }
}
