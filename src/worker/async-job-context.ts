/**
 * The `ctx` an async handler receives (the {@link JobContext} shape). One object per job on the
 * worker's hot path, so it is a class rather than an object literal with getters (which is built
 * through a slow runtime path, per job). Nothing costly is created until a handler asks:
 * `ctx.signal` creates the job's `AbortSignal` on first read (LazyAbortController) and
 * `ctx.logger` the job's child logger. Those two are own, enumerable accessors (defined from one
 * shared descriptor map), so `{ ...ctx }`, `Object.keys(ctx)` and destructuring see every field,
 * as with a plain object; so are `checkpoint` and `step` (each a function made on first read,
 * its job's JobResume on first call: job-resume.ts); `progress`, `schedule` and `resume` are
 * plain properties.
 */
import { SoniqError } from "../errors.js";
import {
  type DependencyReader,
  type DependencyResult,
  type JobContext,
  type ScheduleContext,
  type StepOptions,
  scheduleContextOf,
} from "../jobs/context.js";
import { checkProgress } from "../jobs/progress.js";
import { type RateLimited, type RateLimitedOptions, rateLimited } from "../jobs/rate-limited.js";
import type { JobLogger } from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import type { InFlight } from "./in-flight.js";
import { JobResume, type ResumeDeps, resumeValue } from "./job-resume.js";

/** See the module comment. */
export class AsyncJobContext implements JobContext {
  /** Own accessor (see the module comment): the job's stop signal; assignable. */
  declare signal: AbortSignal;
  /** Own accessor (see the module comment): the job's child logger, created on first read. */
  declare logger: Logger;
  /** Own accessor (see the module comment): `ctx.checkpoint`, a function made on first read. */
  declare checkpoint: (state: unknown) => Promise<void>;
  /** Own accessor (see the module comment): `ctx.step`, a function made on first read. */
  declare step: <T>(name: string, fn: () => T | Promise<T>, options?: StepOptions<T>) => Promise<T>;
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
  resume: unknown;
  readonly #entry: InFlight;
  readonly #deps: ResumeDeps | undefined;
  readonly #log: JobLogger | Logger;
  readonly #dependencies: DependencyReader | undefined;
  #signal: AbortSignal | undefined;
  #checkpoint: ((state: unknown) => Promise<void>) | undefined;
  #step: AsyncJobContext["step"] | undefined;

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
    checkpoint: {
      enumerable: true,
      configurable: true,
      get(this: AsyncJobContext): AsyncJobContext["checkpoint"] {
        this.#checkpoint ??= (state) => {
          const resume = this.#resume();
          return resume instanceof JobResume ? resume.checkpoint(state) : Promise.reject(resume);
        };
        return this.#checkpoint;
      },
    },
    step: {
      enumerable: true,
      configurable: true,
      get(this: AsyncJobContext): AsyncJobContext["step"] {
        this.#step ??= <T>(name: string, fn: () => T | Promise<T>, options?: StepOptions<T>) => {
          const resume = this.#resume();
          return resume instanceof JobResume
            ? resume.step(name, fn, options)
            : Promise.reject(resume);
        };
        return this.#step;
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
    resumeDeps?: ResumeDeps,
    dependencies?: DependencyReader,
  ) {
    const { job } = entry;
    this.#dependencies = dependencies;
    this.#entry = entry;
    this.#deps = resumeDeps;
    this.resume = entry.resumeState === undefined ? undefined : resumeValue(entry.resumeState);
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

  /** The job's {@link JobResume}, created on first use; an error when there is no backend. */
  #resume(): JobResume | SoniqError {
    const entry = this.#entry;
    if (entry.resume) return entry.resume;
    if (!this.#deps) {
      return new SoniqError("UNSUPPORTED", "checkpoints and steps need a worker's backend");
    }
    entry.resume = new JobResume(
      entry.job.id,
      entry.owner,
      entry.resumeState,
      entry.controller,
      this.#deps,
    );
    return entry.resume;
  }
}
