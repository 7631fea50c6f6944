/**
 * The `ctx` an async handler receives (the {@link JobContext} shape). One object per job on the
 * worker's hot path, so it is a class: its lazy parts are accessors on the prototype, shared by
 * every job, instead of accessor pairs and closures made for each object (an object literal with
 * getters is built by a slow runtime path, per job). Nothing is created until a handler asks:
 * `ctx.signal` creates the job's `AbortSignal` on first read (LazyAbortController), `ctx.logger`
 * the job's child logger, `ctx.progress` its bound reporting function (so
 * `const { progress } = ctx` works as with a plain property), `ctx.schedule` reads the job's
 * `meta`.
 */
import { type JobContext, type ScheduleContext, scheduleContextOf } from "../jobs/context.js";
import { checkProgress } from "../jobs/progress.js";
import type { JobLogger } from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import type { InFlight } from "./in-flight.js";

/** See the module comment. */
export class AsyncJobContext implements JobContext {
  jobId: string;
  name: string;
  attempt: number;
  maxAttempts: number;
  queue: string;
  workerId: string;
  createdAt: Date;
  scheduledAt: Date;
  readonly #entry: InFlight;
  readonly #log: JobLogger | Logger;
  #signal: AbortSignal | undefined;
  #progress: ((fraction: number, message?: string) => void) | undefined;
  #schedule: ScheduleContext | undefined | null = null;

  /**
   * @param entry - the claimed job; its `controller` backs `signal`, its `progress` fields
   *   receive `progress` reports (written by the next heartbeat).
   * @param log - the job's logger (a lazy child: created when `logger` is first read).
   */
  constructor(entry: InFlight, log: JobLogger | Logger, workerId: string) {
    const { job } = entry;
    this.#entry = entry;
    this.#log = log;
    this.jobId = job.id;
    this.name = job.name;
    this.attempt = job.attempts + 1;
    this.maxAttempts = job.maxAttempts;
    this.queue = job.queue;
    this.workerId = workerId;
    this.createdAt = job.createdAt;
    this.scheduledAt = job.scheduledAt;
  }

  /** The job's stop signal, created on first read; assignable like a plain property. */
  get signal(): AbortSignal {
    return this.#signal ?? this.#entry.controller.signal;
  }

  set signal(value: AbortSignal) {
    this.#signal = value;
  }

  /** The job's child logger (created on first read). */
  get logger(): Logger {
    const log = this.#log;
    return "logger" in log ? log.logger : log;
  }

  /** The schedule occurrence the job runs for, read from its `meta` on first use. */
  get schedule(): ScheduleContext | undefined {
    if (this.#schedule === null) this.#schedule = scheduleContextOf(this.#entry.job.meta);
    return this.#schedule;
  }

  /** Reports progress (see {@link JobContext.progress}); a bound function, made on first read. */
  get progress(): (fraction: number, message?: string) => void {
    this.#progress ??= (fraction, message) => {
      // Kept for the next heartbeat: no write per call.
      const entry = this.#entry;
      entry.progress = checkProgress(fraction, message);
      entry.progressDirty = true;
    };
    return this.#progress;
  }
}
