/**
 * The memory backend's worker store (`soniq_workers` as a map).
 */
import type {
  WorkerForgetParams,
  WorkerHeartbeatParams,
  WorkerListParams,
  WorkerListRow,
  WorkerMarkStoppedParams,
  WorkerRegisterParams,
  WorkerStore,
} from "../contract/index.js";
import type { MemoryState } from "./state.js";

/** {@link WorkerStore} over {@link MemoryState}. */
export class MemoryWorkerStore implements WorkerStore {
  /** @param state The backend's shared state. */
  constructor(private readonly state: MemoryState) {}

  /** See {@link WorkerStore.workerRegister}. */
  async workerRegister(worker: WorkerRegisterParams): Promise<void> {
    this.state.check();
    const now = this.state.date();
    this.state.workers.set(worker.id, {
      id: worker.id,
      hostname: worker.hostname,
      pid: worker.pid,
      concurrency: worker.concurrency,
      queues: worker.queues ? [...worker.queues] : null,
      status: "running",
      startedAt: now,
      lastHeartbeatAt: now,
      stoppedAt: null,
    });
  }

  /** See {@link WorkerStore.workerHeartbeat}. */
  async workerHeartbeat({ workerId, status }: WorkerHeartbeatParams): Promise<void> {
    this.state.check();
    const row = this.state.workers.get(workerId);
    if (row) Object.assign(row, { lastHeartbeatAt: this.state.date(), status });
  }

  /** See {@link WorkerStore.workerMarkStopped}. */
  async workerMarkStopped({ workerId }: WorkerMarkStoppedParams): Promise<void> {
    this.state.check();
    const row = this.state.workers.get(workerId);
    if (row) Object.assign(row, { status: "stopped", stoppedAt: this.state.date() });
  }

  /** See {@link WorkerStore.workerList}. */
  async workerList({ heartbeatTimeoutSeconds }: WorkerListParams): Promise<WorkerListRow[]> {
    this.state.check();
    const now = this.state.clock();
    return [...this.state.workers.values()]
      .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())
      .map((row) => ({
        ...row,
        // Judged by the worker's own declared heartbeat timeout when it declared one.
        live:
          row.status !== "stopped" &&
          now - row.lastHeartbeatAt.getTime() <=
            (this.state.declared.get(row.id)?.heartbeatTimeoutSeconds ?? heartbeatTimeoutSeconds) *
              1000,
      }));
  }

  /** See {@link WorkerStore.workerForget}. */
  async workerForget({
    notSeenForSeconds,
    limit = Number.POSITIVE_INFINITY,
  }: WorkerForgetParams): Promise<number> {
    this.state.check();
    const now = this.state.clock();
    let forgotten = 0;
    for (const [id, w] of this.state.workers) {
      if (forgotten >= limit) break;
      if (now - w.lastHeartbeatAt.getTime() > notSeenForSeconds * 1000) {
        this.state.workers.delete(id);
        forgotten += 1;
      }
    }
    return forgotten;
  }
}
