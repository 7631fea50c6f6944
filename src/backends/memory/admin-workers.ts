/**
 * The worker side of the memory operations store (contract: admin-store.ts `workerDeclare`,
 * `workerBeat`, `workerDetails`): what each worker declared, its heartbeat with progress, and
 * the detailed list. `MemoryAdminStore` extends it.
 */
import type { WorkerBeatParams, WorkerDetail } from "../contract/index.js";
import type { MemoryControls, MemoryState, MemoryWorkerDeclared } from "./state.js";

/** See the module comment. */
export abstract class MemoryWorkerAdmin {
  constructor(protected readonly state: MemoryState) {}

  /** The clock (throws CLOSED once closed). */
  protected now(): number {
    this.state.check();
    return this.state.clock();
  }

  /** The controls row of job `id`, created empty when missing. */
  protected control(id: string): MemoryControls {
    let c = this.state.controls.get(id);
    if (!c) {
      c = {
        cancelRequestedAt: null,
        cancelClaimToken: null,
        progress: null,
        progressMessage: null,
        progressAt: null,
      };
      this.state.controls.set(id, c);
    }
    return c;
  }

  private declaredOf(workerId: string): MemoryWorkerDeclared {
    let d = this.state.declared.get(workerId);
    if (!d) {
      d = {
        heartbeatTimeoutSeconds: null,
        shutdownState: "RUNNING",
        drainStartedAt: null,
        deadlineAt: null,
      };
      this.state.declared.set(workerId, d);
    }
    return d;
  }

  async workerDeclare(params: {
    workerId: string;
    heartbeatTimeoutSeconds: number;
  }): Promise<void> {
    this.now();
    if (this.state.workers.has(params.workerId)) {
      this.declaredOf(params.workerId).heartbeatTimeoutSeconds = params.heartbeatTimeoutSeconds;
    }
  }

  async workerBeat(params: WorkerBeatParams): Promise<{ cancelRequested: string[] }> {
    const now = this.now();
    const worker = this.state.workers.get(params.workerId);
    if (worker) {
      Object.assign(worker, { lastHeartbeatAt: new Date(now), status: params.status });
      Object.assign(this.declaredOf(params.workerId), {
        shutdownState: params.shutdownState,
        drainStartedAt:
          params.drainElapsedSeconds === null
            ? null
            : new Date(now - params.drainElapsedSeconds * 1000),
        deadlineAt:
          params.deadlineInSeconds === null
            ? null
            : new Date(now + params.deadlineInSeconds * 1000),
      });
    }
    for (const p of params.progress) {
      const row = this.state.jobs.get(p.id);
      if (
        row?.status !== "processing" ||
        row.workerId !== params.workerId ||
        row.claimToken !== p.owner.claimToken
      ) {
        continue;
      }
      Object.assign(this.control(p.id), {
        progress: p.fraction,
        progressMessage: p.message,
        progressAt: new Date(now),
      });
    }
    const cancelRequested: string[] = [];
    for (const row of this.state.jobs.values()) {
      if (
        row.status === "processing" &&
        row.workerId === params.workerId &&
        this.state.cancelRequested(row.id, row.claimToken)
      ) {
        cancelRequested.push(row.id);
      }
    }
    return { cancelRequested };
  }

  async workerDetails(params: { defaultHeartbeatTimeoutSeconds: number }): Promise<WorkerDetail[]> {
    const now = this.now();
    return [...this.state.workers.values()]
      .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())
      .map((w) => {
        const d = this.state.declared.get(w.id);
        const timeout = d?.heartbeatTimeoutSeconds ?? params.defaultHeartbeatTimeoutSeconds;
        const age = (now - w.lastHeartbeatAt.getTime()) / 1000;
        return {
          ...w,
          queues: w.queues ? [...w.queues] : null,
          heartbeatTimeoutSeconds: d?.heartbeatTimeoutSeconds ?? null,
          shutdownState: w.status === "stopped" ? "STOPPED" : (d?.shutdownState ?? "RUNNING"),
          drainStartedAt: d?.drainStartedAt ?? null,
          deadlineAt: d?.deadlineAt ?? null,
          heartbeatAgeSeconds: Math.max(0, age),
          live: w.status !== "stopped" && age <= timeout,
          inFlight: [...this.state.jobs.values()]
            .filter((j) => j.status === "processing" && j.workerId === w.id)
            .map((j) => j.id),
        };
      });
  }
}
