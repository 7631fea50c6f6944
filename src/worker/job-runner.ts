/**
 * Runs one claimed job: a job with no registered handler or with arguments its schema rejects goes
 * to the dead-letter queue; otherwise the async or sync executor runs it to an {@link Outcome},
 * the slot is freed, and the outcome recorder writes it. A sync job's run lasts until its thread
 * has returned, so the drain waits for it (WAIT_FOR_THREAD).
 */
import type { ClaimedJob } from "../backends/contract/index.js";
import { SoniqError } from "../errors.js";
import { type JobDefinition, validateArgs } from "../jobs/job-definition.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import type { InFlight, InFlightTable, Outcome } from "./in-flight.js";
import type { OutcomeRecorder } from "./outcome-recorder.js";
import { runAsyncHandler } from "./run-async-handler.js";
import { runSyncHandler, type ThreadRunner } from "./run-sync-handler.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** What a job turned into before its outcome is written. */
export type Dispatch =
  | {
      kind: "dead_letter";
      reason: "unknown_job" | "invalid_args";
      /** The text stored with the dead-letter row. */
      error: string;
      /** The validation error, for the log (invalid_args). */
      detail?: string;
    }
  | { kind: "run"; definition: Definition; args: unknown };

/** Options of {@link JobRunner}. */
export interface JobRunnerOptions {
  /** Registered job definitions, by name. */
  jobs: ReadonlyMap<string, Definition>;
  workerId: string;
  logger: Logger;
  /** Receives `job_started`. */
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
}

/** See the module comment. */
export class JobRunner {
  constructor(private readonly options: JobRunnerOptions) {}

  /** Decides what to do with a claimed job: run it, or dead-letter it (unknown job, bad args). */
  async dispatch(job: ClaimedJob): Promise<Dispatch> {
    const definition = this.options.jobs.get(job.name);
    if (!definition) {
      return {
        kind: "dead_letter",
        reason: "unknown_job",
        error: `no handler registered for job name ${job.name}`,
      };
    }
    try {
      let args: unknown = JSON.parse(job.args);
      if (definition.argsSchema) {
        const checked = await validateArgs(definition.argsSchema, args);
        if (!checked.ok) throw new SoniqError("INVALID_ARGS", checked.message);
        args = checked.value;
      }
      return { kind: "run", definition, args };
    } catch (err) {
      return {
        kind: "dead_letter",
        reason: "invalid_args",
        error: `invalid arguments: ${errorText(err)}`,
        detail: errorText(err, 500),
      };
    }
  }

  /** Runs the handler on its executor. Never rejects. */
  execute(entry: InFlight, definition: Definition, args: unknown, log: Logger): Promise<Outcome> {
    const { machine } = this.options;
    return definition.kind === "sync"
      ? runSyncHandler(entry, definition, args, log, this.options.threads, machine)
      : runAsyncHandler(
          entry,
          definition,
          args,
          log,
          this.options.workerId,
          this.options.shutdownSettleSeconds,
          machine,
        );
  }

  /** Runs one tracked job to its written outcome (see the module comment). */
  async run(entry: InFlight): Promise<void> {
    const { job } = entry;
    const { recorder, machine } = this.options;
    const log = this.options.logger.child({
      job_id: job.id,
      job_name: job.name,
      attempt: job.attempts + 1,
    });
    const dispatched = await this.dispatch(job);
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
    log.debug(this.options.logArgs ? { args } : {}, "job started");
    const started = machine.now();
    this.options.events.emit("job_started", {
      worker_id: this.options.workerId,
      job_id: job.id,
      job_name: job.name,
      queue: job.queue,
      attempt: job.attempts + 1,
      wait_ms: Math.max(0, started - job.scheduledAt.getTime()),
      trace_context: job.traceContext ?? null,
    });
    const outcome = await this.execute(entry, definition, args, log);
    this.options.table.freeSlot(entry);
    await recorder.recordOutcome(job, outcome, definition, log, machine.now() - started);
    // A sync job's entry lasts until its thread returns: the drain waits for it (WAIT_FOR_THREAD).
    if (entry.thread) await entry.thread;
  }

  /**
   * A bug of ours must not strand the row: records an unexpected error of {@link run} as a failed
   * attempt (fenced, so a no-op when the outcome was already written). Never rejects.
   */
  async recordUnexpected(job: ClaimedJob, err: unknown): Promise<void> {
    this.options.logger.error(
      { job_id: job.id, err: errorText(err, 1000) },
      "unexpected error while running a job; recording it as a failed attempt",
    );
    await this.options.recorder
      .recordOutcome(job, { kind: "error", error: err }, this.options.jobs.get(job.name))
      .catch(() => undefined);
  }
}
