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
  JobEvent,
  JobFilter,
  JobListItem,
  JobListParams,
  NewJobEvent,
  Page,
  QueueInfo,
  QueueSetParams,
  QueueStatusCount,
  WorkerBeatParams,
  WorkerDetail,
} from "../contract/admin-store.js";
import type { DeadLetterRow, JobRow, Owner } from "../contract/index.js";
import { decodeCursor, encodeCursor } from "../shared/cursor.js";
import type { MemoryControls, MemoryState, MemoryWorkerDeclared } from "./state.js";

/** The value at `path` in `args` JSON, as text the way PostgreSQL's `->>` gives it; undefined if absent. */
function argsAt(args: string, path: readonly string[]): string | undefined {
  let value: unknown = JSON.parse(args);
  for (const key of path) {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || value === null) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}

function within(date: Date | null, after?: Date, before?: Date): boolean {
  if (after === undefined && before === undefined) return true;
  if (date === null) return false;
  return (
    (after === undefined || date.getTime() >= after.getTime()) &&
    (before === undefined || date.getTime() < before.getTime())
  );
}

function matchesJob(row: JobRow, f: JobFilter): boolean {
  return (
    (f.status === undefined || f.status.includes(row.status)) &&
    (f.queue === undefined || f.queue.includes(row.queue)) &&
    (f.name === undefined || f.name.includes(row.name)) &&
    (f.ids === undefined || f.ids.includes(row.id)) &&
    (f.dedupKey === undefined || row.dedupKey === f.dedupKey) &&
    (f.errorContains === undefined || (row.lastError ?? "").includes(f.errorContains)) &&
    (f.args === undefined || argsAt(row.args, f.args.path) === f.args.value) &&
    within(row.createdAt, f.createdAfter, f.createdBefore) &&
    within(row.finishedAt, f.finishedAfter, f.finishedBefore)
  );
}

function matchesDead(row: DeadLetterRow, f: DeadLetterFilter): boolean {
  return (
    (f.reason === undefined || f.reason.includes(row.reason)) &&
    (f.queue === undefined || f.queue.includes(row.queue)) &&
    (f.name === undefined || f.name.includes(row.name)) &&
    (f.ids === undefined || f.ids.includes(row.id)) &&
    within(row.deadAt, f.deadAfter, f.deadBefore)
  );
}

/** Newest first by `time`, then id descending; one page after `cursor`. */
function page<T extends { id: string }>(
  rows: T[],
  time: (row: T) => number,
  cursorText: string | null | undefined,
  limit: number,
): Page<T> {
  const cursor = decodeCursor(cursorText);
  const sorted = rows.sort((a, b) => time(b) - time(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const after = cursor
    ? sorted.filter((r) => {
        const t = time(r);
        const ct = Number(cursor.time);
        return t < ct || (t === ct && r.id < cursor.id);
      })
    : sorted;
  const items = after.slice(0, limit);
  const last = after.length > limit ? items.at(-1) : undefined;
  return {
    items,
    nextCursor: last ? encodeCursor({ time: String(time(last)), id: last.id }) : null,
  };
}

/** See the module comment. */
export class MemoryAdminStore implements AdminStore {
  private readonly events: JobEvent[] = [];
  private readonly cancelListeners = new Set<(jobId: string) => void>();
  private seq = 0;
  private readonly controls: Map<string, MemoryControls>;
  private readonly queues: MemoryState["queues"];
  private readonly declared: Map<string, MemoryWorkerDeclared>;
  /** The tables, the clock (throws CLOSED once closed) and wake-ups. */
  private readonly t: {
    jobs: MemoryState["jobs"];
    dead: MemoryState["dead"];
    workers: MemoryState["workers"];
    now(): number;
    wake(queue: string): void;
  };

  constructor(private readonly state: MemoryState) {
    this.controls = state.controls;
    this.queues = state.queues;
    this.declared = state.declared;
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

  private listed(row: JobRow): JobListItem {
    const c = this.controls.get(row.id);
    return {
      ...row,
      cancelRequestedAt: c?.cancelRequestedAt ?? null,
      progress: c?.progress ?? null,
      progressMessage: c?.progressMessage ?? null,
      progressAt: c?.progressAt ?? null,
    };
  }

  async jobList(params: JobListParams): Promise<Page<JobListItem>> {
    this.t.now();
    const rows = [...this.t.jobs.values()].filter((r) => matchesJob(r, params.filter));
    const p = page(rows, (r) => r.createdAt.getTime(), params.cursor, params.limit);
    return { items: p.items.map((r) => this.listed({ ...r })), nextCursor: p.nextCursor };
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

  async jobDetail(params: { id: string }): Promise<JobListItem | null> {
    this.t.now();
    const row = this.t.jobs.get(params.id);
    return row ? this.listed({ ...row }) : null;
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

  private control(id: string): MemoryControls {
    let c = this.controls.get(id);
    if (!c) {
      c = {
        cancelRequestedAt: null,
        cancelClaimToken: null,
        progress: null,
        progressMessage: null,
        progressAt: null,
      };
      this.controls.set(id, c);
    }
    return c;
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

  private declaredOf(workerId: string): MemoryWorkerDeclared {
    let d = this.declared.get(workerId);
    if (!d) {
      d = {
        heartbeatTimeoutSeconds: null,
        shutdownState: "RUNNING",
        drainStartedAt: null,
        deadlineAt: null,
      };
      this.declared.set(workerId, d);
    }
    return d;
  }

  async workerDeclare(params: {
    workerId: string;
    heartbeatTimeoutSeconds: number;
  }): Promise<void> {
    this.t.now();
    if (this.t.workers.has(params.workerId)) {
      this.declaredOf(params.workerId).heartbeatTimeoutSeconds = params.heartbeatTimeoutSeconds;
    }
  }

  async workerBeat(params: WorkerBeatParams): Promise<{ cancelRequested: string[] }> {
    const now = this.t.now();
    const worker = this.t.workers.get(params.workerId);
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
      const row = this.t.jobs.get(p.id);
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
    for (const row of this.t.jobs.values()) {
      if (
        row.status === "processing" &&
        row.workerId === params.workerId &&
        this.cancelRequested(row.id, row.claimToken)
      ) {
        cancelRequested.push(row.id);
      }
    }
    return { cancelRequested };
  }

  async workerDetails(params: { defaultHeartbeatTimeoutSeconds: number }): Promise<WorkerDetail[]> {
    const now = this.t.now();
    return [...this.t.workers.values()]
      .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())
      .map((w) => {
        const d = this.declared.get(w.id);
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
          inFlight: [...this.t.jobs.values()]
            .filter((j) => j.status === "processing" && j.workerId === w.id)
            .map((j) => j.id),
        };
      });
  }
}
