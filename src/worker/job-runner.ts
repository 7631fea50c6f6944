/**
 * Runs one claimed job: a job with no registered handler or with arguments its schema rejects goes
 * to the dead-letter queue; otherwise the async or sync executor runs it to an {@link Outcome},
 * the slot is freed, and the outcome recorder writes it. A sync job's run lasts until its thread
 * has returned, so the drain waits for it (WAIT_FOR_THREAD).
 *
 * The start gate ({@link JobRunner.begin}) stands before the job's first user code (its argument
 * schema, then its handler; a sync handler's after its thread permit): at and after
 * FORCE_TIMEOUT_PATH nothing new starts — the job is NACK'd unstarted — and a job with a crash
 * history runs alone in this worker (start-isolation.ts) and starts only once its start mark is
 * durable (crash accounting, docs/reliability.md). An argument check still running at
 * FORCE_TIMEOUT_PATH is abandoned and the row NACK'd.
 */
import type {
  ClaimedJob,
  JobResumeReadParams,
  JobResumeState,
} from "../backends/contract/index.js";
import type { DependencyReader } from "../jobs/context.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import {
  type JobLogger,
  type LogLines,
  lazyJobLogger,
} from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import { checksArguments, type Dispatch, dispatchJob, dispatchUnchecked } from "./dispatch.js";
import { errorText } from "./error-text.js";
import type { InFlight, InFlightTable, Outcome } from "./in-flight.js";
import { watchJobDeadlines } from "./job-deadline.js";
import type { ResumeDeps } from "./job-resume.js";
import { runInJobScope } from "./job-scope.js";
import type { OutcomeRecorder } from "./outcome-recorder.js";
import type { RemoteSubmitter } from "./remote-submit.js";
import { type LateResult, runAsyncHandler } from "./run-async-handler.js";
import { runSyncHandler, type ThreadRunner } from "./run-sync-handler.js";
import type { ShutdownMachine } from "./shutdown-machine.js";
import { StartIsolation } from "./start-isolation.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** Options of {@link JobRunner}. */
export interface JobRunnerOptions {
  /** Registered job definitions, by name. */
  jobs: ReadonlyMap<string, Definition>;
  workerId: string;
  logger: Logger;
  /** Receives `job_started` and `late_result_discarded`. */
  events: EventBus<SoniqEventMap>;
  /** Log a job's arguments when it starts. */
  logArgs: boolean;
  /** `shutdownSettle`, in seconds: how long an aborted async handler has to unwind. */
  shutdownSettleSeconds: number;
  /** The source of every job's deadlines. */
  machine: ShutdownMachine;
  table: InFlightTable;
  recorder: OutcomeRecorder;
  /** Host of sync handlers' threads. */
  threads: ThreadRunner;
  /** Runs the submit side of remote jobs (remote-submit.ts). */
  remote: RemoteSubmitter;
  /** Frees a remote job's row by its phase after an unexpected error of ours. */
  rescueRemote(entry: InFlight): Promise<void>;
  /**
   * Milliseconds a job may wait for its start (behind a job with a crash history) before it is
   * NACK'd unstarted instead (prefetch-buffer.ts `prefetchTtlMs`); undefined: no limit.
   */
  startTtlMs?: number;
  /** Reads a job's dependencies for `ctx.dependencies()` (workflows); absent: none. */
  dependencies?: DependencyReader;
  /** NACKs a job that was never started (release-unstarted.ts, reason `ttl`). Never rejects. */
  releaseStale?(job: ClaimedJob): Promise<unknown>;
  /**
   * Checkpoints and steps (job-resume.ts): their fenced write and the fenced read of a job's
   * state before its handler starts. Absent: `ctx.checkpoint` and `ctx.step` reject
   * `UNSUPPORTED` and nothing is read.
   */
  resume?: ResumeDeps & {
    read(params: JobResumeReadParams): Promise<JobResumeState | null>;
  };
}

/**
 * True when the claimed job has a checkpoint or steps to read (the write sets `"resume": true`
 * in its `meta`, which the claim returns: jobs that never checkpoint pay no read).
 */
export function hasResumeState(job: ClaimedJob): boolean {
  return job.meta?.includes('"resume"') === true;
}

/** True when a job has lost a worker before (charged or not): its start must be marked. */
export function hasCrashHistory(job: ClaimedJob): boolean {
  return job.interruptions + job.unchargedRecoveries > 0;
}

/** See the module comment. */
export class JobRunner {
  /** Jobs with a crash history run alone (start-isolation.ts). */
  private readonly isolation = new StartIsolation();

  constructor(private readonly options: JobRunnerOptions) {}

  /** Decides what to do with a claimed job: run it, or dead-letter it (dispatch.ts). */
  dispatch(job: ClaimedJob): Promise<Dispatch> {
    return dispatchJob(this.options.jobs, job);
  }

  /**
   * Runs the handler on its executor (the async executor's gate was passed by the caller; the
   * sync executor passes it after its permit). Never rejects.
   */
  execute(
    entry: InFlight,
    definition: Definition,
    args: unknown,
    log: JobLogger,
  ): Promise<Outcome> {
    const { machine, events, workerId } = this.options;
    const onLate = (late: LateResult) => {
      events.emit("late_result_discarded", {
        worker_id: workerId,
        job_id: entry.job.id,
        job_name: entry.job.name,
        ...late,
      });
    };
    return definition.kind === "sync"
      ? runSyncHandler(entry, definition, args, log, this.options.threads, machine, {
          begin: () => this.begin(entry, log, "handler"),
          onLate,
        })
      : runAsyncHandler(
          entry,
          definition,
          args,
          log,
          workerId,
          this.options.shutdownSettleSeconds,
          machine,
          onLate,
          this.options.resume,
          this.options.dependencies,
        );
  }

  /**
   * The start gate, before a job's first user code: false (do not start; NACK it) at and after
   * FORCE_TIMEOUT_PATH, or when the start mark of a job with a crash history could not be written
   * before it. Writes that mark once per claim; nothing for a job without a crash history. For a
   * job without a crash history and a free start (the common case) it answers at once, without a
   * promise; otherwise it returns a promise. Never rejects.
   * @param what - what is about to start, for the log ("argument check", "handler").
   */
  begin(entry: InFlight, log: LogLines, what: string): boolean | Promise<boolean> {
    if (this.options.machine.forcedAt !== undefined) return this.forcedFirst(log, what);
    if (!entry.startRelease && !hasCrashHistory(entry.job)) {
      const release = this.isolation.tryShared();
      if (release) {
        entry.startRelease = release;
        return true;
      }
    }
    return this.beginSlow(entry, log, what);
  }

  private forcedFirst(log: LogLines, what: string): false {
    log.warn(
      { reason: "shutdown_timeout" },
      `FORCE_TIMEOUT_PATH was reached before the job's ${what} started: released unstarted`,
    );
    return false;
  }

  /** {@link begin} when the start must wait (isolation) or be marked (crash history). */
  private async beginSlow(entry: InFlight, log: LogLines, what: string): Promise<boolean> {
    const { machine, recorder } = this.options;
    const suspect = hasCrashHistory(entry.job);
    if (!entry.startRelease) {
      if (suspect && this.isolation.running > 0) {
        log.info(
          { running: this.isolation.running },
          "a job with a crash history runs alone: waiting for this worker's running jobs to finish",
        );
      }
      const gaveUp = new AbortController();
      const unwatch = watchJobDeadlines(machine, 0, {
        onJobTimeout: () => undefined,
        onForce: () => gaveUp.abort(),
      });
      const waitFrom = machine.now();
      try {
        entry.startRelease = await this.isolation.acquire(suspect, gaveUp.signal);
      } catch {
        return this.forcedFirst(log, what);
      } finally {
        unwatch();
      }
      if (this.staleAfterWait(entry, log, machine.now() - waitFrom)) return false;
    }
    if (entry.startMarked || !suspect) return true;
    const marked = await this.untilForced(recorder.markStarted(entry.job));
    if (marked === undefined || machine.forcedAt !== undefined) return this.forcedFirst(log, what);
    if (!marked) return false;
    entry.startMarked = true;
    log.info(
      {
        interruptions: entry.job.interruptions,
        uncharged_recoveries: entry.job.unchargedRecoveries,
      },
      "a job with a crash history: its start is marked before it runs",
    );
    return true;
  }

  /**
   * True (do not start; the row is NACK'd as never started) when the wait for a start outlasted
   * the start TTL (prefetch-buffer.ts `prefetchTtlMs`): a worker frozen while its job waited behind
   * one with a crash history may have lost the row to recovery, and must not start it.
   */
  private staleAfterWait(entry: InFlight, log: LogLines, waitedMs: number): boolean {
    const ttl = this.options.startTtlMs;
    if (ttl === undefined || waitedMs <= ttl) return false;
    entry.staleStart = true;
    log.warn(
      { waited_ms: Math.round(waitedMs), start_ttl_ms: ttl },
      "waited longer than the start TTL to start: released unstarted (recovery may have taken the row meanwhile)",
    );
    return true;
  }

  /** `work`'s value, or undefined once the machine reaches FORCE_TIMEOUT_PATH first. */
  private untilForced<T>(work: Promise<T>): Promise<T | undefined> {
    return new Promise<T | undefined>((resolve, reject) => {
      const unwatch = watchJobDeadlines(this.options.machine, 0, {
        onJobTimeout: () => undefined,
        onForce: () => resolve(undefined),
      });
      work.then(
        (value) => {
          unwatch();
          resolve(value);
        },
        (err: unknown) => {
          unwatch();
          reject(err);
        },
      );
    });
  }

  /** NACKs a job that was not started (see {@link begin}), giving its slot back first. */
  private async releaseUnstarted(
    entry: InFlight,
    definition: Definition | undefined,
    log: LogLines,
  ): Promise<void> {
    this.options.table.freeSlot(entry);
    if (entry.staleStart && this.options.releaseStale) {
      await this.options.releaseStale(entry.job); // never started: not a deadline release
      return;
    }
    await this.options.recorder.recordOutcome(entry.job, { kind: "released" }, definition, log);
  }

  /** Runs one tracked job to its written outcome (see the module comment). */
  async run(entry: InFlight): Promise<void> {
    try {
      return await this.runGated(entry);
    } finally {
      entry.startRelease?.();
    }
  }

  private async runGated(entry: InFlight): Promise<void> {
    const { job } = entry;
    const { recorder, machine, workerId } = this.options;
    // Created on first use: nothing per job at the usual warn level (lazy-child-logger.ts).
    const log = lazyJobLogger(this.options.logger, job);
    const registered = this.options.jobs.get(job.name);
    let dispatched: Dispatch;
    if (checksArguments(registered, job)) {
      // The upgrade and the schema are the job's first user code: gate them, and abandon them at
      // FORCE_TIMEOUT_PATH.
      if (!(await this.begin(entry, log, "argument check"))) {
        return this.releaseUnstarted(entry, registered, log);
      }
      const checked = await this.untilForced(
        runInJobScope(workerId, job, () => this.dispatch(job)),
      );
      if (checked === undefined) {
        log.warn(
          { reason: "shutdown_timeout" },
          "the argument check was still running at FORCE_TIMEOUT_PATH: abandoned; the job is released unstarted",
        );
        return this.releaseUnstarted(entry, registered, log);
      }
      dispatched = checked;
    } else {
      dispatched = dispatchUnchecked(this.options.jobs, job);
    }
    if (dispatched.kind === "fail") {
      // The definition's upgrade threw (or the job is newer than it): a failed attempt, retried
      // with backoff — a deploy may fix it, so it is not dead-lettered at once.
      log.error(
        { reason: "upgrade_failed", err: errorText(dispatched.error, 500), version: job.version },
        "the job's arguments could not be upgraded to its definition's version; the attempt fails",
      );
      this.options.table.freeSlot(entry);
      await recorder.recordOutcome(
        job,
        { kind: "error", error: dispatched.error },
        dispatched.definition,
        log,
        0,
      );
      return;
    }
    if (dispatched.kind === "dead_letter") {
      if (dispatched.reason === "unknown_job") {
        log.error(
          { reason: "unknown_job" },
          "no handler is registered for this job name; moving it to the dead-letter queue",
        );
      } else {
        log.error(
          { reason: "invalid_args", err: dispatched.detail },
          "invalid arguments; moving the job to the dead-letter queue",
        );
      }
      await recorder.deadLetter(job, {
        error: dispatched.error,
        reason: dispatched.reason,
        countAttempt: false,
      });
      return;
    }
    const { definition, args } = dispatched;
    if (definition.kind === "remote") {
      // The submitter writes every phase itself (no new submission once draining, so
      // nothing starts at or after FORCE_TIMEOUT_PATH); a remote job's arguments are never logged.
      await this.options.remote.run(entry, definition, args);
      this.options.table.freeSlot(entry);
      return;
    }
    if (definition.kind !== "sync") {
      const gate = this.begin(entry, log, "handler");
      if (!(gate === true || (gate !== false && (await gate)))) {
        return this.releaseUnstarted(entry, definition, log);
      }
    }
    if (this.options.logger.isLevelEnabled("debug")) {
      log.debug(this.options.logArgs ? { args } : {}, "job started");
    }
    if (hasResumeState(job) && this.options.resume) {
      // The job checkpointed on an earlier claim: its state is read (fenced) before it starts.
      const state = await this.untilForced(
        this.options.resume.read({ id: job.id, owner: entry.owner }).catch((err: unknown) => {
          log.warn({ err: errorText(err, 300) }, "could not read the job's checkpoint");
          return undefined;
        }),
      );
      if (state === undefined || state === null) {
        // Unreadable, refused (not ours any more) or cut off by the drain: never started.
        if (state === undefined) {
          log.warn("the job's checkpoint could not be read before it started: released");
        }
        return this.releaseUnstarted(entry, definition, log);
      }
      entry.resumeState = state;
    }
    const started = machine.now();
    // Per-job hot path: build the payload only when someone listens (as the outcome events do).
    if (this.options.events.hasListeners("job_started")) {
      this.options.events.emit("job_started", {
        worker_id: this.options.workerId,
        job_id: job.id,
        job_name: job.name,
        queue: job.queue,
        attempt: job.attempts + 1,
        wait_ms: Math.max(0, started - job.scheduledAt.getTime()),
        trace_context: job.traceContext ?? null,
      });
    }
    const outcome = await this.execute(entry, definition, args, log);
    this.options.table.freeSlot(entry);
    await recorder.recordOutcome(job, outcome, definition, log, machine.now() - started);
    // The key's slot is free in the store only once the outcome is written: a claim woken by the
    // freed slot above may have seen it still held (without this, the key's next job waited for
    // the next poll, up to pollInterval, on SQLite).
    if (hasConcurrencyKey(job)) this.options.table.wakeClaims();
    // A sync job's entry lasts until its thread returns: the drain waits for it (WAIT_FOR_THREAD).
    if (entry.thread) await entry.thread;
  }

  /**
   * A bug of ours must not strand the row: records an unexpected error of {@link run} as a failed
   * attempt (fenced, so a no-op when the outcome was already written). Never rejects.
   */
  async recordUnexpected(job: ClaimedJob, err: unknown): Promise<void> {
    if (this.options.jobs.get(job.name)?.kind === "remote") {
      // Never requeued blindly: a remote job goes back by its phase (frozen, handed off, NACK'd).
      const entry = [...this.options.table.values()].find((e) => e.job.id === job.id);
      if (entry) await this.options.rescueRemote(entry);
      return;
    }
    this.options.logger.error(
      { job_id: job.id, err: errorText(err, 1000) },
      "unexpected error while running a job; recording it as a failed attempt",
    );
    await this.options.recorder
      .recordOutcome(job, { kind: "error", error: err }, this.options.jobs.get(job.name))
      .catch(() => undefined);
  }
}

/** Whether the claimed job holds a per-key concurrency slot (its `meta` names a concurrency key). */
function hasConcurrencyKey(job: ClaimedJob): boolean {
  return job.meta?.includes('"concurrency"') ?? false;
}
