/**
 * Writes what became of each job (River's completer): plans the fenced write an outcome needs
 * (completion through the {@link CompletionBatcher}, snooze, NACK, retry or dead-letter move), runs
 * it with bounded retries, logs it and emits its event. Also the worker's other row writes (the
 * NACK of a claim that answered too late, its own stopped status) go through the same retrying
 * write. It remembers the jobs NACK'd at the deadline and whether an outcome could not be written
 * (exit code 3).
 */
import type { Backend, ClaimedJob } from "../backends/contract/index.js";
import { keyOfMeta } from "../backends/shared/concurrency-meta.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { toJsonText } from "../jobs/payload.js";
import { retryDelaySeconds } from "../jobs/retry-policy.js";
import type { EventBus } from "../observability/event-bus.js";
import type {
  JobDeadLetteredEvent,
  JobFencedOutEvent,
  SoniqEventMap,
} from "../observability/events.js";
import { type LogLines, lazyChildLogger } from "../observability/lazy-child-logger.js";
import type { Logger } from "../observability/logger.js";
import type { CompletionBatcher } from "./completion-batcher.js";
import { errorText } from "./error-text.js";
import type { Outcome } from "./in-flight.js";
import type { ShutdownMachine } from "./shutdown-machine.js";
import { firstTryBoundMs, retryWrite } from "./write-retry.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** The fenced write an outcome needs, and what it is called in logs. */
export interface WritePlan {
  /** The outcome written (a result that is not JSON turns success into an error). */
  outcome: Outcome;
  what: string;
  /** The write's name in the `job_fenced_out` event. */
  op: JobFencedOutEvent["op"];
  /** The write; `tryMs` bounds one try, in milliseconds (applied by the write when `bounded`). */
  write: (tryMs: number) => Promise<boolean>;
  /** True when `write` applies `tryMs` itself (the completion batcher: one timer per batch). */
  bounded?: boolean;
  /** A dead-letter move's reason (`op` `dead_letter`); `max_attempts_exceeded` when absent. */
  reason?: "max_attempts_exceeded" | "invalid_result";
}

/** Options of {@link OutcomeRecorder}. */
export interface OutcomeRecorderOptions {
  backend: Backend;
  completions: CompletionBatcher;
  workerId: string;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  /** Decides how long a failing write keeps trying (RUNNING: until it lands). */
  machine: ShutdownMachine;
  /** `maxPayloadBytes`: largest result, in bytes. */
  maxPayloadBytes: number;
  /** `resultRetention`, in seconds: how long a job this worker cancelled is kept. */
  retentionSeconds: number;
  /**
   * @internal Told of every outcome written (or fenced out), after the write and before its
   * event; for `soniq/testing`, which reports what a drain ran and surfaces handlers' errors.
   * Must not throw.
   */
  observe?: (recorded: RecordedOutcome) => void;
}

/** @internal One outcome as {@link OutcomeRecorderOptions.observe} is told of it. */
export interface RecordedOutcome {
  job: ClaimedJob;
  /** What the run came to; a dead-letter move at dispatch is an `error` with the move's text. */
  outcome: Outcome;
  /** The write it took. */
  op: JobFencedOutEvent["op"];
  /** False when the write was fenced out (the row was no longer this worker's). */
  changed: boolean;
}

/** See the module comment. */
export class OutcomeRecorder {
  /** Jobs NACK'd back to `queued` at the deadline, in order. */
  readonly released: string[] = [];
  private writeFailures = 0;

  constructor(private readonly options: OutcomeRecorderOptions) {}

  /** Outcomes (not bookkeeping) that could not be written: the worker exits with code 3. */
  get failures(): number {
    return this.writeFailures;
  }

  /** The fenced write an outcome needs. A result that is not JSON turns success into failure. */
  planWrite(
    job: ClaimedJob,
    outcome: Outcome,
    definition: Definition | undefined,
    log: LogLines,
  ): WritePlan {
    const { backend, completions, maxPayloadBytes } = this.options;
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    switch (outcome.kind) {
      case "success": {
        let text: string | null;
        try {
          text =
            outcome.value === undefined
              ? null
              : toJsonText(outcome.value, `result of ${job.name}`, maxPayloadBytes);
        } catch (err) {
          // Not JSON (a BigInt, a function, a cycle) or over maxPayloadBytes: the same result
          // comes back from every attempt, so no retry can store it.
          return this.planWrite(
            job,
            { kind: "error", error: err, invalidResult: true },
            definition,
            log,
          );
        }
        return {
          outcome,
          what: "completion",
          op: "complete",
          write: (tryMs) =>
            completions.complete(
              definition?.resultRetention === undefined
                ? { id: job.id, owner, result: text }
                : {
                    id: job.id,
                    owner,
                    result: text,
                    resultRetentionSeconds: definition.resultRetention,
                  },
              tryMs,
            ),
          bounded: true,
        };
      }
      case "snooze": {
        // `ctx.rateLimited` with scope "key" or "queue": the pause first (idempotent on a retry
        // of the write), then the snooze; a job without a key pauses itself only.
        const key = outcome.scope === "key" ? keyOfMeta(job.meta) : null;
        if (outcome.scope === "queue" && outcome.seconds > 0) {
          return {
            outcome,
            what: "rate-limited snooze",
            op: "snooze",
            write: async () => {
              await backend.jobPauseQueue({ queue: job.queue, delaySeconds: outcome.seconds });
              return backend.jobSnooze({ id: job.id, owner, delaySeconds: outcome.seconds });
            },
          };
        }
        if (key !== null && outcome.seconds > 0) {
          return {
            outcome,
            what: "rate-limited snooze",
            op: "snooze",
            write: async () => {
              await backend.jobPauseKey({ key, delaySeconds: outcome.seconds });
              return backend.jobSnooze({ id: job.id, owner, delaySeconds: outcome.seconds });
            },
          };
        }
        return {
          outcome,
          what: "snooze",
          op: "snooze",
          write: () => backend.jobSnooze({ id: job.id, owner, delaySeconds: outcome.seconds }),
        };
      }
      case "released":
        return {
          outcome,
          what: "NACK",
          op: "nack",
          write: () => backend.jobNack({ id: job.id, owner }),
        };
      case "cancelled":
        return {
          outcome,
          what: "cancel",
          op: "cancel",
          write: () =>
            backend.admin.jobCancelFinish({
              id: job.id,
              owner,
              retentionSeconds: definition?.resultRetention ?? this.options.retentionSeconds,
            }),
        };
      case "frozen":
        return {
          outcome,
          what: "freeze",
          op: "freeze",
          write: () =>
            backend.jobFreezeStep({
              id: job.id,
              owner,
              steps: outcome.steps,
              error: `frozen: the outcome of effect step "${outcome.step}" is unknown (an earlier attempt ended while it ran); resolve it with soniq.jobs.resolveStep or cancel the job`,
            }),
        };
      case "error":
      case "timeout": {
        const attempt = job.attempts + 1;
        const text = errorText(outcome.error);
        if (outcome.kind === "error" && outcome.invalidResult === true) {
          // Dead-lettered at once, `invalid_result`, the attempt counted (the handler ran).
          return {
            outcome,
            what: "dead-letter move",
            op: "dead_letter",
            reason: "invalid_result",
            write: () =>
              backend.jobDeadLetter({
                id: job.id,
                owner,
                error: text,
                reason: "invalid_result",
                countAttempt: true,
              }),
          };
        }
        if (attempt >= job.maxAttempts || !definition) {
          return {
            outcome,
            what: "dead-letter move",
            op: "dead_letter",
            write: () =>
              backend.jobDeadLetter({
                id: job.id,
                owner,
                error: text,
                reason: "max_attempts_exceeded",
                countAttempt: true,
              }),
          };
        }
        const delay = retryDelaySeconds(definition.retry, attempt, outcome.error);
        if (delay.problem) log.warn({ problem: delay.problem }, "retry policy problem");
        return {
          outcome,
          what: `retry in ${delay.seconds.toFixed(2)} s`,
          op: "retry",
          write: () =>
            backend.jobRetry({ id: job.id, owner, error: text, delaySeconds: delay.seconds }),
        };
      }
    }
  }

  /**
   * Writes an outcome (fenced), logs it and emits its event. A completion (the hot path) makes its
   * first try straight through the {@link CompletionBatcher}, with no retry frame around it; only
   * a failed try goes on to {@link writeWithRetry}'s retries, from where that try left off.
   * @param durationMs - the handler's run time, in milliseconds, for logs and events.
   * @returns Whether the row changed; undefined when it could not be written. Never rejects.
   */
  recordOutcome(
    job: ClaimedJob,
    outcome: Outcome,
    definition?: Definition,
    log: LogLines = lazyChildLogger(this.options.logger, { job_id: job.id }),
    durationMs?: number,
  ): Promise<boolean | undefined> {
    const plan = this.planWrite(job, outcome, definition, log);
    if (plan.op !== "complete") return this.writeAndReport(job, plan, log, durationMs);
    const { machine } = this.options;
    const at = machine.now();
    return plan.write(firstTryBoundMs(machine)).then(
      (changed) => this.report(job, plan, changed, log, durationMs),
      (error: unknown) => this.writeAndReport(job, plan, log, durationMs, { error, at }),
    );
  }

  /** Writes `plan` with retries (after `firstFailure`, when a first try failed), then reports it. */
  private async writeAndReport(
    job: ClaimedJob,
    plan: WritePlan,
    log: LogLines,
    durationMs: number | undefined,
    firstFailure?: { error: unknown; at: number },
  ): Promise<boolean | undefined> {
    let changed: boolean;
    try {
      changed = await this.writeWithRetry(
        plan.write,
        plan.what,
        job.id,
        false,
        plan.bounded,
        firstFailure,
      );
    } catch {
      return undefined;
    }
    return this.report(job, plan, changed, log, durationMs);
  }

  /** Logs a written outcome and emits its event; returns `changed`. */
  private report(
    job: ClaimedJob,
    plan: WritePlan,
    changed: boolean,
    log: LogLines,
    durationMs: number | undefined,
  ): boolean {
    const { events, workerId, logger } = this.options;
    const resolved = plan.outcome;
    this.options.observe?.({ job, outcome: resolved, op: plan.op, changed });
    if (changed && resolved.kind === "success") {
      // Per-job hot path: payloads and log fields are built only when someone reads them.
      if (events.hasListeners("job_done")) {
        events.emit("job_done", {
          worker_id: workerId,
          job_id: job.id,
          job_name: job.name,
          queue: job.queue,
          duration_ms: durationMs,
        });
      }
      if (logger.isLevelEnabled("info")) {
        log.info({ duration_ms: durationMs, outcome: resolved.kind }, "job done");
      }
      return true;
    }
    const fields = { duration_ms: durationMs, outcome: resolved.kind };
    if (changed) this.appendTimeline(job, plan);
    if (changed && resolved.kind === "cancelled") {
      events.emit("job_cancelled", { job_id: job.id, job_name: job.name, queue: job.queue });
    } else if (changed && resolved.kind === "frozen") {
      events.emit("job_frozen", {
        worker_id: workerId,
        job_id: job.id,
        job_name: job.name,
        queue: job.queue,
        duration_ms: durationMs,
        step: resolved.step,
      });
    } else if (changed && resolved.kind !== "released") {
      const base = { worker_id: workerId, job_id: job.id, job_name: job.name, queue: job.queue };
      if (resolved.kind === "snooze") {
        events.emit("job_snoozed", { ...base, duration_ms: durationMs });
        if (resolved.scope !== undefined) {
          const key = resolved.scope === "key" ? keyOfMeta(job.meta) : null;
          events.emit("scope_paused", {
            ...base,
            duration_ms: durationMs,
            scope: resolved.scope === "key" && key === null ? "job" : resolved.scope,
            key,
            paused_ms: Math.round(resolved.seconds * 1000),
          });
        }
      } else if (plan.op === "dead_letter") {
        events.emit("job_dead_lettered", {
          ...base,
          duration_ms: durationMs,
          reason: plan.reason ?? "max_attempts_exceeded",
        });
      } else events.emit("job_failed", { ...base, duration_ms: durationMs });
    }
    if (!changed) {
      this.fencedOut(job, plan.op);
      log.warn(
        fields,
        `${plan.what} was fenced out: the row is no longer ours (recovered or finished elsewhere); nothing written`,
      );
    } else if (resolved.kind === "released") {
      this.released.push(job.id);
      events.emit("shutdown_nack", {
        worker_id: workerId,
        job_id: job.id,
        job_name: job.name,
        queue: job.queue,
        reason: "shutdown_timeout",
      });
      log.warn(
        { ...fields, reason: "shutdown_timeout", event: "shutdown_nack" },
        "job NACK'd: back to queued, attempts unchanged",
      );
    } else if (resolved.kind === "snooze") {
      if (resolved.scope === undefined) log.info(fields, `job snoozed for ${resolved.seconds} s`);
      else {
        log.info(
          { ...fields, scope: resolved.scope },
          `job rate limited by a downstream: back to queued for ${resolved.seconds} s, scope ${resolved.scope} paused`,
        );
      }
    } else if (resolved.kind === "cancelled") {
      log.info(fields, "job cancelled by an operator: recorded cancelled");
    } else if (resolved.kind === "frozen") {
      log.error(
        { ...fields, step: resolved.step },
        "job frozen: an effect step's outcome is unknown; it is never run again without an operator's answer",
      );
    } else if (resolved.kind === "error" || resolved.kind === "timeout") {
      log.warn({ ...fields, err: errorText(resolved.error, 500) }, `job failed: ${plan.what}`);
    }
    return changed;
  }

  /**
   * Moves a job that cannot run here to the dead-letter queue (fenced). Never rejects.
   * @param move The error text, the reason and whether the run counts as an attempt.
   */
  async deadLetter(
    job: ClaimedJob,
    move: { error: string; reason: JobDeadLetteredEvent["reason"]; countAttempt: boolean },
  ): Promise<void> {
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    const changed = await this.writeWithRetry(
      () => this.options.backend.jobDeadLetter({ id: job.id, owner, ...move }),
      "dead-letter move",
      job.id,
    ).catch(() => undefined);
    if (changed !== undefined) {
      const outcome: Outcome = { kind: "error", error: new Error(`${move.reason}: ${move.error}`) };
      this.options.observe?.({ job, outcome, op: "dead_letter", changed });
    }
    if (changed === false) this.fencedOut(job, "dead_letter");
    else if (changed === true) {
      this.append(job, "dead_lettered", `${move.reason}: ${move.error}`);
      this.options.events.emit("job_dead_lettered", {
        worker_id: this.options.workerId,
        job_id: job.id,
        job_name: job.name,
        queue: job.queue,
        reason: move.reason,
      });
    }
  }

  /**
   * The timeline event of an unusual outcome (the happy path writes none; the cancel statement
   * writes its own). Best effort: appended after the outcome, never delaying or failing it.
   */
  private appendTimeline(job: ClaimedJob, plan: WritePlan): void {
    const o = plan.outcome;
    if (o.kind === "released") {
      this.append(job, "nack", "shutdown_timeout: back to queued, attempts kept");
    } else if (o.kind === "snooze") {
      const why = o.scope === undefined ? "" : `rate limited by a downstream (scope ${o.scope}): `;
      this.append(job, "snoozed", `${why}for ${o.seconds} s`);
    } else if (o.kind === "error" || o.kind === "timeout") {
      const kind = plan.op === "dead_letter" ? "dead_lettered" : "retried";
      const text = errorText(o.error, 2000);
      this.append(job, kind, kind === "retried" ? `${plan.what}: ${text}` : text);
    }
  }

  private append(
    job: ClaimedJob,
    kind: "nack" | "snoozed" | "retried" | "dead_lettered",
    detail: string,
  ): void {
    const { backend, logger, workerId } = this.options;
    backend.admin
      .jobEventsAppend({
        events: [{ jobId: job.id, kind, attempt: job.attempts + 1, workerId, detail }],
      })
      .catch((err: unknown) =>
        logger.debug({ job_id: job.id, err: errorText(err, 300) }, "timeline event not written"),
      );
  }

  /** Reports a write the owner fence refused (the row is no longer this claim's). */
  private fencedOut(job: ClaimedJob, op: JobFencedOutEvent["op"]): void {
    this.options.events.emit("job_fenced_out", {
      worker_id: this.options.workerId,
      job_id: job.id,
      job_name: job.name,
      queue: job.queue,
      op,
    });
  }

  /**
   * Writes a job's start mark (crash accounting: from now on a crash recovery of this claim
   * charges it an interruption), retried like an outcome. Only for jobs with a crash history.
   * @returns Whether the row is still ours (false: fenced out, or the write was given up).
   * Never rejects.
   */
  async markStarted(job: ClaimedJob): Promise<boolean> {
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    const ok = await this.writeWithRetry(
      () => this.options.backend.jobMarkStarted({ id: job.id, owner }),
      "start mark",
      job.id,
    ).catch(() => false);
    if (!ok) {
      this.options.logger.warn(
        { job_id: job.id },
        "start mark not written (the row is no longer ours, or the database did not answer): the job is not started",
      );
    }
    return ok;
  }

  /** Releases (NACKs) a job that will not run here: a claim whose answer arrived too late. */
  async releaseUnstarted(job: ClaimedJob): Promise<void> {
    const owner = { workerId: job.workerId, claimToken: job.claimToken };
    const ok = await this.writeWithRetry(
      () => this.options.backend.jobNack({ id: job.id, owner }),
      "release",
      job.id,
    ).catch(() => false);
    if (ok) {
      this.options.logger.info({ job_id: job.id }, "released a job whose claim answered too late");
    }
  }

  /**
   * Runs a write with {@link retryWrite} (bounded retries, see there) and counts a job outcome that
   * could not be recorded (exit code 3).
   * @param bookkeeping - not a job's outcome (the worker row): shorter grace, never counted.
   * @param bounded - `write` applies its `tryMs` argument itself.
   * @param firstFailure - a first try the caller made itself and how it failed (write-retry.ts).
   * @throws the last error of the write once it gave up.
   */
  async writeWithRetry<T>(
    write: (tryMs: number) => Promise<T>,
    what: string,
    jobId?: string,
    bookkeeping = false,
    bounded = false,
    firstFailure?: { error: unknown; at: number },
  ): Promise<T> {
    try {
      return await retryWrite(this.options, {
        write,
        what,
        jobId,
        bookkeeping,
        bounded,
        firstFailure,
      });
    } catch (err) {
      if (!bookkeeping) this.writeFailures += 1;
      throw err;
    }
  }
}
