import { randomUUID } from "node:crypto";
import { SoniqError } from "../../errors.js";
import type {
  Backend,
  ClaimedJob,
  ClaimRequest,
  CompletionItem,
  DeadLetterRow,
  EnqueueResult,
  EnqueueWriteOptions,
  JobRow,
  NewJob,
  Owner,
  QueueStats,
  RecoveryResult,
  WorkerInfo,
  WorkerRow,
  WorkerStatus,
} from "../backend.js";
import { type CrashLoopRule, crashLoopText } from "../backend.js";
import { claimedJobOf } from "../claimed-job.js";

/** Options of {@link MemoryBackend}. */
export interface MemoryBackendOptions {
  /** The "database clock"; defaults to `Date.now`. Returns milliseconds since the epoch. */
  clock?: () => number;
}

/**
 * In-process backend for unit tests of user code. Same contract and field semantics as the
 * SQLite and PostgreSQL backends (the shared contract suite proves it); nothing is persisted.
 */
export class MemoryBackend implements Backend {
  readonly kind = "memory" as const;
  private readonly clock: () => number;
  private readonly jobs = new Map<string, JobRow>();
  private readonly dead = new Map<string, DeadLetterRow>();
  private readonly workers = new Map<string, WorkerRow>();
  private readonly listeners = new Set<(queue: string) => void>();
  private readonly leases = new Map<string, { holder: string; expiresAt: number }>();
  private closed = false;

  constructor(options: MemoryBackendOptions = {}) {
    this.clock = options.clock ?? Date.now;
  }

  private check(): void {
    if (this.closed) throw new SoniqError("CLOSED", "the memory backend is closed");
  }

  private date(offsetSeconds = 0): Date {
    return new Date(this.clock() + Math.round(offsetSeconds * 1000));
  }

  async setup(): Promise<void> {
    this.check();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
  }

  async now(): Promise<Date> {
    this.check();
    return this.date();
  }

  async enqueue(jobs: readonly NewJob[], options?: EnqueueWriteOptions): Promise<EnqueueResult[]> {
    this.check();
    if (options?.connection) {
      throw new SoniqError("UNSUPPORTED", "`connection` (transactional enqueue) needs PostgreSQL");
    }
    const out: EnqueueResult[] = [];
    const queues = new Set<string>();
    for (const job of jobs) {
      if (job.dedupKey !== null) {
        const holder = [...this.jobs.values()].find((row) => row.dedupKey === job.dedupKey);
        if (holder) {
          out.push({ id: holder.id, inserted: false });
          continue;
        }
      }
      const now = this.date();
      this.jobs.set(job.id, {
        id: job.id,
        name: job.name,
        queue: job.queue,
        args: job.args,
        status: "queued",
        priority: job.priority,
        attempts: 0,
        maxAttempts: job.maxAttempts,
        interruptions: 0,
        unchargedRecoveries: 0,
        startKnown: true,
        scheduledAt: job.runAt ? new Date(job.runAt.getTime()) : this.date(job.delaySeconds),
        createdAt: now,
        updatedAt: now,
        startedAt: null,
        finishedAt: null,
        workerId: null,
        claimToken: null,
        lastError: null,
        result: null,
        resultExpiresAt: null,
        dedupKey: job.dedupKey,
      });
      queues.add(job.queue);
      out.push({ id: job.id, inserted: true });
    }
    for (const queue of queues) this.wake(queue);
    return out;
  }

  private wake(queue: string): void {
    for (const listener of this.listeners) queueMicrotask(() => listener(queue));
  }

  async claim(request: ClaimRequest): Promise<ClaimedJob[]> {
    this.check();
    const now = this.clock();
    const due = [...this.jobs.values()]
      .filter(
        (row) =>
          row.status === "queued" &&
          row.scheduledAt.getTime() <= now &&
          (request.queues === null || request.queues.includes(row.queue)),
      )
      .sort(
        (a, b) =>
          a.priority - b.priority ||
          a.scheduledAt.getTime() - b.scheduledAt.getTime() ||
          a.createdAt.getTime() - b.createdAt.getTime() ||
          (a.id < b.id ? -1 : 1),
      )
      .slice(0, request.limit);
    return due.map((row) => {
      const stamp = new Date(now);
      Object.assign(row, {
        status: "processing",
        workerId: request.workerId,
        claimToken: randomUUID(),
        startedAt: stamp,
        updatedAt: stamp,
        startKnown: request.deferStart !== true,
      });
      return claimedJobOf(row);
    });
  }

  /** The row, when `owner` holds its claim (DESIGN.md §3.1). */
  private owned(id: string, owner: Owner): JobRow | undefined {
    const row = this.jobs.get(id);
    if (
      row?.status !== "processing" ||
      row.workerId !== owner.workerId ||
      row.claimToken !== owner.claimToken
    ) {
      return undefined;
    }
    return row;
  }

  async complete(
    id: string,
    owner: Owner,
    result: string | null,
    resultRetentionSeconds: number,
  ): Promise<boolean> {
    this.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    const now = this.date();
    Object.assign(row, {
      status: "done",
      attempts: row.attempts + 1,
      result,
      finishedAt: now,
      updatedAt: now,
      resultExpiresAt: this.date(resultRetentionSeconds),
    });
    return true;
  }

  async completeMany(
    items: readonly CompletionItem[],
    resultRetentionSeconds: number,
  ): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const item of items)
      out.push(await this.complete(item.id, item.owner, item.result, resultRetentionSeconds));
    return out;
  }

  async retry(id: string, owner: Owner, error: string, delaySeconds: number): Promise<boolean> {
    this.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    Object.assign(row, {
      status: "queued",
      attempts: row.attempts + 1,
      lastError: error,
      scheduledAt: this.date(delaySeconds),
      updatedAt: this.date(),
      workerId: null,
      claimToken: null,
    });
    this.wakeLater(row.queue, delaySeconds);
    return true;
  }

  private wakeLater(queue: string, delaySeconds: number): void {
    if (delaySeconds <= 0) this.wake(queue);
  }

  async deadLetter(
    id: string,
    owner: Owner,
    error: string,
    reason: string,
    countAttempt: boolean,
  ): Promise<boolean> {
    this.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    this.jobs.delete(id);
    const {
      status: _status,
      result: _result,
      resultExpiresAt: _expires,
      startKnown: _known,
      unchargedRecoveries: _uncharged,
      ...rest
    } = row;
    const now = this.date();
    this.dead.set(id, {
      ...rest,
      attempts: row.attempts + (countAttempt ? 1 : 0),
      lastError: error,
      updatedAt: now,
      reason,
      deadAt: now,
    });
    return true;
  }

  async snooze(id: string, owner: Owner, delaySeconds: number): Promise<boolean> {
    this.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    Object.assign(row, {
      status: "queued",
      scheduledAt: this.date(delaySeconds),
      updatedAt: this.date(),
      workerId: null,
      claimToken: null,
    });
    this.wakeLater(row.queue, delaySeconds);
    return true;
  }

  async markStarted(id: string, owner: Owner): Promise<boolean> {
    this.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    row.startKnown = true;
    return true;
  }

  async nack(id: string, owner: Owner): Promise<boolean> {
    this.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    const now = this.date();
    Object.assign(row, {
      status: "queued",
      workerId: null,
      claimToken: null,
      updatedAt: now,
      scheduledAt: now,
    });
    this.wake(row.queue);
    return true;
  }

  async replay(id: string): Promise<boolean> {
    this.check();
    const entry = this.dead.get(id);
    if (!entry) return false;
    if (entry.dedupKey !== null) {
      for (const row of this.jobs.values()) {
        if (row.dedupKey === entry.dedupKey) {
          throw new SoniqError(
            "DEDUP_CONFLICT",
            `job ${row.id} already holds dedup key ${JSON.stringify(entry.dedupKey)}`,
          );
        }
      }
    }
    this.dead.delete(id);
    const { reason: _reason, deadAt: _deadAt, ...rest } = entry;
    const now = this.date();
    this.jobs.set(id, {
      ...rest,
      status: "queued",
      attempts: 0,
      interruptions: 0,
      unchargedRecoveries: 0,
      startKnown: true,
      scheduledAt: now,
      updatedAt: now,
      startedAt: null,
      finishedAt: null,
      workerId: null,
      claimToken: null,
      result: null,
      resultExpiresAt: null,
    });
    this.wake(entry.queue);
    return true;
  }

  async cancel(id: string, retentionSeconds: number): Promise<boolean> {
    this.check();
    const row = this.jobs.get(id);
    if (row?.status !== "queued") return false;
    const now = this.date();
    Object.assign(row, {
      status: "cancelled",
      finishedAt: now,
      updatedAt: now,
      resultExpiresAt: this.date(retentionSeconds),
    });
    return true;
  }

  async getJob(id: string): Promise<JobRow | null> {
    this.check();
    const row = this.jobs.get(id);
    return row ? { ...row } : null;
  }

  async getDeadLetter(id: string): Promise<DeadLetterRow | null> {
    this.check();
    const row = this.dead.get(id);
    return row ? { ...row } : null;
  }

  async stats(): Promise<QueueStats> {
    this.check();
    const stats: QueueStats = {
      total: 0,
      queued: 0,
      processing: 0,
      done: 0,
      dead_letter: this.dead.size,
      cancelled: 0,
    };
    for (const row of this.jobs.values()) stats[row.status] += 1;
    stats.total = this.jobs.size + this.dead.size;
    return stats;
  }

  async registerWorker(worker: WorkerInfo): Promise<void> {
    this.check();
    const now = this.date();
    this.workers.set(worker.id, {
      ...worker,
      queues: worker.queues ? [...worker.queues] : null,
      status: "running",
      startedAt: now,
      lastHeartbeatAt: now,
      stoppedAt: null,
    });
  }

  async heartbeat(workerId: string, status: WorkerStatus): Promise<void> {
    this.check();
    const row = this.workers.get(workerId);
    if (row) Object.assign(row, { lastHeartbeatAt: this.date(), status });
  }

  async markWorkerStopped(workerId: string): Promise<void> {
    this.check();
    const row = this.workers.get(workerId);
    if (row) Object.assign(row, { status: "stopped", stoppedAt: this.date() });
  }

  async listWorkers(
    heartbeatTimeoutSeconds: number,
  ): Promise<Array<WorkerRow & { live: boolean }>> {
    this.check();
    const now = this.clock();
    return [...this.workers.values()]
      .sort((a, b) => b.startedAt.getTime() - a.startedAt.getTime())
      .map((row) => ({
        ...row,
        live:
          row.status !== "stopped" &&
          now - row.lastHeartbeatAt.getTime() <= heartbeatTimeoutSeconds * 1000,
      }));
  }

  async pruneFinished(limit = Number.POSITIVE_INFINITY): Promise<number> {
    this.check();
    const now = this.clock();
    let pruned = 0;
    for (const [id, row] of this.jobs) {
      if (pruned >= limit) break;
      if (
        (row.status === "done" || row.status === "cancelled") &&
        row.resultExpiresAt !== null &&
        row.resultExpiresAt.getTime() <= now
      ) {
        this.jobs.delete(id);
        pruned += 1;
      }
    }
    return pruned;
  }

  async recoverStale(
    heartbeatTimeoutSeconds: number | null,
    crashLoop: CrashLoopRule,
  ): Promise<RecoveryResult> {
    this.check();
    const now = this.clock();
    const live = (workerId: string | null) => {
      const w = workerId === null ? undefined : this.workers.get(workerId);
      return (
        w !== undefined &&
        w.status !== "stopped" &&
        (heartbeatTimeoutSeconds === null ||
          now - w.lastHeartbeatAt.getTime() <= heartbeatTimeoutSeconds * 1000)
      );
    };
    const result: RecoveryResult = { requeued: [], deadLettered: [] };
    for (const row of [...this.jobs.values()]) {
      if (row.status !== "processing" || live(row.workerId)) continue;
      // Charged only where the start is durably known (docs/reliability.md).
      const charged = row.startKnown;
      const interruptions = row.interruptions + (charged ? 1 : 0);
      const job = {
        id: row.id,
        name: row.name,
        queue: row.queue,
        previousOwner: row.workerId,
        interruptions,
        charged,
      };
      if (charged && interruptions > crashLoop.maxInterruptions) {
        this.jobs.delete(row.id);
        const {
          status: _s,
          result: _r,
          resultExpiresAt: _e,
          startKnown: _k,
          unchargedRecoveries: _u,
          ...rest
        } = row;
        const stamp = this.date();
        this.dead.set(row.id, {
          ...rest,
          interruptions,
          lastError: crashLoopText(crashLoop.message, interruptions),
          updatedAt: stamp,
          reason: crashLoop.reason,
          deadAt: stamp,
        });
        result.deadLettered.push(job);
      } else {
        const stamp = this.date();
        Object.assign(row, {
          status: "queued",
          workerId: null,
          claimToken: null,
          interruptions,
          unchargedRecoveries: row.unchargedRecoveries + (charged ? 0 : 1),
          scheduledAt: stamp,
          updatedAt: stamp,
        });
        result.requeued.push(job);
        this.wake(row.queue);
      }
    }
    return result;
  }

  async ownedBy(workerId: string): Promise<Array<Owner & { id: string }>> {
    this.check();
    return [...this.jobs.values()]
      .filter((row) => row.status === "processing" && row.workerId === workerId)
      .map((row) => ({ id: row.id, workerId, claimToken: row.claimToken as string }));
  }

  async forgetWorkers(
    notSeenForSeconds: number,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<number> {
    this.check();
    const now = this.clock();
    let forgotten = 0;
    for (const [id, w] of this.workers) {
      if (forgotten >= limit) break;
      if (now - w.lastHeartbeatAt.getTime() > notSeenForSeconds * 1000) {
        this.workers.delete(id);
        forgotten += 1;
      }
    }
    return forgotten;
  }

  async tryLead(name: string, holder: string, ttlSeconds: number): Promise<boolean> {
    this.check();
    const now = this.clock();
    const lease = this.leases.get(name);
    if (lease && lease.holder !== holder && lease.expiresAt >= now) return false;
    this.leases.set(name, { holder, expiresAt: now + ttlSeconds * 1000 });
    return true;
  }

  async resign(name: string, holder: string): Promise<void> {
    this.check();
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name);
  }

  subscribe(listener: (queue: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
