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
   * The state the job's last durable {@link JobContext.checkpoint} stored, as JSON parsed back:
   * set on an attempt that follows a drain-deadline NACK, a crash recovery, a retry or a snooze
   * of a job that checkpointed; undefined on a fresh start. It does not change during the
   * attempt (docs/checkpoints.md).
   */
  resume: unknown;
  /**
   * Stores `state` (plain JSON, at most `maxPayloadBytes` bytes) as the job's checkpoint, which
   * the next attempt reads as {@link JobContext.resume}. Resolves once the checkpoint (or a later
   * one) is durable. At most one write per job is in flight: calls made meanwhile are coalesced
   * into the next write, the latest state winning (docs/checkpoints.md, "Write policy"). The
   * write is fenced by this claim's owner and token.
   * @throws SoniqError (rejects) `INVALID_PAYLOAD` for a state that is not plain JSON or is too
   *   large (nothing written); `CLAIM_LOST` when this worker no longer holds the claim (then
   *   `ctx.signal` is aborted with the same error).
   */
  checkpoint(state: unknown): Promise<void>;
  /**
   * Runs `fn` once per job: its result (plain JSON, at most `maxPayloadBytes` bytes; all of a
   * job's step results together too) is stored, fenced, when it returns, and later attempts get
   * it back without running `fn`. A step that was running when its worker died or the drain
   * deadline passed runs again on the next attempt — unless `options.effect` is true: then its
   * outcome is unknown, `options.reconcile` (when given) decides, and otherwise the job is
   * frozen for an operator (docs/checkpoints.md). An effect step that throws is recorded as not
   * done (it runs again on the next attempt).
   * @param name - unique per job, 1 to 200 characters.
   * @throws SoniqError (rejects) `INVALID_ARGS` for a bad name or `fn`, or bad `options` (an
   *   unknown key, `effect` not a boolean, `reconcile` not a function or without `effect: true`:
   *   nothing run, nothing recorded); `DUPLICATE_STEP` for a
   *   name already used in this attempt; `INVALID_PAYLOAD` for a result that is not plain JSON or
   *   too large (an effect step then stays `running`: its outcome was not recorded);
   *   `CLAIM_LOST` as {@link JobContext.checkpoint}; `STEP_OUTCOME_UNKNOWN` when the job is
   *   frozen (let it propagate: whatever the handler then does, the job is recorded frozen).
   *   Whatever `fn` throws is passed on.
   */
  step<T>(name: string, fn: () => T | Promise<T>, options?: StepOptions<T>): Promise<T>;
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

/** Options of {@link JobContext.step}. */
export interface StepOptions<T> {
  /**
   * The step has a side effect that must not happen twice (a charge, an e-mail): it is marked
   * `running` durably before `fn` runs, and if an attempt ends while it runs, its outcome is
   * unknown and it is never run again without an answer. Default false: such a step just runs
   * again.
   */
  effect?: boolean;
  /**
   * Effect steps: asked on a later attempt when the step's outcome is unknown. Return
   * `{ done: result }` (it happened: recorded and returned), `{ rerun: true }` (it did not: `fn`
   * runs) or undefined (cannot tell: the job is frozen for an operator). A throw freezes too.
   */
  reconcile?: () => StepDecision<T> | Promise<StepDecision<T>>;
}

/** What a step's `reconcile` answers (see {@link StepOptions.reconcile}). */
export type StepDecision<T> = { done: T } | { rerun: true } | undefined;

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
