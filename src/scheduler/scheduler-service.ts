/**
 * The scheduler service (a {@link BaseService}): run by the lease holder, it ticks, then
 * sleeps until the next due instant by the database clock (at most `maxSleepMs`, so rows changed
 * by another process are seen), with no fixed polling. A tick is one transaction per schedule
 * that commits or rolls back; stop aborts the run's signal, which the tick checks between
 * schedules, and waits for the write in flight within the service's bound. A tick that throws is
 * logged and retried with a bounded back-off; it never becomes an unhandled rejection.
 */

import { BaseService, closedAfterStop } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import type { Scheduler } from "./scheduler.js";

/** Options of {@link SchedulerService}. */
export interface SchedulerServiceOptions {
  scheduler: Scheduler;
  logger: Logger;
  /** Longest sleep between ticks, in milliseconds (default 60 000). */
  maxSleepMs?: number;
  /** Bound of `stop()`, in milliseconds (default: the service default, 5 000). */
  stopBoundMs?: number;
}

/** Pause after a lost compare-and-set before looking again, in milliseconds. */
const CONTENDED_MS = 100;
/** First retry delay after a failed tick, in milliseconds; doubles up to {@link MAX_BACKOFF_MS}. */
const FIRST_BACKOFF_MS = 500;
/** Longest retry delay after failed ticks, in milliseconds. */
const MAX_BACKOFF_MS = 30_000;

/** See the module comment. */
export class SchedulerService extends BaseService {
  private readonly scheduler: Scheduler;
  private readonly maxSleepMs: number;
  private interrupt: (() => void) | undefined;
  private woken = false;

  constructor(options: SchedulerServiceOptions) {
    super({
      name: "scheduler",
      logger: options.logger,
      ...(options.stopBoundMs === undefined ? {} : { stopBoundMs: options.stopBoundMs }),
    });
    this.scheduler = options.scheduler;
    this.maxSleepMs = options.maxSleepMs ?? 60_000;
  }

  /** Cuts the current sleep short (a schedule changed in this process). */
  wake(): void {
    this.woken = true;
    this.interrupt?.();
  }

  protected async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    while (!signal.aborted) {
      this.woken = false;
      let waitMs: number;
      try {
        const result = await this.scheduler.tick(0, signal);
        if (result.backlog) waitMs = 0;
        else if (result.nextDueAt === null) waitMs = this.maxSleepMs;
        else {
          const until = result.nextDueAt.getTime() - result.now.getTime();
          waitMs = until <= 0 ? CONTENDED_MS : Math.min(until, this.maxSleepMs);
        }
        failures = result.failed > 0 ? failures + 1 : 0;
        if (failures > 0) waitMs = Math.max(waitMs, backoff(failures));
      } catch (err) {
        if (closedAfterStop(err, signal)) {
          this.logger.debug({ err }, "scheduler tick ended by the closed backend after the stop");
          break;
        }
        failures += 1;
        waitMs = backoff(failures);
        this.logger.warn({ err, retry_ms: waitMs }, "scheduler tick failed; will retry");
      }
      if (signal.aborted) break;
      if (waitMs > 0 && !this.woken) await this.pause(waitMs, signal);
    }
  }

  /** Sleeps `ms` milliseconds, or until {@link wake} or the stop signal. */
  private pause(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.interrupt = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
      this.interrupt = done;
    });
  }
}

function backoff(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, failures - 1));
}
