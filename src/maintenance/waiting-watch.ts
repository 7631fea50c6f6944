/**
 * The waiting watch: a leader-only maintenance service that finds due queued jobs no live worker
 * can run (unknown name, a version newer than any live worker's, or no live worker for the queue;
 * admin/waiting-for-worker.ts) every `intervalMs`, and reports them (docs/operations.md, "Jobs
 * waiting for a worker that can run them"):
 *
 * - a `jobs_waiting_for_worker` event per check while any wait, and one with an empty list when
 *   none wait any more (the Prometheus exporter's `soniq_jobs_waiting_for_worker` gauges);
 * - a warning log line once per queue and name (again only after it stopped waiting, or when its
 *   reason changed), not at every check;
 * - for a queue with an `unclaimableAfter`: jobs of a (queue, name, version) that this leader has
 *   seen no live worker able to run for that many seconds, and that have been due for that many
 *   seconds, are moved to the dead-letter queue with reason `no_capable_worker` (a
 *   `job_dead_lettered` event each, one warning per move). A new leader starts its own clock, so
 *   a change of leader only ever delays a move.
 *
 * Options (see {@link WaitingWatchOptions}): `intervalMs` (milliseconds; maintenance passes
 * `heartbeatInterval`), `heartbeatTimeoutSeconds`, `workerId`, `events`, `clock`.
 */

import { findWaitingForWorker, groupKey, type WaitingReason } from "../admin/waiting-for-worker.js";
import type { AdminStore } from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { BaseServiceOptions } from "../lifecycle/service.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";

/** The dead-letter reason of a job moved for waiting too long with no capable worker. */
export const NO_CAPABLE_WORKER_REASON = "no_capable_worker";

/** Jobs moved to the dead-letter queue per statement. */
const MOVE_BATCH = 500;

/** Options of {@link WaitingWatch}. */
export interface WaitingWatchOptions extends Omit<BaseServiceOptions, "name"> {
  /** The reads and the move it needs. */
  backend: {
    admin: Pick<
      AdminStore,
      | "workerCapabilities"
      | "jobQueuedGroups"
      | "jobQueuedGroupCounts"
      | "queueList"
      | "jobDeadLetterQueued"
    >;
  };
  /** The checking worker (`worker_id` of its events). */
  workerId: string;
  /** Liveness of workers that declared no heartbeat timeout, in **seconds**. */
  heartbeatTimeoutSeconds: number;
  /** Milliseconds between checks. */
  intervalMs: number;
  /** Where its events go; without it, it only logs and dead-letters. */
  events?: EventBus<SoniqEventMap>;
  /** Milliseconds since the epoch. Default `Date.now`. */
  clock?: () => number;
}

/** See the module comment. */
export class WaitingWatch extends PeriodicService {
  /** Per queue and name reported in the log: the reason logged. */
  private readonly logged = new Map<string, WaitingReason>();
  /** Per (queue, name, version) group: when this leader first saw no live worker able to run it. */
  private readonly firstSeen = new Map<string, number>();
  /** Whether the last event reported waiting jobs. */
  private reported = false;

  constructor(private readonly options: WaitingWatchOptions) {
    super({
      ...options,
      name: "waiting-watch",
      immediately: true,
      tick: (signal) => this.check(signal),
    });
  }

  /** Forgets what it logged and saw, so that a new lead reports afresh. */
  protected override onStart(): void {
    this.logged.clear();
    this.firstSeen.clear();
    this.reported = false;
  }

  private async check(signal: AbortSignal): Promise<void> {
    const { backend, events } = this.options;
    const now = (this.options.clock ?? Date.now)();
    const scan = await findWaitingForWorker(backend.admin, this.options.heartbeatTimeoutSeconds);
    if (signal.aborted) return;
    // The dead-letter clock: per group, since this leader first saw it with no capable worker.
    const seen = new Set(scan.groups.map(groupKey));
    for (const key of this.firstSeen.keys()) if (!seen.has(key)) this.firstSeen.delete(key);
    for (const key of seen) if (!this.firstSeen.has(key)) this.firstSeen.set(key, now);

    const names = new Set<string>();
    for (const entry of scan.waiting) {
      const key = JSON.stringify([entry.queue, entry.name]);
      names.add(key);
      if (this.logged.get(key) === entry.reason) continue;
      this.logged.set(key, entry.reason);
      this.logger.warn(
        {
          queue: entry.queue,
          job_name: entry.name,
          reason: entry.reason,
          count: entry.count,
          versions: entry.versions,
          oldest_age_seconds: Math.round(entry.oldestAgeSeconds),
        },
        "jobs are waiting for a worker that can run them",
      );
    }
    for (const key of this.logged.keys()) if (!names.has(key)) this.logged.delete(key);

    if (events && (scan.waiting.length > 0 || this.reported)) {
      events.emit("jobs_waiting_for_worker", {
        worker_id: this.options.workerId,
        checked_at: new Date(now).toISOString(),
        waiting: scan.waiting.map((w) => ({
          queue: w.queue,
          job_name: w.name,
          count: w.count,
          oldest_age_ms: Math.round(w.oldestAgeSeconds * 1000),
          reason: w.reason,
        })),
      });
    }
    this.reported = scan.waiting.length > 0;
    if (scan.groups.length > 0) await this.deadLetterOverdue(scan.groups, now, signal);
  }

  /** Moves the jobs of groups past their queue's `unclaimableAfter` (see the module comment). */
  private async deadLetterOverdue(
    groups: ReadonlyArray<{ queue: string; name: string; version: number; reason: WaitingReason }>,
    now: number,
    signal: AbortSignal,
  ): Promise<void> {
    const { backend, events } = this.options;
    const queues = await backend.admin.queueList({});
    const after = new Map(
      queues.filter((q) => q.unclaimableAfter !== null).map((q) => [q.name, q.unclaimableAfter]),
    );
    for (const group of groups) {
      const seconds = after.get(group.queue);
      const since = this.firstSeen.get(groupKey(group));
      if (seconds == null || since === undefined || now - since < seconds * 1000) continue;
      for (;;) {
        if (signal.aborted) return;
        const moved = await backend.admin.jobDeadLetterQueued({
          ...{ queue: group.queue, name: group.name, version: group.version },
          dueForSeconds: seconds,
          reason: NO_CAPABLE_WORKER_REASON,
          error: `no live worker could run it for ${seconds}s (${group.reason}): moved by the queue's unclaimableAfter`,
          limit: MOVE_BATCH,
        });
        for (const id of moved) {
          events?.emit("job_dead_lettered", {
            job_id: id,
            job_name: group.name,
            queue: group.queue,
            reason: NO_CAPABLE_WORKER_REASON,
          });
        }
        if (moved.length > 0) {
          this.logger.warn(
            {
              queue: group.queue,
              job_name: group.name,
              version: group.version,
              reason: group.reason,
              moved: moved.length,
              unclaimable_after_seconds: seconds,
            },
            "jobs no live worker could run were moved to the dead-letter queue (no_capable_worker)",
          );
        }
        if (moved.length < MOVE_BATCH) break;
      }
    }
  }
}
