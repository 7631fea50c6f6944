/**
 * The `ctx` an async handler receives (the {@link JobContext} shape). One object per job on the
 * worker's hot path, so it is a class rather than an object literal with getters (which is built
 * through a slow runtime path, per job). Nothing costly is created until a handler asks:
 * `ctx.signal` creates the job's `AbortSignal` on first read (LazyAbortController) and
 * `ctx.logger` the job's child logger. Those two are own, enumerable accessors (defined from one
 * shared descriptor map), so `{ ...ctx }`, `Object.keys(ctx)` and destructuring see every field,
 * as with a plain object; `progress` and `schedule` are plain properties.
 */
import {
  type DependencyReader,
  type DependencyResult,
  type JobContext,
  type ScheduleContext,
  scheduleContextOf,
} from "../jobs/context.js";
import { checkProgress } from "../jobs/progress.js";
import { type RateLimited, type RateLimitedOptions, rateLimited } from "../jobs/rate-limited.js";
import type { JobLogger } from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import type { InFlight } from "./in-flight.js";

/** See the module comment. */
export class AsyncJobContext implements JobContext {
  /** Own accessor (see the module comment): the job's stop signal; assignable. */
  declare signal: AbortSignal;
  /** Own accessor (see the module comment): the job's child logger, created on first read. */
  declare logger: Logger;
  jobId: string;
  name: string;
  attempt: number;
  maxAttempts: number;
  queue: string;
  workerId: string;
  createdAt: Date;
  scheduledAt: Date;
  schedule: ScheduleContext | undefined;
  progress: (fraction: number, message?: string) => void;
  readonly #entry: InFlight;
  readonly #log: JobLogger | Logger;
  readonly #dependencies: DependencyReader | undefined;
  #signal: AbortSignal | undefined;

  /** `signal` and `logger`, the same two accessor functions for every context. */
  static readonly #accessors: PropertyDescriptorMap = {
    signal: {
      enumerable: true,
      configurable: true,
      get(this: AsyncJobContext): AbortSignal {
        return this.#signal ?? this.#entry.controller.signal;
      },
      set(this: AsyncJobContext, value: AbortSignal): void {
        this.#signal = value;
      },
    },
    logger: {
      enumerable: true,
      configurable: true,
      get(this: AsyncJobContext): Logger {
        const log = this.#log;
        return "logger" in log ? log.logger : log;
      },
    },
  };

  /**
   * @param entry - the claimed job; its `controller` backs `signal`, its `progress` fields
   *   receive `progress` reports (written by the next heartbeat).
   * @param log - the job's logger (a lazy child: created when `logger` is first read).
   */
  constructor(
    entry: InFlight,
    log: JobLogger | Logger,
    workerId: string,
    dependencies?: DependencyReader,
  ) {
    const { job } = entry;
    this.#dependencies = dependencies;
    this.#entry = entry;
    this.#log = log;
    Object.defineProperties(this, AsyncJobContext.#accessors);
    this.jobId = job.id;
    this.name = job.name;
    this.attempt = job.attempts + 1;
    this.maxAttempts = job.maxAttempts;
    this.queue = job.queue;
    this.workerId = workerId;
    this.createdAt = job.createdAt;
    this.scheduledAt = job.scheduledAt;
    this.schedule = job.meta === null ? undefined : scheduleContextOf(job.meta);
    this.progress = (fraction, message) => {
      // Kept for the next heartbeat: no write per call.
      entry.progress = checkProgress(fraction, message);
      entry.progressDirty = true;
    };
  }

  /** See {@link JobContext.dependencies} (a prototype method: nothing per job). */
  async dependencies(): Promise<DependencyResult[]> {
    return this.#dependencies ? this.#dependencies(this.jobId) : [];
  }

  /** See {@link JobContext.rateLimited} (a prototype method: nothing per job). */
  rateLimited(retryAfterMs: number, options?: RateLimitedOptions): RateLimited {
    return rateLimited(retryAfterMs, options);
  }
}
