import type { DependencyEnd } from "../backends/contract/index.js";
import type { Logger } from "../observability/logger.js";
import type { RateLimited, RateLimitedOptions } from "./rate-limited.js";

/** What a handler receives besides its arguments. */
export interface JobContext {
  /**
   * Aborted when the job must stop: its `job_timeout` fired (reason a `SoniqTimeoutError`-like
   * `Error` named `JobTimeoutError`), the worker's shutdown deadline passed (reason an `Error`
   * named `ShutdownTimeoutError`) or an operator cancelled it (reason a `JobCancelledError`). Pass it to `fetch`, streams and timers; cancellation in
   * JavaScript is cooperative.
   */
  signal: AbortSignal;
  /** The job's id. */
  jobId: string;
  /** The job's name. */
  name: string;
  /** This run's attempt number, 1-based (attempts already recorded + 1). */
  attempt: number;
  /** Runs allowed before the dead-letter queue. */
  maxAttempts: number;
  /** The queue it was claimed from. */
  queue: string;
  /** The worker incarnation running it. */
  workerId: string;
  /** When it was enqueued (database clock). */
  createdAt: Date;
  /** When it was due (database clock). */
  scheduledAt: Date;
  /** A logger bound to `job_id`, `job_name` and `attempt`. */
  logger: Logger;
  /** Set when a schedule enqueued the job (docs/schedules.md); undefined otherwise. */
  schedule: ScheduleContext | undefined;
  /**
   * Reports progress: `fraction` from 0 to 1 and an optional message (cut to 1000 bytes). Kept in
   * memory and written with the worker's next heartbeat (never one write per call); readable
   * through `soniq.jobs.get(id)` and `soniq jobs show`.
   * @throws SoniqError `INVALID_ARGS` for a fraction outside 0..1 or a message that is not text.
   */
  progress(fraction: number, message?: string): void;
  /**
   * Back-pressure from a downstream (docs/flow-control.md): `return ctx.rateLimited(5000, {
   * scope: "key" })` puts the job back in `queued`, due in `retryAfterMs` **milliseconds**,
   * without spending an attempt (a snooze, not a NACK or an interruption), and pauses the scope
   * on every worker for that long: `"job"` (default) this job only, `"key"` every job of its key
   * (a job without a key pauses itself only), `"queue"` every job of its queue. The handler must
   * return the value; calling it alone does nothing.
   * @throws SoniqError `INVALID_OPTION` for a delay outside 0..86,400,000 ms or a bad scope.
   */
  rateLimited(retryAfterMs: number, options?: RateLimitedOptions): RateLimited;
  /**
   * Workflows (docs/workflows.md): the jobs this job waited for (`after`, or its children in a
   * flow), ordered by id, each with how it ended and its result (the value its handler returned,
   * parsed; null when it returned nothing or did not end `done`). One read of the store per call;
   * an empty list for a job without dependencies. A dependency whose end was ignored
   * (`onDependencyFailure: "ignore"`) shows `state` `"dead"` or `"cancelled"`.
   */
  dependencies(): Promise<DependencyResult[]>;
}

/** One dependency as `ctx.dependencies()` returns it. */
export interface DependencyResult {
  /** The dependency's job id. */
  id: string;
  /** How it ended: `done`, `cancelled` or `dead` (dead-lettered); null while it has not. */
  state: DependencyEnd | null;
  /** Its result, parsed from JSON; null when none. */
  result: unknown;
}

/** Reads the dependencies of job `jobId` (the worker's store). */
export type DependencyReader = (jobId: string) => Promise<DependencyResult[]>;

/** What `ctx.schedule` tells a handler about the occurrence it runs for. */
export interface ScheduleContext {
  /** The schedule's id. */
  id: string;
  /** The occurrence instant (for a manual run: when it was asked). */
  occurrence: Date;
  /** Enqueued by catch-up after the schedule's grace had passed. */
  late: boolean;
  /** Asked for by `run now`, not by the schedule. */
  manual: boolean;
}

/**
 * The {@link ScheduleContext} stored in a job's `meta` JSON text, or undefined when there is none
 * (or it cannot be read: `meta` is Soniq's own, so that only happens with a hand-edited row).
 */
export function scheduleContextOf(meta: string | null): ScheduleContext | undefined {
  if (meta === null) return undefined;
  try {
    const parsed = JSON.parse(meta) as { schedule?: Record<string, unknown> } | null;
    const s = parsed?.schedule;
    if (!s || typeof s.id !== "string" || typeof s.occurrence !== "string") return undefined;
    return {
      id: s.id,
      occurrence: new Date(s.occurrence),
      late: s.late === true,
      manual: s.manual === true,
    };
  } catch {
    return undefined;
  }
}

/** The reason `ctx.signal` carries when the job's own timeout fired. */
export class JobTimeoutError extends Error {
  constructor(seconds: number) {
    super(`job_timeout of ${seconds} s exceeded`);
    this.name = "JobTimeoutError";
  }
}

/** The reason `ctx.signal` carries when the shutdown deadline passed (docs/shutdown.md). */
export class ShutdownTimeoutError extends Error {
  constructor() {
    super("shutdown_timeout reached: the worker is releasing this job");
    this.name = "ShutdownTimeoutError";
  }
}

/**
 * The reason `ctx.signal` carries when an operator cancelled the running job
 * (`soniq.jobs.cancel(id)`, `soniq jobs cancel`). Whatever the handler then returns or throws,
 * the job is recorded `cancelled` (attempt not counted).
 */
export class JobCancelledError extends Error {
  constructor() {
    super("the job was cancelled by an operator");
    this.name = "JobCancelledError";
  }
}
