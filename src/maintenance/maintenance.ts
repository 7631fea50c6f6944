/**
 * Maintenance run from every worker's heartbeat clock, leader-elected by a lease so one process
 * does it at a time (and another takes over when the leader dies): crash recovery of rows whose
 * owner is not live, pruning finished rows past their retention, and forgetting worker rows not
 * seen for an hour. Recovery is idempotent and also runs at every worker start and on demand
 * (`soniq recover`), so it is reachable from more than one clock (DESIGN.md §3.3, seed 004).
 */
import type { Backend, RecoveryResult } from "../backends/backend.js";
import type { Logger } from "../observability/logger.js";
import type { GuardedMetrics } from "../observability/metrics.js";

/** The lease name maintenance is elected under. */
export const MAINTENANCE_LEASE = "maintenance";

/** Worker rows not heartbeating for this many seconds are deleted (one hour). */
export const FORGET_WORKERS_AFTER_SECONDS = 3600;

/** Prune and forget at most this often, in milliseconds. */
const HOUSEKEEPING_EVERY_MS = 60_000;

/** Settings maintenance needs (seconds). */
export interface MaintenanceSettings {
  heartbeatInterval: number;
  heartbeatTimeout: number;
  maxInterruptions: number;
}

/**
 * Runs one recovery pass and logs what it did.
 * @param staleMeansDead - treat owners whose heartbeat is older than `heartbeatTimeout` as dead.
 *   Only a caller that has itself been heartbeating without a break for `heartbeatTimeout` may
 *   say so: after a database outage every heartbeat is stale, live workers' too, and recovering
 *   theirs would run their jobs twice. Without it, only stopped or unknown owners are recovered.
 */
export async function recoverOnce(
  backend: Backend,
  settings: MaintenanceSettings,
  logger: Logger,
  metrics?: GuardedMetrics,
  staleMeansDead = true,
): Promise<RecoveryResult> {
  const result = await backend.recoverStale(
    staleMeansDead ? settings.heartbeatTimeout : null,
    settings.maxInterruptions,
  );
  for (const job of result.requeued) {
    logger.warn(
      {
        job_id: job.id,
        job_name: job.name,
        previous_owner: job.previousOwner,
        interruptions: job.interruptions,
      },
      "recovered a job whose worker is not live: requeued (attempt not spent)",
    );
    metrics?.emit("job_recovered", {
      job_id: job.id,
      job_name: job.name,
      previous_owner: job.previousOwner,
      interruptions: job.interruptions,
    });
  }
  for (const job of result.deadLettered) {
    logger.error(
      {
        job_id: job.id,
        job_name: job.name,
        previous_owner: job.previousOwner,
        interruptions: job.interruptions,
        reason: "crash_loop",
      },
      "a job keeps losing its worker: moved to the dead-letter queue (crash_loop)",
    );
    metrics?.emit("job_dead_lettered", {
      job_id: job.id,
      job_name: job.name,
      reason: "crash_loop",
    });
  }
  return result;
}

/** The leader-elected maintenance tick of one worker. */
export class Maintenance {
  private lastHousekeeping = 0;
  private leading = false;

  constructor(
    private readonly backend: Backend,
    private readonly holder: string,
    private readonly settings: MaintenanceSettings,
    private readonly logger: Logger,
    private readonly metrics: GuardedMetrics,
    private readonly clock: () => number = Date.now,
  ) {}

  /** True while this worker holds the maintenance lease (as of its last tick). */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Lease time-to-live in seconds: three heartbeats, so a live leader always renews in time. */
  get leaseSeconds(): number {
    return this.settings.heartbeatInterval * 3;
  }

  /**
   * One tick: renew or take the lease; as leader, recover, and now and then prune and forget.
   * @param healthyForSeconds - how long this worker's own heartbeats have succeeded without a
   *   break; stale owners are recovered only once it reaches `heartbeatTimeout`.
   */
  async tick(healthyForSeconds: number): Promise<void> {
    const leader = await this.backend.tryLead(MAINTENANCE_LEASE, this.holder, this.leaseSeconds);
    if (leader !== this.leading) {
      this.leading = leader;
      this.logger.info(
        { leader },
        leader ? "took the maintenance lease" : "lost the maintenance lease",
      );
    }
    if (!leader) return;
    await recoverOnce(
      this.backend,
      this.settings,
      this.logger,
      this.metrics,
      healthyForSeconds >= this.settings.heartbeatTimeout,
    );
    if (this.clock() - this.lastHousekeeping >= HOUSEKEEPING_EVERY_MS) {
      this.lastHousekeeping = this.clock();
      const pruned = await this.backend.pruneFinished();
      const forgotten = await this.backend.forgetWorkers(FORGET_WORKERS_AFTER_SECONDS);
      if (pruned + forgotten > 0) this.logger.debug({ pruned, forgotten }, "housekeeping");
    }
  }

  /** Gives the lease up (at worker stop) so another worker takes over without waiting for expiry. */
  async resign(): Promise<void> {
    if (this.leading) await this.backend.resign(MAINTENANCE_LEASE, this.holder);
    this.leading = false;
  }
}
