/**
 * The durable writes of a remote job's worker side (docs/remote-jobs.md), shared by the submitter
 * and the poll runner: each goes through the outcome recorder's retrying write, emits
 * `remote_phase` (and `remote_handoff` at a deadline), and logs only the safe fields of
 * docs/remote-jobs.md, "Logs and events" (`job_id`, `phase`, `task_id`, `handoff_action`, with the
 * worker's `worker_id`) — never arguments, URLs, tokens, bodies or provider error text.
 */
import type { Backend, ClaimedJob, Owner } from "../backends/contract/index.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { toJsonText } from "../jobs/payload.js";
import { retryDelaySeconds } from "../jobs/retry-policy.js";
import type { EventBus } from "../observability/event-bus.js";
import type {
  RemoteHandoffEvent,
  RemotePhaseEvent,
  RemotePollEvent,
  RemoteReconcileEvent,
  RemoteSubmitEvent,
  SoniqEventMap,
} from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import type { CircuitBreaker } from "../remote/circuit-breaker.js";
import type { Failed } from "../remote/results.js";
import type { OutcomeRecorder } from "./outcome-recorder.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** What the remote runners share. */
export interface RemoteDeps {
  backend: Backend;
  workerId: string;
  logger: Logger;
  events: EventBus<SoniqEventMap>;
  machine: ShutdownMachine;
  recorder: OutcomeRecorder;
  /** `shutdownSettle`, seconds. */
  settleSeconds: number;
  /** `resultRetention`, seconds. */
  retentionSeconds: number;
  /** `maxPayloadBytes`. */
  maxPayloadBytes: number;
  /** The circuit breaker of a job name, if it has one (per process). */
  breaker(name: string): CircuitBreaker | undefined;
}

/** A logger for one remote job: bound to `job_id` only (docs/remote-jobs.md, "Logs and events"). */
export function remoteLogger(deps: RemoteDeps, jobId: string): Logger {
  return deps.logger.child({ job_id: jobId });
}

/** Shared write helpers. */
export class RemoteOutcomes {
  constructor(private readonly deps: RemoteDeps) {}

  /** Emits `remote_phase`. */
  phase(job: ClaimedJob, phase: RemotePhaseEvent["phase"], taskId: string | null): void {
    this.deps.events.emit("remote_phase", {
      worker_id: this.deps.workerId,
      job_id: job.id,
      job_name: job.name,
      phase,
      task_id: taskId,
    });
  }

  /** Emits `remote_submit`: one submit call ended with `outcome` after `durationMs` milliseconds. */
  submitted(job: ClaimedJob, outcome: RemoteSubmitEvent["outcome"], durationMs: number): void {
    this.deps.events.emit("remote_submit", {
      worker_id: this.deps.workerId,
      job_id: job.id,
      job_name: job.name,
      outcome,
      duration_ms: durationMs,
    });
  }

  /**
   * Emits `remote_poll`: one poll of `taskId` ended with `outcome` after `durationMs`
   * milliseconds (null when it was not polled).
   */
  polled(
    job: ClaimedJob,
    taskId: string,
    outcome: RemotePollEvent["outcome"],
    durationMs: number | null,
  ): void {
    this.deps.events.emit("remote_poll", {
      worker_id: this.deps.workerId,
      job_id: job.id,
      job_name: job.name,
      task_id: taskId,
      outcome,
      duration_ms: durationMs,
    });
  }

  /** Emits `remote_reconcile`: one reconcile ended with `outcome` after `durationMs` milliseconds. */
  reconciled(job: ClaimedJob, outcome: RemoteReconcileEvent["outcome"], durationMs: number): void {
    this.deps.events.emit("remote_reconcile", {
      worker_id: this.deps.workerId,
      job_id: job.id,
      job_name: job.name,
      outcome,
      duration_ms: durationMs,
    });
  }

  /** Logs and emits a hand-off (deadline, draining). */
  handoff(
    job: ClaimedJob,
    phase: RemoteHandoffEvent["phase"],
    action: RemoteHandoffEvent["handoff_action"],
    reason: RemoteHandoffEvent["reason"],
    taskId: string | null,
    log: Logger,
  ): void {
    log.warn(
      { phase, task_id: taskId, handoff_action: action },
      `remote job ${action === "release" ? "released" : action === "freeze" ? "frozen" : "handed to polling"} (${reason})`,
    );
    this.deps.events.emit("remote_handoff", {
      worker_id: this.deps.workerId,
      job_id: job.id,
      job_name: job.name,
      phase,
      task_id: taskId,
      handoff_action: action,
      reason,
    });
  }

  /** Runs one durable call with the recorder's retries; undefined when it gave up (logged). */
  async attempt<T>(what: string, jobId: string, call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await this.deps.recorder.writeWithRetry(call, what, jobId);
    } catch {
      return undefined;
    }
  }

  /** Runs one durable write with the recorder's retries; undefined when it gave up (logged). */
  async write(
    what: string,
    jobId: string,
    write: () => Promise<boolean>,
  ): Promise<boolean | undefined> {
    try {
      return await this.deps.recorder.writeWithRetry(write, what, jobId);
    } catch {
      return undefined;
    }
  }

  /** Freezes a submission with no usable answer. */
  async freeze(job: ClaimedJob, owner: Owner, reason: string, log: Logger): Promise<boolean> {
    const ok = await this.write("freeze", job.id, () =>
      this.deps.backend.submissions.submissionFreeze({ jobId: job.id, owner, reason }),
    );
    if (ok) {
      this.phase(job, "frozen", null);
      log.warn(
        { phase: "frozen", handoff_action: "freeze" },
        `remote submission frozen (${reason}): it is never resubmitted on its own; reconcile or \`soniq remote resolve\``,
      );
    }
    return ok === true;
  }

  /** NACKs a job claimed but not submitting (attempts kept). */
  async release(job: ClaimedJob, owner: Owner): Promise<boolean> {
    const ok = await this.write("release", job.id, () =>
      this.deps.backend.jobNack({ id: job.id, owner }),
    );
    if (ok) this.deps.recorder.released.push(job.id);
    return ok === true;
  }

  /** The remote work finished: job done with `result` (JSON), phase finished. */
  async complete(
    job: ClaimedJob,
    owner: Owner,
    result: unknown,
    definition: Definition,
    log: Logger,
    taskId: string | null,
  ): Promise<void> {
    let text: string | null;
    try {
      text =
        result === undefined || result === null
          ? null
          : toJsonText(result, `result of ${job.name}`, this.deps.maxPayloadBytes);
    } catch (err) {
      const code = (err as { code?: string }).code ?? "INVALID_PAYLOAD";
      return this.fail(
        job,
        owner,
        { kind: "failed", error: `${code}: the remote result is not storable JSON`, retry: false },
        definition,
        log,
        taskId,
      );
    }
    const ok = await this.write("remote completion", job.id, () =>
      this.deps.backend.submissions.submissionComplete({
        jobId: job.id,
        owner,
        result: text,
        retentionSeconds: definition.resultRetention ?? this.deps.retentionSeconds,
      }),
    );
    if (ok) {
      this.phase(job, "finished", taskId);
      this.deps.events.emit("job_done", {
        worker_id: this.deps.workerId,
        job_id: job.id,
        job_name: job.name,
        queue: job.queue,
      });
      log.info({ phase: "finished", task_id: taskId }, "remote job done");
    } else if (ok === false) {
      log.warn({ task_id: taskId }, "remote completion was fenced out: the row is no longer ours");
    }
  }

  /**
   * A definite failure (the provider's error is kept as `last_error`): with `retry` and attempts
   * left, released with a new idempotency key and retried after the job's retry delay; otherwise
   * dead-lettered (`remote_failed`, or `max_attempts_exceeded`) and the phase finished.
   */
  async fail(
    job: ClaimedJob,
    owner: Owner,
    failure: Failed,
    definition: Definition,
    log: Logger,
    taskId: string | null,
    reason: "remote_failed" | "remote_timeout" = "remote_failed",
  ): Promise<void> {
    const { backend } = this.deps;
    const attempt = job.attempts + 1;
    if (failure.retry && attempt < job.maxAttempts) {
      const released = await this.write("release for retry", job.id, () =>
        backend.submissions.submissionRelease({
          jobId: job.id,
          owner,
          newKey: true,
          requeue: false,
        }),
      );
      if (!released) return;
      this.phase(job, "released", null);
      const delay = retryDelaySeconds(definition.retry, attempt, new Error(failure.error));
      const ok = await this.write("retry", job.id, () =>
        backend.jobRetry({ id: job.id, owner, error: failure.error, delaySeconds: delay.seconds }),
      );
      if (ok) {
        this.deps.events.emit("job_failed", {
          worker_id: this.deps.workerId,
          job_id: job.id,
          job_name: job.name,
          queue: job.queue,
        });
        log.warn(
          { phase: "released", task_id: taskId },
          `remote job failed definitively; retry in ${delay.seconds.toFixed(2)} s with a new idempotency key`,
        );
      }
      return;
    }
    const why = failure.retry ? "max_attempts_exceeded" : reason;
    const ok = await this.write("dead-letter move", job.id, () =>
      backend.jobDeadLetter({
        id: job.id,
        owner,
        error: failure.error,
        reason: why,
        countAttempt: true,
      }),
    );
    if (!ok) return;
    await this.write("finish", job.id, async () => {
      await backend.submissions.submissionFinish({ jobId: job.id });
      return true;
    });
    this.phase(job, "finished", taskId);
    this.deps.events.emit("job_dead_lettered", {
      job_id: job.id,
      job_name: job.name,
      queue: job.queue,
      reason: why,
    });
    log.warn(
      { phase: "finished", task_id: taskId },
      `remote job failed: moved to the dead-letter queue (${why})`,
    );
  }

  /**
   * After an unexpected error of ours: puts a row this worker holds back where recovery by phase
   * would (in custody: due again in 30 s; submitting: frozen; no phase: NACK'd). Never rejects.
   */
  async rescueUnexpected(job: ClaimedJob, owner: Owner): Promise<void> {
    const { submissions } = this.deps.backend;
    const log = remoteLogger(this.deps, job.id);
    log.error({}, "unexpected error around a remote job; returning it by its phase");
    try {
      if (
        await submissions.pollRelease({ jobId: job.id, owner, delaySeconds: 30, countPoll: false })
      )
        return;
      if (await this.freeze(job, owner, "worker_error", log)) return;
      await this.release(job, owner);
    } catch {
      // The row stays ours until this worker stops; recovery by phase then takes it.
    }
  }
}
