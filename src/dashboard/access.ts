/**
 * Who may change what: the dashboard's actions and the access a user is granted — read-only unless
 * granted (docs/dashboard.md, "Secure by default"), `"all"`, or a per-action map (Oban Web's
 * resolver shape).
 */

/** Every write the dashboard offers. Reading needs no grant beyond `auth`. */
export const DASHBOARD_ACTIONS = [
  "jobs.cancel",
  "jobs.retry",
  "jobs.delete",
  "jobs.resolveStep",
  "jobs.clearCheckpoint",
  "flows.cancel",
  "batches.cancel",
  "deadLetters.replay",
  "deadLetters.delete",
  "queues.pause",
  "queues.set",
  "schedules.pause",
  "schedules.run",
  "remote.resolve",
  "remote.pollNow",
] as const;

/**
 * One write the dashboard offers (`queues.pause` and `schedules.pause` cover pause and resume;
 * `schedules.run` is "run now"; `remote.resolve` resolves a frozen remote job; `remote.pollNow`
 * polls an awaiting or frozen one now; `jobs.resolveStep` answers a job frozen on an effect step;
 * `jobs.clearCheckpoint` clears a queued job's checkpoint and steps; `flows.cancel` and
 * `batches.cancel` cancel every unfinished job of a flow or batch, as `soniq.flows.cancel` and
 * `soniq.batches.cancel` do).
 */
export type DashboardAction = (typeof DASHBOARD_ACTIONS)[number];

/** What a user may change: nothing, everything, or the actions a map grants (missing = no). */
export type DashboardAccess = "read-only" | "all" | Partial<Record<DashboardAction, boolean>>;

/** The actions `access` grants, as a set (anything unrecognised grants nothing). */
export function grantedActions(access: DashboardAccess): Set<DashboardAction> {
  if (access === "all") return new Set(DASHBOARD_ACTIONS);
  if (access === "read-only" || typeof access !== "object" || access === null) return new Set();
  return new Set(DASHBOARD_ACTIONS.filter((action) => access[action] === true));
}
