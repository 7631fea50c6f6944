/**
 * The submit side of a remote job (docs/remote-jobs.md, "The phases": each phase is written before
 * the side effect it announces), run on a claimed job in one of the worker's slots:
 *
 *   preflight → (draining? release) → circuit breaker → mark `submitting` (admission checked in
 *   the same transaction) → submit(args, ctx) → `accepted(taskId)`: task id + hand-off written in
 *   one owner-fenced transaction | `failed(…)`: kept as the job's error | anything else: frozen.
 *
 * Dispositions (src/remote/dispositions.ts): a job that has not written `submitting` when the
 * drain begins is released (NACK, attempts kept) — during DRAINING no new submission starts; a
 * submission without a usable answer by the deadline (+ settle window), its own `submitTimeout`,
 * a throw or an unusable result is frozen, never resubmitted on its own. A planned drain is never
 * reported to the circuit breaker as a provider failure.
 */
import type { ClaimedJob, Owner } from "../backends/contract/index.js";
import { idempotencyKey } from "../backends/contract/phases.js";
import { isSoniqError } from "../errors.js";
import { scheduleContextOf } from "../jobs/context.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { checkProgress } from "../jobs/progress.js";
import { dispositionOf } from "../remote/dispositions.js";
import type { RemoteJobContext, RemoteSpec, RemoteSubmitContext } from "../remote/remote-job.js";
import { checkSubmitResult } from "../remote/results.js";
import { errorText } from "./error-text.js";
import type { InFlight } from "./in-flight.js";
import { boundedCall } from "./remote-call.js";
import { type RemoteDeps, RemoteOutcomes, remoteLogger } from "./remote-outcomes.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** Builds the context of `submit`, `reconcile` and `preflight`. */
export function submitContext(
  entry: InFlight,
  deps: RemoteDeps,
  generation: number,
): RemoteSubmitContext {
  const { job, controller } = entry;
  return {
    get signal() {
      return controller.signal;
    },
    jobId: job.id,
    name: job.name,
    attempt: job.attempts + 1,
    maxAttempts: job.maxAttempts,
    queue: job.queue,
    workerId: deps.workerId,
    createdAt: job.createdAt,
    scheduledAt: job.scheduledAt,
    logger: remoteLogger(deps, job.id),
    schedule: scheduleContextOf(job.meta),
    idempotencyKey: idempotencyKey(job.id, generation),
    progress: (fraction, message) => {
      // As an async handler's: kept for the next heartbeat (ctx.progress, docs/operations.md).
      entry.progress = checkProgress(fraction, message);
      entry.progressDirty = true;
    },
    dependencies: async () =>
      (await deps.backend.flows.flowDependencies({ jobId: job.id })).map((d) => ({
        id: d.id,
        state: d.state,
        result: d.result === null ? null : JSON.parse(d.result),
      })),
  };
}

/** See the module comment. */
export class RemoteSubmitter {
  private readonly outcomes: RemoteOutcomes;

  constructor(private readonly deps: RemoteDeps) {
    this.outcomes = new RemoteOutcomes(deps);
  }

  /** Runs the submit side of one claimed remote job to a durable state. Never rejects. */
  async run(entry: InFlight, definition: Definition, args: unknown): Promise<void> {
    const { job, owner } = entry;
    const spec = definition.remote as RemoteSpec;
    const { backend, machine, settleSeconds } = this.deps;
    const log = remoteLogger(this.deps, job.id);

    if (spec.preflight) {
      const preflight = spec.preflight;
      const ctx: RemoteJobContext = submitContext(entry, this.deps, 1);
      const end = await boundedCall(
        () => preflight(args, ctx),
        entry.controller,
        spec.submitTimeout,
        settleSeconds,
        machine,
      );
      if (end.kind === "threw") {
        const ok = await this.outcomes.write("dead-letter move", job.id, () =>
          backend.jobDeadLetter({
            id: job.id,
            owner,
            error: `preflight failed: ${errorText(end.error, 1000)}`,
            reason: "preflight_failed",
            countAttempt: true,
          }),
        );
        if (ok) {
          this.deps.events.emit("job_dead_lettered", {
            worker_id: this.deps.workerId,
            job_id: job.id,
            job_name: job.name,
            queue: job.queue,
            reason: "preflight_failed",
          });
          log.warn(
            { phase: "claimed" },
            "remote job failed its preflight: dead-lettered (preflight_failed), nothing submitted",
          );
        }
        return;
      }
      if (end.kind !== "value") return this.releaseUnsubmitted(job, owner, "deadline", log);
    }
    // During DRAINING no new submission starts (docs/remote-jobs.md, "Dispositions").
    if (machine.state !== "RUNNING") return this.releaseUnsubmitted(job, owner, "draining", log);

    const breaker = this.deps.breaker(job.name);
    const allowed = breaker?.allow();
    if (allowed && !allowed.allowed) {
      await this.outcomes.write("snooze", job.id, () =>
        backend.jobSnooze({ id: job.id, owner, delaySeconds: allowed.retryInSeconds }),
      );
      log.info(
        { phase: "claimed" },
        `circuit open: submission delayed ${allowed.retryInSeconds} s (no attempt spent)`,
      );
      return;
    }

    const result = await this.outcomes.attempt("submitting phase", job.id, () =>
      backend.submissions.submissionMarkSubmitting({
        jobId: job.id,
        owner,
        name: job.name,
        queue: job.queue,
        ...(spec.admission ? { budget: spec.admission } : {}),
      }),
    );
    if (result === undefined) return;
    if (result.kind === "fenced") {
      log.warn(
        { phase: "claimed" },
        "the submitting phase was fenced out: the row is no longer ours",
      );
      return;
    }
    if (result.kind === "over_budget") {
      await this.outcomes.write("snooze", job.id, () =>
        backend.jobSnooze({ id: job.id, owner, delaySeconds: result.retryInSeconds }),
      );
      log.info(
        { phase: "claimed" },
        `admission budget (${result.reason}) full: submission delayed ${result.retryInSeconds} s (no attempt spent)`,
      );
      return;
    }
    if (result.kind === "illegal") {
      log.error(
        { phase: result.phase },
        "a claimed remote job is already past `submitting`; freezing it for an operator",
      );
      if (result.phase === "submitting")
        await this.outcomes.freeze(job, owner, "inconsistent", log);
      return;
    }
    this.outcomes.phase(job, "submitting", null);
    log.info({ phase: "submitting" }, "remote submission starts");

    const ctx = submitContext(entry, this.deps, result.generation);
    const started = performance.now();
    const end = await boundedCall(
      () => spec.submit(args, ctx),
      entry.controller,
      spec.submitTimeout,
      settleSeconds,
      machine,
    );
    const ms = performance.now() - started;
    if (end.kind === "deadline") {
      this.outcomes.submitted(job, "deadline", ms);
      if (await this.outcomes.freeze(job, owner, "deadline", log)) {
        this.outcomes.handoff(
          job,
          "submitting",
          dispositionOf("submitting", "deadline"),
          "deadline",
          null,
          log,
        );
      }
      return;
    }
    if (end.kind === "timeout" || end.kind === "threw") {
      this.outcomes.submitted(job, end.kind === "timeout" ? "timeout" : "error", ms);
      breaker?.recordFailure();
      await this.outcomes.freeze(
        job,
        owner,
        end.kind === "timeout" ? "submit_timeout" : "submit_error",
        log,
      );
      return;
    }
    let answer: ReturnType<typeof checkSubmitResult>;
    try {
      answer = checkSubmitResult(end.value);
    } catch (err) {
      this.outcomes.submitted(job, "error", ms);
      log.error(
        { phase: "submitting", code: isSoniqError(err) ? err.code : "INVALID_RESULT" },
        "submit returned an unusable result (e.g. accepted without a task id); freezing: the provider may have accepted it",
      );
      await this.outcomes.freeze(job, owner, "invalid_result", log);
      return;
    }
    this.outcomes.submitted(job, answer.kind, ms);
    if (answer.kind === "failed") {
      if (answer.retry) breaker?.recordFailure();
      else breaker?.recordSuccess();
      await this.outcomes.fail(job, owner, answer, definition, log, null);
      return;
    }
    breaker?.recordSuccess();
    const taskId = answer.taskId;
    const ok = await this.outcomes.write("accepted phase", job.id, () =>
      backend.submissions.submissionAccept({
        jobId: job.id,
        owner,
        taskId,
        pollDelaySeconds: spec.pollEvery,
      }),
    );
    if (ok) {
      this.outcomes.phase(job, "accepted", taskId);
      log.info(
        { phase: "accepted", task_id: taskId, handoff_action: "handoff" },
        "remote task accepted: handed to polling",
      );
    } else if (ok === false) {
      log.warn(
        { phase: "accepted", task_id: taskId },
        "the accepted phase was fenced out: the row is no longer ours (a callback or an operator finished it)",
      );
    }
  }

  private async releaseUnsubmitted(
    job: ClaimedJob,
    owner: Owner,
    reason: "deadline" | "draining",
    log: ReturnType<typeof remoteLogger>,
  ): Promise<void> {
    if (await this.outcomes.release(job, owner)) {
      this.outcomes.handoff(
        job,
        "claimed",
        dispositionOf("claimed", "deadline"),
        reason,
        null,
        log,
      );
      this.deps.events.emit("shutdown_nack", {
        worker_id: this.deps.workerId,
        job_id: job.id,
        job_name: job.name,
        queue: job.queue,
        reason: "shutdown_timeout",
      });
    }
  }
}
