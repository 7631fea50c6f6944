/**
 * How a worker takes part in schedules (docs/schedules.md): it reconciles the declared schedules at
 * start-up; its scheduler service runs as a leader-only child of the maintainer (woken at the next
 * due instant, and at once when this process changes a schedule); and every heartbeat runs a
 * catch-up for occurrences overdue by more than the lease time-to-live — the second clock
 * (docs/schedules.md, "Guarantees"), so a dead leader costs seconds, not a run. The only place the
 * worker touches `src/scheduler/`.
 */
import type { Backend } from "../backends/contract/index.js";
import { isSoniqError } from "../errors.js";
import { closedAfterStop } from "../lifecycle/service.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { reconcileSchedules } from "../scheduler/reconcile.js";
import type { ScheduleDefinition } from "../scheduler/schedule-definition.js";
import { Scheduler } from "../scheduler/scheduler.js";
import { SchedulerService } from "../scheduler/scheduler-service.js";
import { errorText } from "./error-text.js";
import { DB_CALL_TIMEOUT_MS, withTimeout } from "./with-timeout.js";

/** Bound of the scheduler service's stop, in milliseconds (inside the maintainer's 2 s bound). */
const SCHEDULER_STOP_BOUND_MS = 1500;

/** Options of {@link WorkerSchedules}. */
export interface WorkerSchedulesOptions {
  backend: Backend;
  workerId: string;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  /** Seconds the maintenance lease lives after a renewal: the catch-up's overdue threshold. */
  leaseSeconds: number;
  /** True while the worker may enqueue (RUNNING, not draining). */
  running(): boolean;
  /** Subscribes to schedule changes made through the instance; returns the unsubscribe. */
  onChanged?: (listener: () => void) => () => void;
}

/** See the module comment. */
export class WorkerSchedules {
  /** The leader-only service (give it to the maintainer). */
  readonly service: SchedulerService;
  private readonly scheduler: Scheduler;
  private readonly unsubscribe: () => void;

  constructor(private readonly options: WorkerSchedulesOptions) {
    const { backend, workerId, logger, events } = options;
    this.scheduler = new Scheduler({
      store: backend,
      logger,
      emit: (payload) => events.emit("schedule_occurrence", { worker_id: workerId, ...payload }),
    });
    this.service = new SchedulerService({
      scheduler: this.scheduler,
      logger,
      // Rows changed by another process are seen within a lease's life at the latest.
      maxSleepMs: Math.max(1000, options.leaseSeconds * 1000),
      stopBoundMs: SCHEDULER_STOP_BOUND_MS,
    });
    const service = this.service;
    this.unsubscribe = options.onChanged?.(() => service.wake()) ?? (() => undefined);
  }

  /**
   * Upserts the declared schedules (reconcile.ts). A failure to reach the database is logged and
   * the stored schedules still run.
   * @throws SoniqError `INVALID_ARGS` when a definition's arguments fail its job's (asynchronous)
   * schema: a configuration error that fails the start; nothing is written.
   */
  async reconcile(definitions: Iterable<ScheduleDefinition>): Promise<void> {
    const declared = [...definitions];
    if (declared.length === 0) return;
    try {
      await reconcileSchedules(this.options.backend, declared, this.options.logger);
    } catch (err) {
      if (isSoniqError(err, "INVALID_ARGS")) throw err;
      this.options.logger.warn(
        { err: errorText(err, 300) },
        "syncing the declared schedules failed; the stored schedules still run",
      );
    }
  }

  /**
   * The heartbeat's catch-up: takes occurrences overdue by more than the lease time-to-live (the
   * lease holder's service would have taken them, so it is dead or stuck). The compare-and-set
   * makes this safe next to a live leader. Only while the worker runs; never throws.
   */
  async catchUp(signal?: AbortSignal): Promise<void> {
    if (!this.options.running() || signal?.aborted) return;
    try {
      const result = await withTimeout(
        this.scheduler.tick(this.options.leaseSeconds, signal),
        DB_CALL_TIMEOUT_MS,
        "schedule catch-up",
      );
      if (result.taken > 0) {
        this.options.logger.warn(
          { taken: result.taken },
          "caught up schedule occurrences the lease holder did not take",
        );
      }
    } catch (err) {
      // The worker stopped while the call was out and the backend was closed: nothing retries.
      if (signal && closedAfterStop(err, signal)) {
        this.options.logger.debug(
          { err: errorText(err, 300) },
          "schedule catch-up ended by the stop",
        );
        return;
      }
      this.options.logger.warn(
        { err: errorText(err, 300) },
        "schedule catch-up failed; will retry",
      );
    }
  }

  /** Stops listening for changes (the service itself stops with the maintainer). */
  close(): void {
    this.unsubscribe();
  }
}
