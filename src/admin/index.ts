/**
 * The admin facade of an instance (docs/operations.md, "The admin API"): one object per entity, all
 * reading and writing through the backend's operations store. The CLI, the dashboard and metrics
 * stand on it.
 */
import { DeadLettersAdmin } from "./dead-letters-admin.js";
import { type AdminDeps, JobsAdmin } from "./jobs-admin.js";
import { QueuesAdmin } from "./queues-admin.js";
import { WorkersAdmin } from "./workers-admin.js";

/** The admin objects of one instance. */
export interface Admin {
  jobs: JobsAdmin;
  deadLetters: DeadLettersAdmin;
  queues: QueuesAdmin;
  workers: WorkersAdmin;
}

/**
 * Builds the admin objects over `deps`.
 * @param deps.heartbeatTimeoutSeconds - the caller's `heartbeatTimeout`, in seconds: judges only
 *   workers that declared none.
 * @param deps.declaredQueues - the queues the instance's job definitions name.
 */
export function createAdmin(
  deps: AdminDeps & { heartbeatTimeoutSeconds: number; declaredQueues?: () => Iterable<string> },
): Admin {
  return {
    jobs: new JobsAdmin(deps),
    deadLetters: new DeadLettersAdmin(deps),
    queues: new QueuesAdmin(deps),
    workers: new WorkersAdmin(deps),
  };
}
