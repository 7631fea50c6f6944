/**
 * `soniq.workersAdmin`: every worker incarnation with host, pid, queues, concurrency, heartbeat
 * age, its shutdown state (RUNNING, DRAINING, FORCE_TIMEOUT_PATH, WAIT_FOR_THREAD, STOPPED),
 * `drainStartedAt`, `deadlineAt` and the ids of the jobs it holds. Liveness is judged by the
 * heartbeat timeout each worker declared (stored in its row), so this agrees with the workers
 * and with `recover` whatever the caller's own settings; the caller's `heartbeatTimeout` only
 * applies to workers of older versions that declared none.
 */
import type { WorkerDetail } from "../backends/contract/index.js";
import type { AdminDeps } from "./jobs-admin.js";

/** See the module comment. */
export class WorkersAdmin {
  constructor(private readonly deps: AdminDeps & { readonly heartbeatTimeoutSeconds: number }) {}

  /** Worker incarnations, newest first (rows not seen for an hour are forgotten). */
  async list(): Promise<WorkerDetail[]> {
    return (await this.deps.backend()).admin.workerDetails({
      defaultHeartbeatTimeoutSeconds: this.deps.heartbeatTimeoutSeconds,
    });
  }
}
