/**
 * Jobs waiting for a worker that can run them (issue 25 item 3; docs/operations.md, "Jobs
 * waiting for a worker that can run them"). A worker claims only the job names it has
 * definitions for, each up to its definition's version, from the queues it serves; a queued job
 * that no live worker can claim waits, untouched. This module finds such jobs from what each live
 * worker recorded on its row (`job_versions`, `queues`) and the distinct (queue, name, version)
 * groups of the queued jobs, counting only the groups no live worker can run (index reads; never
 * finished jobs). The admin API, the CLI, the dashboard and the maintenance leader stand on it.
 *
 * A live worker of an earlier release recorded no job names: its capability is unknown, and it is
 * treated as able to run every job of its queues, so no job is reported because of it.
 */
import type {
  AdminStore,
  QueuedGroup,
  QueuedGroupCount,
  WorkerCapability,
} from "../backends/contract/index.js";

/**
 * Why no live worker can run a job: `no_worker_for_queue` (no live worker serves its queue),
 * `unknown_name` (live workers serve the queue, none has a definition of that name),
 * `version_too_new` (some know the name, all at a lower version than the job's).
 */
export type WaitingReason = "no_worker_for_queue" | "unknown_name" | "version_too_new";

/** Due queued jobs of one queue and name that no live worker can run. */
export interface WaitingForWorker {
  queue: string;
  /** The job name. */
  name: string;
  /** How many due queued jobs wait. */
  count: number;
  /** **Seconds** since the oldest of them became due (database clock). */
  oldestAgeSeconds: number;
  /** See {@link WaitingReason}. */
  reason: WaitingReason;
  /** The job versions that wait, ascending. */
  versions: number[];
}

/** What {@link findWaitingForWorker} read: the per-name report and the groups behind it. */
export interface WaitingScan {
  /** Per queue and name, by queue then name. */
  waiting: WaitingForWorker[];
  /** The (queue, name, version) groups no live worker can run, with their due counts. */
  groups: Array<QueuedGroupCount & { reason: WaitingReason }>;
}

/**
 * Why no worker of `workers` (the live ones) can run jobs of `group`, or null when one can (or
 * may: a worker of unknown capability serving the queue).
 */
export function waitingReason(
  group: QueuedGroup,
  workers: readonly WorkerCapability[],
): WaitingReason | null {
  const serving = workers.filter((w) => w.queues === null || w.queues.includes(group.queue));
  if (serving.length === 0) return "no_worker_for_queue";
  let knows = false;
  for (const worker of serving) {
    if (worker.jobVersions === null) return null;
    const version = Object.hasOwn(worker.jobVersions, group.name)
      ? worker.jobVersions[group.name]
      : undefined;
    if (version === undefined) continue;
    if (version >= group.version) return null;
    knows = true;
  }
  return knows ? "version_too_new" : "unknown_name";
}

/**
 * Reads the live workers' capabilities and the queued groups, and counts the due jobs of the
 * groups no live worker can run.
 * @param heartbeatTimeoutSeconds - judges only workers that declared no heartbeat timeout.
 */
export async function findWaitingForWorker(
  admin: Pick<AdminStore, "workerCapabilities" | "jobQueuedGroups" | "jobQueuedGroupCounts">,
  heartbeatTimeoutSeconds: number,
): Promise<WaitingScan> {
  const [workers, groups] = await Promise.all([
    admin.workerCapabilities({ defaultHeartbeatTimeoutSeconds: heartbeatTimeoutSeconds }),
    admin.jobQueuedGroups({}),
  ]);
  const reasons = new Map<string, WaitingReason>();
  const stuck: QueuedGroup[] = [];
  for (const group of groups) {
    const reason = waitingReason(group, workers);
    if (reason === null) continue;
    reasons.set(groupKey(group), reason);
    stuck.push(group);
  }
  const counted = await admin.jobQueuedGroupCounts({ groups: stuck });
  const scanGroups = counted.map((g) => ({
    ...g,
    reason: reasons.get(groupKey(g)) ?? "unknown_name",
  }));
  const byName = new Map<string, WaitingForWorker>();
  for (const g of scanGroups) {
    const key = JSON.stringify([g.queue, g.name]);
    const entry = byName.get(key);
    if (entry === undefined) {
      byName.set(key, {
        queue: g.queue,
        name: g.name,
        count: g.count,
        oldestAgeSeconds: g.oldestAgeSeconds,
        reason: g.reason,
        versions: [g.version],
      });
    } else {
      entry.count += g.count;
      entry.oldestAgeSeconds = Math.max(entry.oldestAgeSeconds, g.oldestAgeSeconds);
      entry.versions.push(g.version);
    }
  }
  const waiting = [...byName.values()].sort((a, b) =>
    a.queue === b.queue ? compare(a.name, b.name) : compare(a.queue, b.queue),
  );
  for (const entry of waiting) entry.versions.sort((a, b) => a - b);
  return { waiting, groups: scanGroups };
}

/** A map key of one (queue, name, version) group. */
export function groupKey(group: QueuedGroup): string {
  return JSON.stringify([group.queue, group.name, group.version]);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
