/**
 * The rescuer: crash recovery as a service (docs/reliability.md, "Crash recovery, in brief"). Each
 * pass requeues every `processing` row whose owner is not a live worker incarnation and
 * dead-letters the ones caught in a crash loop (`maintenance/policy.ts`), through
 * `JobStore.jobRecoverStale` — fenced and idempotent, so passes from several processes at once
 * are safe.
 *
 * Recovery runs from three clocks: {@link Rescuer.runOnce} at every worker's start-up and from
 * `soniq recover`, and the leader's periodic pass while the {@link Rescuer} service runs (the
 * maintainer starts it when this process gains the maintenance lease).
 *
 * A stale heartbeat counts as death only when the caller vouches that the database was answering
 * all along: the periodic pass does once this worker's own heartbeats have succeeded without a
 * break for `heartbeatTimeoutSeconds` (`healthyForSeconds`); start-up recovery does not (only
 * stopped and unknown owners); `soniq recover` does. Whatever the pass, a worker's rescuer never
 * judges its own incarnation dead (`liveWorkerId`): its event loop may have been starved past
 * its heartbeat timeout while it still runs its jobs.
 *
 * No batch limit: a pass is one atomic write over the rows of owners that died, bounded by
 * their total concurrency. Each requeued row is a `job_recovered` event and each crash-loop row a
 * `job_dead_lettered` one (docs/events.md), both also logged.
 */
import type {
  AdminStore,
  Backend,
  NewJobEvent,
  RecoveredSubmission,
  RecoveryResult,
} from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { BaseServiceOptions } from "../lifecycle/service.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { CRASH_LOOP_REASON, crashLoopMessage, crashLoopRule } from "./policy.js";

/** Default milliseconds between two periodic passes of the {@link Rescuer}. */
export const RESCUER_INTERVAL_MS = 5_000;

/** Options of {@link Rescuer}. */
export interface RescuerOptions extends Omit<BaseServiceOptions, "name"> {
  /**
   * The recovery method of the backend; its submission store (remote jobs are recovered by their
   * phase first: `submitting` frozen, `accepted` handed off; docs/remote-jobs.md, "Dispositions");
   * and its operations store, to write each recovery to the jobs' timelines (contract:
   * admin-store.ts `jobEventsAppend`).
   */
  backend: Pick<Backend, "jobRecoverStale"> &
    Partial<Pick<Backend, "submissions">> & { admin?: Pick<AdminStore, "jobEventsAppend"> };
  /** Seconds a row finalised `cancelled` is kept (`resultRetention`). Default 7 days. */
  cancelledRetentionSeconds?: number;
  /** Seconds without a heartbeat after which a worker is not live (`heartbeatTimeout`). */
  heartbeatTimeoutSeconds: number;
  /** Crash recoveries a job may have before the next sends it to the DLQ (`maxInterruptions`). */
  maxInterruptions: number;
  /** Milliseconds between periodic passes. Default {@link RESCUER_INTERVAL_MS}. */
  intervalMs?: number;
  /**
   * Seconds this process's own heartbeats have succeeded without a break; the periodic pass
   * treats stale heartbeats as death only once it reaches `heartbeatTimeoutSeconds`.
   * Default: always enough (for a caller that vouches for the database).
   */
  healthyForSeconds?: () => number;
  /** Receives `job_recovered` and `job_dead_lettered`. */
  events?: EventBus<SoniqEventMap>;
  /**
   * The worker incarnation this rescuer runs in: never judged dead by its own passes, its rows
   * (jobs and remote submissions) never touched — a worker whose event loop was starved past its
   * heartbeat timeout is still running them. Omitted where there is no worker of its own
   * (`soniq recover`).
   */
  liveWorkerId?: string;
}

/** What one pass may treat as death. */
export interface RescuePass {
  /**
   * Treat owners whose heartbeat is older than `heartbeatTimeoutSeconds` as dead. Default true.
   * Only a caller that has itself been heartbeating without a break for that long may say so:
   * after a database outage every heartbeat is stale, live workers' too. A function is asked
   * again before each call of the pass (the periodic pass: a call stuck on a lock, with every
   * heartbeat behind it, is such an outage).
   */
  staleMeansDead?: boolean | (() => boolean);
}

/** See the module comment. */
export class Rescuer extends PeriodicService {
  private readonly options: RescuerOptions;

  constructor(options: RescuerOptions) {
    const healthy = options.healthyForSeconds ?? (() => Number.POSITIVE_INFINITY);
    super({
      ...options,
      name: "rescuer",
      intervalMs: options.intervalMs ?? RESCUER_INTERVAL_MS,
      immediately: true,
      // Asked again before each call of the pass: one stuck on a lock (every heartbeat stuck
      // behind the same lock) must not leave the next call vouching for a database that was not
      // answering meanwhile.
      tick: async () => {
        await this.runOnce({
          staleMeansDead: () => healthy() >= options.heartbeatTimeoutSeconds,
        });
      },
    });
    this.options = options;
  }

  /**
   * Runs one recovery pass now, whether or not the service runs, and logs and emits what it did.
   * @throws Whatever `JobStore.jobRecoverStale` throws (`SoniqError` `CLOSED`, connection errors).
   */
  async runOnce(pass: RescuePass = {}): Promise<RecoveryResult> {
    const { backend, heartbeatTimeoutSeconds, maxInterruptions, events } = this.options;
    const { cancelledRetentionSeconds, liveWorkerId } = this.options;
    const vouch = pass.staleMeansDead ?? true;
    const staleMeansDead = () => (typeof vouch === "function" ? vouch() : vouch);
    const self = liveWorkerId === undefined ? {} : { liveWorkerId };
    if (backend.submissions) {
      const remote = await backend.submissions.submissionRecover({
        heartbeatTimeoutSeconds: staleMeansDead() ? heartbeatTimeoutSeconds : null,
        ...self,
      });
      reportRemote(remote, this.logger, events);
    }
    const result = await backend.jobRecoverStale({
      ...(staleMeansDead() ? { staleAfterSeconds: heartbeatTimeoutSeconds } : {}),
      crashLoop: crashLoopRule(maxInterruptions),
      ...(cancelledRetentionSeconds === undefined ? {} : { cancelledRetentionSeconds }),
      ...self,
    });
    report(result, this.logger, events);
    await backend.admin
      ?.jobEventsAppend({ events: timeline(result, maxInterruptions) })
      .catch((err: unknown) =>
        this.logger.warn({ err: String(err) }, "recovery timeline events not written"),
      );
    return result;
  }
}

/** One timeline event per row a pass touched. */
function timeline(result: RecoveryResult, maxInterruptions: number): NewJobEvent[] {
  return [
    ...result.requeued.map((job) => ({
      jobId: job.id,
      kind: "recovered" as const,
      workerId: job.previousOwner,
      detail: job.charged
        ? `its worker is not live: requeued, interruption ${job.interruptions}/${maxInterruptions}, attempts kept`
        : "its worker is not live: requeued, no interruption charged (no durable start), attempts kept",
    })),
    ...result.deadLettered.map((job) => ({
      jobId: job.id,
      kind: "crash_loop" as const,
      workerId: job.previousOwner,
      detail: crashLoopMessage(job.interruptions),
    })),
    ...result.cancelled.map((job) => ({
      jobId: job.id,
      kind: "cancelled" as const,
      workerId: job.previousOwner,
      detail: "cancel requested and its worker is not live: finalised by recovery",
    })),
  ];
}

/** Logs and emits the remote jobs a pass recovered, by phase (fields: docs/remote-jobs.md). */
function reportRemote(
  recovered: RecoveredSubmission[],
  logger: Logger,
  events: EventBus<SoniqEventMap> | undefined,
) {
  for (const job of recovered) {
    logger.warn(
      { job_id: job.jobId, phase: job.phase, task_id: job.taskId, handoff_action: job.action },
      job.action === "freeze"
        ? "recovered a remote job whose worker died while submitting: frozen (never resubmitted on its own)"
        : "recovered a remote job whose worker died while polling: handed to polling, due now",
    );
    events?.emit("remote_handoff", {
      worker_id: null,
      job_id: job.jobId,
      job_name: job.name,
      phase: job.phase === "submitting" ? "submitting" : "accepted",
      task_id: job.taskId,
      handoff_action: job.action,
      reason: "crash",
    });
    if (job.action === "freeze") {
      events?.emit("remote_phase", {
        worker_id: null,
        job_id: job.jobId,
        job_name: job.name,
        phase: "frozen",
        task_id: null,
      });
    }
  }
}

/** Logs and emits one pass's requeued and dead-lettered rows. */
function report(
  result: RecoveryResult,
  logger: Logger,
  events: EventBus<SoniqEventMap> | undefined,
) {
  for (const job of result.requeued) {
    const fields = {
      job_id: job.id,
      job_name: job.name,
      queue: job.queue,
      previous_owner: job.previousOwner,
      interruptions: job.interruptions,
      charged: job.charged,
    };
    logger.warn(
      fields,
      job.charged
        ? "recovered a job whose worker is not live: requeued (attempt not spent; interruption charged: it had started)"
        : "recovered a job whose worker is not live: requeued (attempt not spent; no interruption charged: it was not known to have started)",
    );
    events?.emit("job_recovered", fields);
  }
  for (const job of result.cancelled) {
    logger.warn(
      { job_id: job.id, job_name: job.name, previous_owner: job.previousOwner },
      "a job with a cancel request lost its worker: recorded cancelled (not requeued)",
    );
  }
  for (const job of result.deadLettered) {
    logger.error(
      {
        job_id: job.id,
        job_name: job.name,
        previous_owner: job.previousOwner,
        interruptions: job.interruptions,
        reason: CRASH_LOOP_REASON,
        error: crashLoopMessage(job.interruptions),
      },
      `a job keeps losing its worker: moved to the dead-letter queue (${CRASH_LOOP_REASON})`,
    );
    events?.emit("job_dead_lettered", {
      job_id: job.id,
      job_name: job.name,
      queue: job.queue,
      reason: CRASH_LOOP_REASON,
    });
  }
}
