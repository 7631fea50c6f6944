/**
 * The SQLite backend's {@link JobStore}: `soniq_jobs` (live jobs), `soniq_finished_jobs`,
 * `soniq_dedup_keys` and `soniq_dead_letter_jobs`, as marshalling
 * (contract shapes ↔ statement parameters and rows) and `BEGIN IMMEDIATE` transactions
 * (transactions.ts) around the named statements of sql.ts. Reached through `SqliteBackend`.
 */
import {
  type ClaimedJob,
  type DeadLetterRow,
  type EnqueueResult,
  FROZEN_UNTIL_MS,
  type JobCancelParams,
  type JobCheckpointParams,
  type JobClaimParams,
  type JobCompleteManyParams,
  type JobCompleteParams,
  type JobDeadLetterParams,
  type JobEnqueueParams,
  type JobFreezeStepParams,
  type JobIdParams,
  type JobMarkStartedParams,
  type JobNackManyParams,
  type JobNackParams,
  type JobOwnedByParams,
  type JobPauseKeyParams,
  type JobPauseQueueParams,
  type JobPruneFinishedParams,
  type JobRecoverStaleParams,
  type JobResumeReadParams,
  type JobResumeState,
  type JobRetryParams,
  type JobRow,
  type JobSnoozeParams,
  type JobStepsResolveParams,
  type JobStore,
  type OwnedJob,
  type QueueMetrics,
  type QueueStats,
  type RecoveryResult,
} from "../contract/index.js";
import { assertNoConnection } from "../shared/capability-guard.js";
import type { LocalHandOffDesk } from "../shared/hand-off-desk.js";
import { RateWindowWake } from "../shared/rate-window-wake.js";
import { secondsToMs } from "./clock.js";
import type { SqliteConnection, SqliteSession } from "./connection.js";
import { type CountedRow, countOutcome, FinishedTally } from "./finished-counts.js";
import { countJobs, countJobsByQueue } from "./job-counts.js";
import { type DeadLetterRecord, type JobRecord, toDeadLetterRow, toJobRow } from "./rows.js";
import {
  CANCEL_QUEUED,
  claimDue,
  completeAll,
  fence,
  finishJob,
  insertHandedOff,
  insertJobs,
  moveToDeadLetter,
  nackAll,
  recoverStaleClaims,
  replayEntry,
} from "./transactions.js";

/** See the module comment. */
export class SqliteJobStore implements JobStore {
  /** Set once a claim of this store took a rate-limited job (then a short claim asks when the
   * next window opens). */
  private readonly seen = { rate: false };
  private readonly windowWake: RateWindowWake;

  /**
   * @param wake - wakes this process's claimers of a queue (enqueue, NACK, replay, recovery, and
   * retry or snooze with a delay of 0); other processes poll.
   * @param handOff - where this process's workers offer free slots (hand-off at enqueue).
   */
  constructor(
    private readonly conn: SqliteConnection,
    private readonly wake: (queue: string) => void,
    private readonly handOff?: LocalHandOffDesk,
  ) {
    this.windowWake = new RateWindowWake(wake);
  }

  /**
   * One immediate transaction (transactions.ts `insertJobs`). One job due now, with a worker of
   * this process idle on its queue, is handed off (transactions.ts `insertHandedOff`;
   * contract/hand-off.ts). See {@link JobStore.jobEnqueue}.
   */
  async jobEnqueue({ jobs, connection }: JobEnqueueParams): Promise<EnqueueResult[]> {
    assertNoConnection("sqlite", connection);
    const offer = this.handOff?.reserveFor(jobs);
    if (offer) {
      const { job, reservation } = offer;
      let out: ReturnType<typeof insertHandedOff>;
      try {
        out = await this.conn.use((s) => insertHandedOff(s, job, reservation.workerId));
      } catch (err) {
        // One synchronous transaction: a call that threw committed nothing.
        reservation.cancel();
        throw err;
      }
      if (out.claimed) {
        reservation.deliver(out.claimed);
      } else {
        reservation.cancel();
        if (out.result.inserted) this.wake(job.queue);
      }
      return [out.result];
    }
    const { results, queues } = await this.conn.use((s) => insertJobs(s, jobs));
    for (const queue of queues) this.wake(queue);
    return results;
  }

  /**
   * One immediate transaction (transactions.ts `claimDue`). Once this store has claimed a
   * rate-limited job, a claim that came back short also reads, in that transaction, when the next
   * rate-limit window opens, and this process's claimers are woken then
   * (shared/rate-window-wake.ts). See {@link JobStore.jobClaim}.
   */
  async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    const seen: { rate: boolean; nextMs?: number | null } = { rate: this.seen.rate };
    const claimed = await this.conn.use((s) => claimDue(s, params, seen), false, params.signal);
    this.seen.rate = seen.rate;
    if (typeof seen.nextMs === "number") this.windowWake.in(seen.nextMs);
    return claimed;
  }

  /**
   * The move to `soniq_finished_jobs` in one immediate transaction (transactions.ts
   * `completeAll`). See {@link JobStore.jobComplete}.
   */
  async jobComplete({
    id,
    owner,
    result,
    resultRetentionSeconds,
  }: JobCompleteParams): Promise<boolean> {
    const { moved, released } = await this.conn.use((s) =>
      completeAll(s, [{ id, owner, result }], resultRetentionSeconds),
    );
    for (const queue of released) this.wake(queue);
    return moved[0] === true;
  }

  /** One immediate transaction (transactions.ts `completeAll`). See {@link JobStore.jobCompleteMany}. */
  async jobCompleteMany({
    items,
    resultRetentionSeconds,
  }: JobCompleteManyParams): Promise<boolean[]> {
    const { moved, released } = await this.conn.use((s) =>
      completeAll(s, items, resultRetentionSeconds),
    );
    for (const queue of released) this.wake(queue);
    return moved;
  }

  /**
   * Wakes this process's claimers for the queues of jobs that waited for `ids` and were released
   * by their ends (migration 015's triggers, in the write just made: nothing else tells this
   * process, and other processes find them at their next poll). One read for all of `ids` (an
   * index probe per id).
   */
  private wakeReleased(s: SqliteSession, ids: readonly string[]): void {
    if (ids.length === 0) return;
    const rows = s.statement("flowReleasedQueues").all({ ids: JSON.stringify(ids) }) as Array<{
      queue: string;
    }>;
    for (const row of rows) this.wake(row.queue);
  }

  /**
   * The requeue and its count (`failed`) in one immediate transaction. See
   * {@link JobStore.jobRetry}.
   */
  async jobRetry({ id, owner, error, delaySeconds }: JobRetryParams): Promise<boolean> {
    const params = { id, ...fence(owner), error, delayMs: secondsToMs(delaySeconds) };
    const row = await this.conn.use((s) =>
      s.immediate(() => {
        const changed = s.statement("retry").get(params) as { queue: string } | undefined;
        if (changed !== undefined) countOutcome(s, changed.queue, "failed");
        return changed;
      }),
    );
    if (row === undefined) return false;
    if (delaySeconds <= 0) this.wake(row.queue);
    return true;
  }

  /** See {@link JobStore.jobSnooze}. */
  async jobSnooze({ id, owner, delaySeconds }: JobSnoozeParams): Promise<boolean> {
    const params = { id, ...fence(owner), delayMs: secondsToMs(delaySeconds) };
    return this.requeued("snooze", params, delaySeconds <= 0);
  }

  /** One immediate transaction (the pause, and pauses that passed deleted). See {@link JobStore.jobPauseKey}. */
  async jobPauseKey({ key, delaySeconds }: JobPauseKeyParams): Promise<void> {
    const delayMs = secondsToMs(delaySeconds);
    await this.conn.use((s) =>
      s.immediate(() => {
        const now = s.nowMs();
        s.statement("prunePauses").run({ now });
        s.statement("pauseKey").run({ key, now, delayMs });
      }),
    );
    this.windowWake.in(delayMs);
  }

  /** One statement. See {@link JobStore.jobPauseQueue}. */
  async jobPauseQueue({ queue, delaySeconds }: JobPauseQueueParams): Promise<void> {
    const delayMs = secondsToMs(delaySeconds);
    await this.conn.use((s) => s.statement("pauseQueue").run({ queue, now: s.nowMs(), delayMs }));
    this.windowWake.in(delayMs);
  }

  /** Start mark, one fenced statement. See {@link JobStore.jobMarkStarted}. */
  async jobMarkStarted({ id, owner }: JobMarkStartedParams): Promise<boolean> {
    return this.conn.use(
      (s) => s.statement("markStarted").run({ id, ...fence(owner) }).changes > 0,
    );
  }

  /** One fenced statement. See {@link JobStore.jobCheckpoint}. */
  async jobCheckpoint({ id, owner, checkpoint, steps }: JobCheckpointParams): Promise<boolean> {
    const params = { id, ...fence(owner), checkpoint: checkpoint ?? null, steps: steps ?? null };
    return this.conn.use((s) => s.statement("checkpoint").run(params).changes > 0);
  }

  /** One fenced read. See {@link JobStore.jobResumeRead}. */
  async jobResumeRead({ id, owner }: JobResumeReadParams): Promise<JobResumeState | null> {
    const row = await this.conn.use(
      (s) =>
        (owner
          ? s.statement("resumeRead").get({ id, ...fence(owner) })
          : s.statement("resumeReadQueued").get({ id })) as JobResumeState | undefined,
    );
    return row ? { checkpoint: row.checkpoint, steps: row.steps } : null;
  }

  /** One fenced statement. See {@link JobStore.jobFreezeStep}. */
  async jobFreezeStep({ id, owner, steps, error }: JobFreezeStepParams): Promise<boolean> {
    const params = { id, ...fence(owner), steps, error, frozenUntil: FROZEN_UNTIL_MS };
    return this.conn.use((s) => s.statement("freezeStep").run(params).changes > 0);
  }

  /** One statement. See {@link JobStore.jobResumeClear}. */
  async jobResumeClear({ id }: JobIdParams): Promise<boolean> {
    return this.conn.use((s) => s.statement("resumeClear").run({ id }).changes > 0);
  }

  /** One statement; wakes the queue. See {@link JobStore.jobStepsResolve}. */
  async jobStepsResolve({ id, expected, steps }: JobStepsResolveParams): Promise<boolean> {
    const row = await this.conn.use(
      (s) =>
        s.statement("stepsResolve").get({ id, expected, steps }) as { queue: string } | undefined,
    );
    if (row) this.wake(row.queue);
    return row !== undefined;
  }

  /** See {@link JobStore.jobNack}. */
  async jobNack({ id, owner }: JobNackParams): Promise<boolean> {
    return this.requeued("nack", { id, ...fence(owner) }, true);
  }

  /** One statement of fenced NACKs. See {@link JobStore.jobNackMany}. */
  async jobNackMany({ items }: JobNackManyParams): Promise<boolean[]> {
    const { changed, queues } = await this.conn.use((s) => nackAll(s, items));
    for (const queue of queues) this.wake(queue);
    return changed;
  }

  /** Runs a fenced requeue (`… RETURNING queue`); wakes its queue when `wake`. */
  private async requeued(
    statement: "snooze" | "nack",
    params: Record<string, unknown>,
    wake: boolean,
  ): Promise<boolean> {
    const row = await this.conn.use(
      (s) => s.statement(statement).get(params) as { queue: string } | undefined,
    );
    if (row === undefined) return false;
    if (wake) this.wake(row.queue);
    return true;
  }

  /** The copy and the delete in one immediate transaction. See {@link JobStore.jobDeadLetter}. */
  async jobDeadLetter({
    id,
    owner,
    error,
    reason,
    countAttempt,
  }: JobDeadLetterParams): Promise<boolean> {
    return this.conn.use((s) => {
      const moved = moveToDeadLetter(s, id, owner, { error, reason, countAttempt });
      if (moved) this.wakeReleased(s, [id]);
      return moved;
    });
  }

  /** The move to `soniq_finished_jobs` in one immediate transaction. See {@link JobStore.jobCancel}. */
  async jobCancel({ id, retentionSeconds }: JobCancelParams): Promise<boolean> {
    const retentionMs = secondsToMs(retentionSeconds);
    return this.conn.use((s) =>
      s.immediate(() => finishJob(s, CANCEL_QUEUED, { id }, retentionMs) !== undefined),
    );
  }

  /** See {@link JobStore.jobGet}. */
  async jobGet({ id }: JobIdParams): Promise<JobRow | null> {
    return this.conn.use((s) => {
      const row = s.statement("getJob").get({ id }) as JobRecord | undefined;
      return row ? toJobRow(row) : null;
    });
  }

  /** One snapshot. See {@link JobStore.jobStats}. */
  jobStats(): Promise<QueueStats> {
    return this.conn.use(countJobs);
  }

  /** Per-queue counts and lateness from one snapshot. See {@link JobStore.jobQueueMetrics}. */
  jobQueueMetrics(): Promise<QueueMetrics[]> {
    return this.conn.use(countJobsByQueue);
  }

  /**
   * Expired finished rows (counted as gone), then dedup keys whose hold has passed (each at most
   * `limit`), then the counters folded, in one immediate transaction. See
   * {@link JobStore.jobPruneFinished}.
   */
  async jobPruneFinished({ limit }: JobPruneFinishedParams): Promise<number> {
    return this.conn.use((s) =>
      s.immediate(() => {
        const pruned = s.statement("pruneFinished").all({ limit: limit ?? -1 }) as Array<
          CountedRow & { status: "done" | "cancelled" }
        >;
        const tally = new FinishedTally();
        for (const row of pruned) tally.add(row, `${row.status}_gone`);
        tally.write(s);
        s.statement("pruneDedupKeys").run({ limit: limit ?? -1 });
        // Fold the counters of minutes older than 25 hours (sums unchanged).
        const cutoff = s.nowMs() - 25 * 3_600_000;
        s.statement("foldCounts").run({ cutoff });
        s.statement("dropFoldedCounts").run({ cutoff });
        return pruned.length;
      }),
    );
  }

  /**
   * One immediate transaction (transactions.ts `recoverStaleClaims`), so it is exactly-once
   * across processes sharing the file. See {@link JobStore.jobRecoverStale}.
   */
  async jobRecoverStale(params: JobRecoverStaleParams): Promise<RecoveryResult> {
    const result = await this.conn.use((s) => recoverStaleClaims(s, params));
    for (const queue of new Set(result.requeued.map((j) => j.queue))) this.wake(queue);
    return result;
  }

  /** See {@link JobStore.jobOwnedBy}. */
  async jobOwnedBy({ workerId }: JobOwnedByParams): Promise<OwnedJob[]> {
    return this.conn.use((s) =>
      (s.statement("ownedBy").all({ workerId }) as Array<{ id: string; claim_token: string }>).map(
        (r) => ({ id: r.id, workerId, claimToken: r.claim_token }),
      ),
    );
  }

  /** See {@link JobStore.deadLetterGet}. */
  async deadLetterGet({ id }: JobIdParams): Promise<DeadLetterRow | null> {
    return this.conn.use((s) => {
      const row = s.statement("getDeadLetter").get({ id }) as DeadLetterRecord | undefined;
      return row ? toDeadLetterRow(row) : null;
    });
  }

  /**
   * One immediate transaction (transactions.ts `replayEntry`). See
   * {@link JobStore.deadLetterReplay}.
   */
  async deadLetterReplay({ id }: JobIdParams): Promise<boolean> {
    const queue = await this.conn.use((s) => replayEntry(s, id));
    if (queue === undefined) return false;
    this.wake(queue);
    return true;
  }
}
