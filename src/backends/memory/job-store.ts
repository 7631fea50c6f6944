/**
 * The memory backend's job store: `soniq_jobs` and `soniq_dead_letter_jobs` as maps, with the
 * same field semantics as the SQL backends (the shared contract suite proves it).
 */
import { randomUUID } from "node:crypto";
import { claimedJobOf } from "../claimed-job.js";
import {
  type ClaimedJob,
  crashLoopText,
  DEFAULT_CANCELLED_RETENTION_SECONDS,
  type DeadLetterRow,
  type EnqueueResult,
  type JobCancelParams,
  type JobClaimParams,
  type JobCompleteManyParams,
  type JobCompleteParams,
  type JobDeadLetterParams,
  type JobEnqueueParams,
  type JobIdParams,
  type JobMarkStartedParams,
  type JobNackManyParams,
  type JobNackParams,
  type JobOwnedByParams,
  type JobPruneFinishedParams,
  type JobRecoverStaleParams,
  type JobRetryParams,
  type JobRow,
  type JobSnoozeParams,
  type JobStore,
  type NewJob,
  type OwnedJob,
  type Owner,
  type QueueMetrics,
  type QueueStats,
  type RecoveryResult,
} from "../contract/index.js";
import { assertNoConnection } from "../shared/capability-guard.js";
import { replayDeadLetter } from "./dead-letter-replay.js";
import { countJobs, countJobsByQueue, pruneFinishedJobs } from "./job-counts.js";
import type { MemoryState } from "./state.js";

/** {@link JobStore} over {@link MemoryState}. */
export class MemoryJobStore implements JobStore {
  /** @param state The backend's shared state. */
  constructor(private readonly state: MemoryState) {}

  /** See {@link JobStore.jobEnqueue}. */
  async jobEnqueue({ jobs, connection }: JobEnqueueParams): Promise<EnqueueResult[]> {
    this.state.check();
    assertNoConnection("memory", connection);
    return this.insertJobs(jobs);
  }

  /**
   * The body of {@link jobEnqueue}, synchronous: the schedule store calls it inside its
   * compare-and-set, so nothing interleaves between the two (the memory "transaction").
   */
  insertJobs(jobs: readonly NewJob[]): EnqueueResult[] {
    const { state } = this;
    const out: EnqueueResult[] = [];
    const queues = new Set<string>();
    for (const job of jobs) {
      if (job.dedupKey !== null) {
        const holder = [...state.jobs.values()].find((row) => row.dedupKey === job.dedupKey);
        if (holder) {
          out.push({ id: holder.id, inserted: false });
          continue;
        }
      }
      const now = state.date();
      state.jobs.set(job.id, {
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
        scheduledAt: job.runAt ? new Date(job.runAt.getTime()) : state.date(job.delaySeconds),
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
        meta: job.meta ?? null,
        traceContext: job.traceContext ?? null,
      });
      queues.add(job.queue);
      out.push({ id: job.id, inserted: true });
    }
    for (const queue of queues) state.bus.wake(queue);
    return out;
  }

  /** See {@link JobStore.jobClaim}. */
  async jobClaim(request: JobClaimParams): Promise<ClaimedJob[]> {
    this.state.check();
    const now = this.state.clock();
    const room = this.state.queueRoom();
    const due = [...this.state.jobs.values()]
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
      .filter((row) => {
        const left = room.get(row.queue);
        if (left === undefined) return true;
        room.set(row.queue, left - 1);
        return left > 0;
      })
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
    this.state.check();
    const row = this.state.jobs.get(id);
    if (
      row?.status !== "processing" ||
      row.workerId !== owner.workerId ||
      row.claimToken !== owner.claimToken
    ) {
      return undefined;
    }
    return row;
  }

  /** See {@link JobStore.jobComplete}. */
  async jobComplete({
    id,
    owner,
    result,
    resultRetentionSeconds,
  }: JobCompleteParams): Promise<boolean> {
    const row = this.owned(id, owner);
    if (!row) return false;
    const now = this.state.date();
    Object.assign(row, {
      status: "done",
      attempts: row.attempts + 1,
      result,
      finishedAt: now,
      updatedAt: now,
      resultExpiresAt: this.state.date(resultRetentionSeconds),
    });
    return true;
  }

  /** See {@link JobStore.jobCompleteMany}: each item in turn. */
  async jobCompleteMany({
    items,
    resultRetentionSeconds,
  }: JobCompleteManyParams): Promise<boolean[]> {
    const out: boolean[] = [];
    for (const item of items) out.push(await this.jobComplete({ ...item, resultRetentionSeconds }));
    return out;
  }

  /** See {@link JobStore.jobRetry}. */
  async jobRetry({ id, owner, error, delaySeconds }: JobRetryParams): Promise<boolean> {
    const row = this.owned(id, owner);
    if (!row) return false;
    Object.assign(row, {
      status: "queued",
      attempts: row.attempts + 1,
      lastError: error,
      scheduledAt: this.state.date(delaySeconds),
      updatedAt: this.state.date(),
      workerId: null,
      claimToken: null,
    });
    if (delaySeconds <= 0) this.state.bus.wake(row.queue);
    return true;
  }

  /** See {@link JobStore.jobDeadLetter}. */
  async jobDeadLetter(params: JobDeadLetterParams): Promise<boolean> {
    const row = this.owned(params.id, params.owner);
    if (!row) return false;
    this.moveToDead(row, {
      attempts: row.attempts + (params.countAttempt ? 1 : 0),
      lastError: params.error,
      reason: params.reason,
    });
    return true;
  }

  /** Moves `row` to the dead-letter map with `changes` applied. */
  private moveToDead(
    row: JobRow,
    changes: Pick<DeadLetterRow, "lastError" | "reason"> & Partial<DeadLetterRow>,
  ): void {
    this.state.jobs.delete(row.id);
    const {
      status: _status,
      result: _result,
      resultExpiresAt: _expires,
      meta: _meta,
      startKnown: _known,
      unchargedRecoveries: _uncharged,
      ...rest
    } = row;
    const now = this.state.date();
    this.state.dead.set(row.id, { ...rest, ...changes, updatedAt: now, deadAt: now });
  }

  /** See {@link JobStore.jobSnooze}. */
  async jobSnooze({ id, owner, delaySeconds }: JobSnoozeParams): Promise<boolean> {
    const row = this.owned(id, owner);
    if (!row) return false;
    Object.assign(row, {
      status: "queued",
      scheduledAt: this.state.date(delaySeconds),
      updatedAt: this.state.date(),
      workerId: null,
      claimToken: null,
    });
    if (delaySeconds <= 0) this.state.bus.wake(row.queue);
    return true;
  }

  /** See {@link JobStore.jobMarkStarted}. */
  async jobMarkStarted({ id, owner }: JobMarkStartedParams): Promise<boolean> {
    this.state.check();
    const row = this.owned(id, owner);
    if (!row) return false;
    row.startKnown = true;
    return true;
  }

  /** See {@link JobStore.jobNack}. */
  async jobNack({ id, owner }: JobNackParams): Promise<boolean> {
    const row = this.owned(id, owner);
    if (!row) return false;
    const now = this.state.date();
    Object.assign(row, {
      status: "queued",
      workerId: null,
      claimToken: null,
      updatedAt: now,
      scheduledAt: now,
    });
    this.state.bus.wake(row.queue);
    return true;
  }

  /** Each item as {@link jobNack}. See {@link JobStore.jobNackMany}. */
  async jobNackMany({ items }: JobNackManyParams): Promise<boolean[]> {
    this.state.check();
    return Promise.all(items.map((item) => this.jobNack(item)));
  }

  /** See {@link JobStore.jobCancel}. */
  async jobCancel({ id, retentionSeconds }: JobCancelParams): Promise<boolean> {
    this.state.check();
    const row = this.state.jobs.get(id);
    if (row?.status !== "queued") return false;
    const now = this.state.date();
    Object.assign(row, {
      status: "cancelled",
      finishedAt: now,
      updatedAt: now,
      resultExpiresAt: this.state.date(retentionSeconds),
    });
    return true;
  }

  /** See {@link JobStore.jobGet}: a copy of the row. */
  async jobGet({ id }: JobIdParams): Promise<JobRow | null> {
    this.state.check();
    const row = this.state.jobs.get(id);
    return row ? { ...row } : null;
  }

  /** See {@link JobStore.jobStats}. */
  async jobStats(): Promise<QueueStats> {
    return countJobs(this.state);
  }

  /** See {@link JobStore.jobQueueMetrics}. */
  async jobQueueMetrics(): Promise<QueueMetrics[]> {
    return countJobsByQueue(this.state);
  }

  /** See {@link JobStore.jobPruneFinished}. */
  async jobPruneFinished({
    limit = Number.POSITIVE_INFINITY,
  }: JobPruneFinishedParams): Promise<number> {
    return pruneFinishedJobs(this.state, limit);
  }

  /** See {@link JobStore.jobRecoverStale}. */
  async jobRecoverStale({
    staleAfterSeconds,
    crashLoop,
    cancelledRetentionSeconds = DEFAULT_CANCELLED_RETENTION_SECONDS,
    liveWorkerId,
  }: JobRecoverStaleParams): Promise<RecoveryResult> {
    const { state } = this;
    state.check();
    const result: RecoveryResult = { requeued: [], deadLettered: [], cancelled: [] };
    for (const row of [...state.jobs.values()]) {
      if (row.status !== "processing" || state.isLive(row.workerId, staleAfterSeconds)) continue;
      // The caller's own incarnation is live whatever its heartbeat says.
      if (liveWorkerId !== undefined && row.workerId === liveWorkerId) continue;
      // Remote jobs in submission custody are recovered by phase (submissionRecover).
      if (state.inRemoteCustody(row.id)) continue;
      if (state.cancelRequested(row.id, row.claimToken)) {
        // An operator asked to cancel this claim: finalise it, never requeue it.
        result.cancelled.push(state.finaliseCancelled(row, cancelledRetentionSeconds));
        continue;
      }
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
        this.moveToDead(row, {
          interruptions,
          lastError: crashLoopText(crashLoop.message, interruptions),
          reason: crashLoop.reason,
        });
        result.deadLettered.push(job);
      } else {
        const stamp = state.date();
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
        state.bus.wake(row.queue);
      }
    }
    return result;
  }

  /** See {@link JobStore.jobOwnedBy}. */
  async jobOwnedBy({ workerId }: JobOwnedByParams): Promise<OwnedJob[]> {
    this.state.check();
    return [...this.state.jobs.values()]
      .filter((row) => row.status === "processing" && row.workerId === workerId)
      .map((row) => ({ id: row.id, workerId, claimToken: row.claimToken as string }));
  }

  /** See {@link JobStore.deadLetterGet}: a copy of the entry. */
  async deadLetterGet({ id }: JobIdParams): Promise<DeadLetterRow | null> {
    this.state.check();
    const row = this.state.dead.get(id);
    return row ? { ...row } : null;
  }

  /** See {@link JobStore.deadLetterReplay}. */
  async deadLetterReplay({ id }: JobIdParams): Promise<boolean> {
    return replayDeadLetter(this.state, id);
  }
}
