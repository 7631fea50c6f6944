/**
 * The memory implementation of the operations contract (contract: admin-store.ts), over the maps
 * of the memory backend (shared through {@link MemoryTables}). It also owns the operations state
 * the backend's claim and recovery read: queue configuration, per-job controls (cancel request
 * bound to a claim token, progress) and what each worker declared.
 */

import type {
  AdminStore,
  CancelRequestState,
  DeadLetterFilter,
  DeadLetterListParams,
  JobActionState,
  JobDetailRow,
  JobEvent,
  JobFilter,
  JobListItem,
  JobListParams,
  NewJobEvent,
  Page,
  QueueInfo,
  QueueSetParams,
  QueueStatusCount,
} from "../contract/admin-store.js";
import type { DeadLetterRow, JobRow, Owner } from "../contract/index.js";
import { matchesDead, matchesJob, page } from "./admin-filters.js";
import { MemoryWorkerAdmin } from "./admin-workers.js";
import type { MemoryControls, MemoryState } from "./state.js";

/** See the module comment. */
export class MemoryAdminStore extends MemoryWorkerAdmin implements AdminStore {
  private readonly events: JobEvent[] = [];
  private readonly cancelListeners = new Set<(jobId: string) => void>();
  private seq = 0;
  private readonly controls: Map<string, MemoryControls>;
  private readonly queues: MemoryState["queues"];
  /** The tables, the clock (throws CLOSED once closed) and wake-ups. */
  private readonly t: {
    jobs: MemoryState["jobs"];
    dead: MemoryState["dead"];
    workers: MemoryState["workers"];
    now(): number;
    wake(queue: string): void;
  };

  constructor(state: MemoryState) {
    super(state);
    this.controls = state.controls;
    this.queues = state.queues;
    this.t = {
      jobs: state.jobs,
      dead: state.dead,
      workers: state.workers,
      now: () => {
        state.check();
        return state.clock();
      },
      wake: (queue) => state.bus.wake(queue),
    };
  }

  private cancelRequested(id: string, claimToken: string | null): boolean {
    return this.state.cancelRequested(id, claimToken);
  }

  /** The row (a copy) with its controls. */
  private detailed(row: JobRow): JobDetailRow {
    const c = this.controls.get(row.id);
    return {
      ...row,
      cancelRequestedAt: c?.cancelRequestedAt ?? null,
      progress: c?.progress ?? null,
      progressMessage: c?.progressMessage ?? null,
      progressAt: c?.progressAt ?? null,
    };
  }

  /** As {@link detailed}, without the result: lists carry none (as the SQL backends). */
  private listed(row: JobRow): JobListItem {
    const { result: _r, ...item } = this.detailed(row);
    return item;
  }

  async jobList(params: JobListParams): Promise<Page<JobListItem>> {
    this.t.now();
    const rows = [...this.t.jobs.values()].filter((r) => matchesJob(r, params.filter));
    const p = page(rows, (r) => r.createdAt.getTime(), params.cursor, params.limit);
    return { items: p.items.map((r) => this.listed(r)), nextCursor: p.nextCursor };
  }

  async jobCount(params: { filter: JobFilter }): Promise<number> {
    this.t.now();
    return [...this.t.jobs.values()].filter((r) => matchesJob(r, params.filter)).length;
  }

  async jobCountByQueueStatus(): Promise<QueueStatusCount[]> {
    this.t.now();
    const counts = new Map<string, QueueStatusCount>();
    const add = (queue: string, status: QueueStatusCount["status"]) => {
      const key = `${queue}\u0000${status}`;
      const cell = counts.get(key) ?? { queue, status, count: 0 };
      cell.count += 1;
      counts.set(key, cell);
    };
    for (const row of this.t.jobs.values()) add(row.queue, row.status);
    for (const row of this.t.dead.values()) add(row.queue, "dead_letter");
    return [...counts.values()].sort((a, b) =>
      a.queue === b.queue ? (a.status < b.status ? -1 : 1) : a.queue < b.queue ? -1 : 1,
    );
  }

  async jobDetail(params: { id: string }): Promise<JobDetailRow | null> {
    this.t.now();
    const row = this.t.jobs.get(params.id);
    return row ? this.detailed(row) : null;
  }

  /** Appends without an `await` (recovery and the admin actions append in their own step). */
  append(events: readonly NewJobEvent[]): void {
    const at = new Date(this.t.now());
    for (const e of events) {
      this.seq += 1;
      this.events.push({
        seq: this.seq,
        at,
        jobId: e.jobId,
        kind: e.kind,
        attempt: e.attempt ?? null,
        workerId: e.workerId ?? null,
        detail: e.detail ?? null,
      });
    }
  }

  async jobEventsAppend(params: { events: readonly NewJobEvent[] }): Promise<void> {
    this.append(params.events);
  }

  async jobEventsList(params: { jobId: string }): Promise<JobEvent[]> {
    this.t.now();
    return this.events.filter((e) => e.jobId === params.jobId).map((e) => ({ ...e }));
  }

  async jobEventsPrune(params: { olderThanSeconds: number; limit: number }): Promise<number> {
    const cutoff = this.t.now() - params.olderThanSeconds * 1000;
    let pruned = 0;
    for (let i = 0; i < this.events.length && pruned < params.limit; ) {
      if ((this.events[i] as JobEvent).at.getTime() < cutoff) {
        this.events.splice(i, 1);
        pruned += 1;
      } else i += 1;
    }
    return pruned;
  }

  async jobCancelRequest(params: {
    id: string;
    retentionSeconds: number;
  }): Promise<CancelRequestState> {
    const now = this.t.now();
    const row = this.t.jobs.get(params.id);
    if (!row) return "not_found";
    if (row.status === "queued") {
      Object.assign(row, {
        status: "cancelled",
        finishedAt: new Date(now),
        updatedAt: new Date(now),
        resultExpiresAt: new Date(now + params.retentionSeconds * 1000),
      });
      this.append([{ jobId: row.id, kind: "cancelled" }]);
      return "cancelled";
    }
    if (row.status !== "processing") return "finished";
    if (this.cancelRequested(row.id, row.claimToken)) return "already_requested";
    Object.assign(this.control(row.id), {
      cancelRequestedAt: new Date(now),
      cancelClaimToken: row.claimToken,
    });
    this.append([
      {
        jobId: row.id,
        kind: "cancel_requested",
        attempt: row.attempts + 1,
        workerId: row.workerId,
      },
    ]);
    for (const listener of this.cancelListeners) queueMicrotask(() => listener(row.id));
    return "requested";
  }

  async jobCancelFinish(params: {
    id: string;
    owner: Owner;
    retentionSeconds: number;
  }): Promise<boolean> {
    const now = this.t.now();
    const row = this.t.jobs.get(params.id);
    if (
      row?.status !== "processing" ||
      row.workerId !== params.owner.workerId ||
      row.claimToken !== params.owner.claimToken
    ) {
      return false;
    }
    Object.assign(row, {
      status: "cancelled",
      finishedAt: new Date(now),
      updatedAt: new Date(now),
      resultExpiresAt: new Date(now + params.retentionSeconds * 1000),
    });
    this.append([
      {
        jobId: row.id,
        kind: "cancelled",
        attempt: row.attempts + 1,
        workerId: row.workerId,
        detail: "stopped by its worker",
      },
    ]);
    return true;
  }

  async jobRetryNow(params: { id: string }): Promise<JobActionState> {
    const now = new Date(this.t.now());
    const row = this.t.jobs.get(params.id);
    if (!row) return "not_found";
    if (row.status === "processing") return "processing";
    Object.assign(row, {
      status: "queued",
      scheduledAt: now,
      updatedAt: now,
      finishedAt: null,
      result: null,
      resultExpiresAt: null,
      workerId: null,
      claimToken: null,
    });
    this.controls.delete(row.id);
    this.append([{ jobId: row.id, kind: "run_now" }]);
    this.t.wake(row.queue);
    return "done";
  }

  async jobDelete(params: { id: string }): Promise<JobActionState> {
    this.t.now();
    const row = this.t.jobs.get(params.id);
    if (!row) return "not_found";
    if (row.status === "processing") return "processing";
    this.t.jobs.delete(row.id);
    this.controls.delete(row.id);
    this.append([{ jobId: row.id, kind: "deleted" }]);
    return "done";
  }

  subscribeCancel(listener: (jobId: string) => void): () => void {
    this.cancelListeners.add(listener);
    return () => {
      this.cancelListeners.delete(listener);
    };
  }

  async deadLetterList(params: DeadLetterListParams): Promise<Page<DeadLetterRow>> {
    this.t.now();
    const rows = [...this.t.dead.values()]
      .filter((r) => matchesDead(r, params.filter))
      .map((r) => ({ ...r }));
    return page(rows, (r) => r.deadAt.getTime(), params.cursor, params.limit);
  }

  async deadLetterCount(params: { filter: DeadLetterFilter }): Promise<number> {
    this.t.now();
    return [...this.t.dead.values()].filter((r) => matchesDead(r, params.filter)).length;
  }

  async deadLetterDelete(params: { ids: readonly string[] }): Promise<number> {
    this.t.now();
    let gone = 0;
    for (const id of new Set(params.ids)) {
      if (this.t.dead.delete(id)) {
        gone += 1;
        this.append([{ jobId: id, kind: "deleted", detail: "from the dead-letter queue" }]);
      }
    }
    return gone;
  }

  async deadLetterPrune(params: { olderThanSeconds: number; limit: number }): Promise<number> {
    const cutoff = this.t.now() - params.olderThanSeconds * 1000;
    let pruned = 0;
    for (const [id, row] of this.t.dead) {
      if (pruned >= params.limit) break;
      if (row.deadAt.getTime() < cutoff) {
        this.t.dead.delete(id);
        pruned += 1;
      }
    }
    return pruned;
  }

  async jobControlsPrune(params: { limit: number }): Promise<number> {
    const limit = params.limit;
    this.t.now();
    let pruned = 0;
    for (const id of this.controls.keys()) {
      if (pruned >= limit) break;
      if (!this.t.jobs.has(id)) {
        this.controls.delete(id);
        pruned += 1;
      }
    }
    return pruned;
  }

  async queueList(): Promise<QueueInfo[]> {
    const now = this.t.now();
    const names = new Set<string>(this.queues.keys());
    for (const row of this.t.jobs.values()) names.add(row.queue);
    return [...names].sort().map((name) => {
      const config = this.queues.get(name);
      let queued = 0;
      let processing = 0;
      let oldestDue = now;
      for (const row of this.t.jobs.values()) {
        if (row.queue !== name) continue;
        if (row.status === "processing") processing += 1;
        if (row.status === "queued") {
          queued += 1;
          if (row.scheduledAt.getTime() <= now)
            oldestDue = Math.min(oldestDue, row.scheduledAt.getTime());
        }
      }
      return {
        name,
        paused: config?.paused ?? false,
        maxRunning: config?.maxRunning ?? null,
        queued,
        processing,
        oldestDueAgeSeconds: (now - oldestDue) / 1000,
        updatedAt: config?.updatedAt ?? null,
      };
    });
  }

  async queueSet(params: QueueSetParams): Promise<QueueInfo> {
    const now = new Date(this.t.now());
    const before = this.queues.get(params.name);
    this.queues.set(params.name, {
      paused: params.paused ?? before?.paused ?? false,
      maxRunning:
        params.maxRunning !== undefined ? params.maxRunning : (before?.maxRunning ?? null),
      updatedAt: now,
    });
    this.t.wake(params.name);
    const info = (await this.queueList()).find((q) => q.name === params.name);
    if (!info) throw new Error(`queue ${params.name} vanished after it was set`);
    return info;
  }
}
