/**
 * The PostgreSQL job store: `soniq_jobs` and `soniq_dead_letter_jobs` through the named
 * statements of sql.ts — marshalling, fencing by UUID shape, dedup resolution and local
 * wake-ups after the pool's own NOTIFYing writes.
 */
import { SoniqError } from "../../errors.js";
import { claimedJobOfRow } from "../claimed-job.js";
import {
  type ClaimedJob,
  type CompletionItem,
  DEFAULT_CANCELLED_RETENTION_SECONDS,
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
  type Owner,
  type PgQueryable,
  type QueueMetrics,
  type QueueStats,
  type RecoveryResult,
} from "../contract/index.js";
import { decideRecovery, recoveryResult, type StaleClaim } from "../shared/recovery-policy.js";
import type { PgConnection, PgJobStoreDeps, PgResult } from "./connection.js";
import { enqueueBatch } from "./enqueue.js";
import {
  aheadDaysFor,
  type FinishedPartitionsReport,
  maintainFinishedPartitions,
} from "./finished-partitions.js";
import { isUuid } from "./identifiers.js";
import { KeyedClaim } from "./keyed-claim.js";
import { LimitedClaim } from "./limited-claim.js";
import {
  type RawClaimedRow,
  type RawDeadLetterRow,
  type RawJobRow,
  toDeadLetterRow,
  toJobRow,
} from "./rows.js";
import type { Statements } from "./sql.js";
import { vacuumBusyTables } from "./table-vacuum.js";

/** The retention partitions are made ahead for when the caller gives none: 7 days, in seconds. */
const DEFAULT_RETENTION_SECONDS = 7 * 86_400;

/**
 * While the ordinary claim statement comes back empty and keyed jobs are queued, it still runs on
 * at least every this-many-th claim of the store: a job without a key queued during a keyed
 * backlog waits at most this many claims (docs/flow-control.md, "Fairness").
 */
export const DRY_ORDINARY_EVERY = 4;

/** PostgreSQL text cannot hold NUL: error messages and reasons get U+FFFD in its place. */
function storableText(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

/**
 * {@link JobStore} on PostgreSQL. Specific to it: ids that are not UUIDs match nothing (checked
 * before the round trip); error and reason text has NUL replaced by U+FFFD; a write that
 * NOTIFYs (due enqueue, NACK, retry/snooze with delay <= 0, replay, recovery) also wakes this
 * process's subscribers directly.
 */
export class PgJobStore implements JobStore {
  private readonly conn: PgConnection;
  private readonly sql: Statements;
  private readonly channel: string;
  private readonly wake: (queue: string) => void;
  private readonly limited: LimitedClaim;
  private readonly keyed: KeyedClaim;
  /** Whether the last ordinary claim statement came back empty. */
  private ordinaryDry = false;
  /** Claims since the last one that ran the ordinary claim statement. */
  private claimsWithoutOrdinary = 0;

  /** @param deps The pool, statements, channel and local wake. */
  constructor(private readonly deps: PgJobStoreDeps) {
    this.conn = deps.conn;
    this.sql = deps.sql;
    this.channel = deps.channel;
    this.wake = deps.wake;
    this.keyed = new KeyedClaim(deps.conn, deps.schema, deps.wake);
    this.limited = new LimitedClaim(deps.conn, deps.sql, this.keyed);
  }

  private run<R>(text: string, values: unknown[], via?: PgQueryable): Promise<PgResult<R>> {
    return this.conn.run<R>(text, values, via);
  }

  /** One statement for the batch (enqueue.ts). See {@link JobStore.jobEnqueue}. */
  jobEnqueue({ jobs, connection }: JobEnqueueParams): Promise<EnqueueResult[]> {
    return enqueueBatch(this.deps, jobs, connection);
  }

  /**
   * One statement with `FOR UPDATE SKIP LOCKED` (concurrent claimers never wait for or share a
   * row) and a fresh `gen_random_uuid()` claim token per row. One queue uses `claimQueue` (its
   * own index), several `claimQueues`. See {@link JobStore.jobClaim}.
   */
  async jobClaim(params: JobClaimParams): Promise<ClaimedJob[]> {
    this.conn.assertOpen();
    const limit = Math.floor(params.limit);
    const queues = params.queues === null ? null : [...new Set(params.queues)];
    if (!(limit >= 1) || (queues !== null && queues.length === 0)) return [];
    const names = params.names ?? null;
    if (names !== null && names.length === 0) return [];
    const versions = names === null ? null : (params.versions ?? null);
    const startKnown = params.deferStart !== true;
    const request = { workerId: params.workerId, queues, startKnown, names, versions };
    // Keyed jobs (keyed-claim.ts): after the others, or first on every other claim while some
    // are queued, so neither kind starves the other. After an ordinary claim that found nothing,
    // keyed jobs go first on every claim, and the ordinary claim runs at least every
    // DRY_ORDINARY_EVERY-th claim (a backlog of keyed jobs only: a round trip that finds
    // nothing). The last keyed-first claim before that one asks the keyed claim statement
    // whether a due job without a key is queued (`unkeyedDue`, the claim index's first due
    // entry); when none is, the ordinary statement, run at that instant, would have found none:
    // the claim counts as one that ran it, and the round trip is not sent.
    const alternate = this.keyed.keyedFirst();
    const keyedFirst =
      this.claimsWithoutOrdinary < DRY_ORDINARY_EVERY - 1 &&
      (alternate || (this.ordinaryDry && this.keyed.mayHaveQueued()));
    const ask = this.ordinaryDry && this.claimsWithoutOrdinary === DRY_ORDINARY_EVERY - 2;
    const first = keyedFirst
      ? await this.keyed.claim({ ...request, limit }, false, ask)
      : { rows: [], unkeyedDue: null };
    const noneUnkeyed = first.unkeyedDue === false;
    const wanted = limit - first.rows.length;
    if (wanted <= 0) {
      this.claimsWithoutOrdinary = noneUnkeyed ? 0 : this.claimsWithoutOrdinary + 1;
      if (noneUnkeyed) this.ordinaryDry = true;
      return first.rows.map(claimedJobOfRow);
    }
    const out = [...first.rows];
    if (noneUnkeyed) {
      // The keyed claim came back short and nothing without a key was due: the limited queues
      // (their keyed jobs are claimed there, not by the keyed claim) and nothing else.
      this.claimsWithoutOrdinary = 0;
      this.ordinaryDry = true;
      out.push(...(await this.limited.claim({ ...request, limit: wanted })));
      return out.map(claimedJobOfRow);
    }
    const [text, values] =
      queues === null
        ? [this.sql.claimAll, [params.workerId, wanted, startKnown, names, versions]]
        : queues.length === 1
          ? [this.sql.claimQueue, [params.workerId, wanted, queues[0], startKnown, names, versions]]
          : [this.sql.claimQueues, [params.workerId, wanted, queues, startKnown, names, versions]];
    const { rows } = params.signal
      ? await this.conn.runCancellable<RawClaimedRow>(text, values, params.signal)
      : await this.run<RawClaimedRow>(text, values);
    this.claimsWithoutOrdinary = 0;
    this.ordinaryDry = rows.length === 0;
    out.push(...rows);
    if (out.length >= limit) return out.map(claimedJobOfRow);
    // Queues with a max_running: each claimed under its queue row's lock (limited-claim.ts).
    out.push(...(await this.limited.claim({ ...request, limit: limit - out.length })));
    if (out.length < limit && !keyedFirst) {
      out.push(
        ...(await this.keyed.claim({ ...request, limit: limit - out.length }, out.length > 0)).rows,
      );
    }
    return out.map(claimedJobOfRow);
  }

  /** Runs a fenced write; `false` at once when the ids cannot match (not UUIDs). */
  private async fenced(text: string, id: string, owner: Owner, rest: unknown[]): Promise<boolean> {
    return ((await this.runFenced(text, id, owner, rest))?.rowCount ?? 0) > 0;
  }

  /** As {@link fenced} for a statement built by `notifying()` (sql.ts): also wakes locally. */
  private async fencedNotify(
    text: string,
    id: string,
    owner: Owner,
    rest: unknown[],
  ): Promise<boolean> {
    const rows = (await this.runFenced<{ queue: string }>(text, id, owner, rest))?.rows ?? [];
    for (const row of rows) this.wake(row.queue);
    return rows.length > 0;
  }

  /** Runs a fenced write (`$1` id, `$2` worker, `$3` token, then `rest`); null when the ids
   * cannot match (not UUIDs). */
  private async runFenced<R>(
    text: string,
    id: string,
    owner: Owner,
    rest: unknown[],
  ): Promise<PgResult<R> | null> {
    this.conn.assertOpen();
    if (!isUuid(id) || !isUuid(owner.claimToken)) return null;
    return this.run<R>(text, [id, owner.workerId, owner.claimToken, ...rest]);
  }

  /** See {@link JobStore.jobComplete}. */
  jobComplete({ id, owner, result, resultRetentionSeconds }: JobCompleteParams): Promise<boolean> {
    return this.fenced(this.sql.complete, id, owner, [result, resultRetentionSeconds]);
  }

  /**
   * One statement per owner and retention (a worker's batch has one owner, so usually one
   * statement; the worker id is sent once, not per row) that moves the rows out of the live
   * table, answered with one row: per row only when some row was refused.
   * Items whose id or token is not a UUID cannot match and are not sent. See
   * {@link JobStore.jobCompleteMany}.
   */
  async jobCompleteMany({
    items,
    resultRetentionSeconds,
  }: JobCompleteManyParams): Promise<boolean[]> {
    // One statement per owner and retention: a worker's batch has one owner and, unless its
    // job definitions set their own `resultRetention`, one retention.
    const groups = new Map<
      string,
      { workerId: string; retention: number; items: CompletionItem[] }
    >();
    let skipped = false;
    for (const item of items) {
      if (!isUuid(item.id) || !isUuid(item.owner.claimToken)) {
        skipped = true;
        continue;
      }
      const retention = item.resultRetentionSeconds ?? resultRetentionSeconds;
      const key = `${retention}\u0000${item.owner.workerId}`;
      const group = groups.get(key);
      if (group) group.items.push(item);
      else groups.set(key, { workerId: item.owner.workerId, retention, items: [item] });
    }
    if (groups.size === 0) {
      this.conn.assertOpen();
      return items.map(() => false);
    }
    /** Groups whose every row changed (the usual answer), and `id/token` of those that did in the rest. */
    const whole = new Set<string>();
    const some = new Set<string>();
    for (const [key, { workerId, retention, items: group }] of groups) {
      let ids = "";
      let tokens = "";
      let results: (string | null)[] | null = null;
      for (let k = 0; k < group.length; k++) {
        const item = group[k] as CompletionItem;
        ids += k === 0 ? item.id : `,${item.id}`;
        tokens += k === 0 ? item.owner.claimToken : `,${item.owner.claimToken}`;
        if (item.result !== null) results ??= group.map((i) => i.result);
      }
      const { rows } = await this.run<{ changed: number; claims: string[] | null }>(
        this.sql.completeMany,
        [ids, workerId, tokens, results, retention, group.length],
      );
      const answer = rows[0];
      if (answer?.changed === group.length) whole.add(key);
      else for (const claim of answer?.claims ?? []) some.add(claim);
    }
    return items.map(
      (i) =>
        // The database answers in lower case (uuid text); a UUID matches in any case.
        some.has(`${i.id.toLowerCase()}/${i.owner.claimToken.toLowerCase()}`) ||
        (whole.has(
          `${i.resultRetentionSeconds ?? resultRetentionSeconds}\u0000${i.owner.workerId}`,
        ) &&
          (!skipped || (isUuid(i.id) && isUuid(i.owner.claimToken)))),
    );
  }

  /** Delay <= 0 also NOTIFYs. See {@link JobStore.jobRetry}. */
  jobRetry({ id, owner, error, delaySeconds }: JobRetryParams): Promise<boolean> {
    const message = storableText(error);
    return delaySeconds <= 0
      ? this.fencedNotify(this.sql.retryNotify, id, owner, [message, delaySeconds, this.channel])
      : this.fenced(this.sql.retry, id, owner, [message, delaySeconds]);
  }

  /** One atomic DELETE … INSERT statement. See {@link JobStore.jobDeadLetter}. */
  jobDeadLetter({ id, owner, error, reason, countAttempt }: JobDeadLetterParams): Promise<boolean> {
    return this.fenced(this.sql.deadLetter, id, owner, [
      storableText(error),
      storableText(reason),
      countAttempt,
    ]);
  }

  /** One statement (keyed-claim.ts `pauseKey`). See {@link JobStore.jobPauseKey}. */
  jobPauseKey({ key, delaySeconds }: JobPauseKeyParams): Promise<void> {
    return this.keyed.pauseKey(key, delaySeconds);
  }

  /** One statement (keyed-claim.ts `pauseQueue`). See {@link JobStore.jobPauseQueue}. */
  jobPauseQueue({ queue, delaySeconds }: JobPauseQueueParams): Promise<void> {
    return this.keyed.pauseQueue(queue, delaySeconds);
  }

  /** Delay <= 0 also NOTIFYs. See {@link JobStore.jobSnooze}. */
  jobSnooze({ id, owner, delaySeconds }: JobSnoozeParams): Promise<boolean> {
    return delaySeconds <= 0
      ? this.fencedNotify(this.sql.snoozeNotify, id, owner, [delaySeconds, this.channel])
      : this.fenced(this.sql.snooze, id, owner, [delaySeconds]);
  }

  /** One fenced UPDATE. See {@link JobStore.jobMarkStarted}. */
  jobMarkStarted({ id, owner }: JobMarkStartedParams): Promise<boolean> {
    return this.fenced(this.sql.markStarted, id, owner, []);
  }

  /** One fenced UPDATE. See {@link JobStore.jobCheckpoint}. */
  jobCheckpoint({ id, owner, checkpoint, steps }: JobCheckpointParams): Promise<boolean> {
    return this.fenced(this.sql.checkpoint, id, owner, [checkpoint ?? null, steps ?? null]);
  }

  /** One fenced SELECT. See {@link JobStore.jobResumeRead}. */
  async jobResumeRead({ id, owner }: JobResumeReadParams): Promise<JobResumeState | null> {
    this.conn.assertOpen();
    const result = owner
      ? await this.runFenced<JobResumeState>(this.sql.resumeRead, id, owner, [])
      : isUuid(id)
        ? await this.run<JobResumeState>(this.sql.resumeReadQueued, [id])
        : null;
    const row = result?.rows[0];
    return row ? { checkpoint: row.checkpoint, steps: row.steps } : null;
  }

  /** One fenced UPDATE. See {@link JobStore.jobFreezeStep}. */
  jobFreezeStep({ id, owner, steps, error }: JobFreezeStepParams): Promise<boolean> {
    return this.fenced(this.sql.freezeStep, id, owner, [steps, error, FROZEN_UNTIL_MS]);
  }

  /** One UPDATE. See {@link JobStore.jobResumeClear}. */
  async jobResumeClear({ id }: JobIdParams): Promise<boolean> {
    this.conn.assertOpen();
    if (!isUuid(id)) return false;
    return ((await this.run(this.sql.resumeClear, [id])).rowCount ?? 0) > 0;
  }

  /** One UPDATE; NOTIFYs. See {@link JobStore.jobStepsResolve}. */
  async jobStepsResolve({ id, expected, steps }: JobStepsResolveParams): Promise<boolean> {
    this.conn.assertOpen();
    if (!isUuid(id)) return false;
    const { rows } = await this.run<{ queue: string }>(this.sql.stepsResolve, [
      id,
      expected,
      steps,
      this.channel,
    ]);
    for (const row of rows) this.wake(row.queue);
    return rows.length > 0;
  }

  /** The NACK field contract, owner included; NOTIFYs. See {@link JobStore.jobNack}. */
  jobNack({ id, owner }: JobNackParams): Promise<boolean> {
    return this.fencedNotify(this.sql.nack, id, owner, [this.channel]);
  }

  /** One statement; wakes each queue once. See {@link JobStore.jobNackMany}. */
  async jobNackMany({ items }: JobNackManyParams): Promise<boolean[]> {
    this.conn.assertOpen();
    const valid = items.filter((i) => isUuid(i.id) && isUuid(i.owner.claimToken));
    if (valid.length === 0) return items.map(() => false);
    const { rows } = await this.run<{ id: string; queue: string }>(this.sql.nackMany, [
      valid.map((i) => i.id),
      valid.map((i) => i.owner.workerId),
      valid.map((i) => i.owner.claimToken),
      this.channel,
    ]);
    for (const queue of new Set(rows.map((r) => r.queue))) this.wake(queue);
    const changed = new Set(rows.map((r) => r.id));
    return items.map((i) => changed.has(i.id));
  }

  /** See {@link JobStore.jobCancel}. */
  async jobCancel({ id, retentionSeconds }: JobCancelParams): Promise<boolean> {
    this.conn.assertOpen();
    if (!isUuid(id)) return false;
    const { rowCount } = await this.run(this.sql.cancel, [id, retentionSeconds]);
    return rowCount > 0;
  }

  /** See {@link JobStore.jobGet}. */
  async jobGet({ id }: JobIdParams): Promise<JobRow | null> {
    this.conn.assertOpen();
    if (!isUuid(id)) return null;
    const { rows } = await this.run<RawJobRow>(this.sql.getJob, [id]);
    return rows[0] ? toJobRow(rows[0]) : null;
  }

  /** One statement. See {@link JobStore.jobStats}. */
  async jobStats(): Promise<QueueStats> {
    const { rows } = await this.run<{ status: string; n: string }>(this.sql.stats, []);
    const stats: QueueStats = {
      total: 0,
      queued: 0,
      processing: 0,
      done: 0,
      deadLetter: 0,
      cancelled: 0,
    };
    for (const row of rows) {
      const n = Number(row.n);
      const key = row.status === "dead_letter" ? "deadLetter" : row.status;
      if (key in stats) stats[key as keyof QueueStats] += n;
      stats.total += n;
    }
    return stats;
  }
  /** See {@link JobStore.jobQueueMetrics}. */
  async jobQueueMetrics(): Promise<QueueMetrics[]> {
    const { rows } = await this.run<{
      queue: string;
      queued: string;
      processing: string;
      done: string;
      cancelled: string;
      dead_letter: string;
      oldest_age: number;
    }>(this.sql.queueMetrics, []);
    return rows.map((row) => ({
      queue: row.queue,
      queued: Number(row.queued),
      processing: Number(row.processing),
      done: Number(row.done),
      cancelled: Number(row.cancelled),
      deadLetter: Number(row.dead_letter),
      oldestClaimableAgeSeconds: Math.max(0, Number(row.oldest_age)),
    }));
  }

  /**
   * A transaction that locks the prune mark and advances it over at most `limit` expired rows,
   * counting them as gone (sql.ts `lockMark`, `pruneFinished`); then the dedup keys whose hold
   * has passed, the counters folded, and — once a call comes back short (caught up) — the
   * partitions maintained: forgotten days dropped, the default partition's forgotten rows
   * deleted, the days ahead made (finished-partitions.ts), and Soniq's tables with many dead rows
   * and no recent vacuum vacuumed (table-vacuum.ts). See {@link JobStore.jobPruneFinished}.
   */
  async jobPruneFinished({ limit, retentionSeconds }: JobPruneFinishedParams): Promise<number> {
    this.conn.assertOpen();
    const pruned = await this.conn.transaction(async (client) => {
      await client.query(this.sql.lockMark);
      const { rows } = await client.query<{ pruned: number }>(this.sql.pruneFinished, [
        limit ?? null,
      ]);
      return rows[0]?.pruned ?? 0;
    });
    await this.run(this.sql.pruneKeys, [limit ?? null]);
    await this.run(this.sql.foldCounts, []);
    if (limit === undefined || pruned < limit) {
      await this.jobMaintainPartitions({ retentionSeconds });
      await vacuumBusyTables(this.conn, this.deps.schema);
    }
    return pruned;
  }

  /**
   * The physical side of the prune (finished-partitions.ts): drops the daily partitions wholly
   * forgotten, deletes the default partition's forgotten rows, makes the partitions for the days
   * ahead of `retentionSeconds` (seconds; default 7 days). PostgreSQL only.
   * @returns What it did.
   * @throws the driver's error, except for a lock not available now (that step is skipped).
   */
  jobMaintainPartitions({
    retentionSeconds = DEFAULT_RETENTION_SECONDS,
  }: {
    retentionSeconds?: number | undefined;
  } = {}): Promise<FinishedPartitionsReport> {
    return maintainFinishedPartitions(this.conn, this.deps.schema, {
      aheadDays: aheadDaysFor(retentionSeconds),
    });
  }

  /**
   * Two statements: reads the stale claims (`staleClaims`), lets the shared policy decide
   * (shared/recovery-policy.ts), then writes every decision in one batched statement that locks
   * each row and re-checks it is still as read (`recoverStale`); requeued rows NOTIFY their
   * queues. See {@link JobStore.jobRecoverStale}.
   */
  async jobRecoverStale({
    staleAfterSeconds,
    crashLoop,
    cancelledRetentionSeconds = DEFAULT_CANCELLED_RETENTION_SECONDS,
    liveWorkerId,
  }: JobRecoverStaleParams): Promise<RecoveryResult> {
    const stale = await this.run<StaleClaim>(this.sql.staleClaims, [
      staleAfterSeconds ?? null,
      liveWorkerId ?? null,
    ]);
    const decided = stale.rows.map((claim) => decideRecovery(claim, crashLoop));
    if (decided.length === 0) return recoveryResult(decided, new Set());
    const written = await this.run<{ id: string }>(this.sql.recoverStale, [
      decided.map((d) => d.claim.id),
      decided.map((d) => d.claim.workerId),
      decided.map((d) => d.claim.claimToken),
      decided.map((d) => d.kind),
      decided.map((d) => d.job.interruptions),
      decided.map((d) => d.job.charged),
      decided.map((d) => (d.kind === "deadLetter" ? storableText(d.error) : null)),
      storableText(crashLoop.reason),
      cancelledRetentionSeconds,
      this.channel,
    ]);
    const result = recoveryResult(decided, new Set(written.rows.map((row) => row.id)));
    for (const queue of new Set(result.requeued.map((job) => job.queue))) this.wake(queue);
    return result;
  }

  /** See {@link JobStore.jobOwnedBy}. */
  async jobOwnedBy({ workerId }: JobOwnedByParams): Promise<OwnedJob[]> {
    const { rows } = await this.run<{ id: string; claim_token: string }>(this.sql.ownedBy, [
      workerId,
    ]);
    return rows.map((r) => ({ id: r.id, workerId, claimToken: r.claim_token }));
  }

  /** See {@link JobStore.deadLetterGet}. */
  async deadLetterGet({ id }: JobIdParams): Promise<DeadLetterRow | null> {
    this.conn.assertOpen();
    if (!isUuid(id)) return null;
    const { rows } = await this.run<RawDeadLetterRow>(this.sql.getDeadLetter, [id]);
    return rows[0] ? toDeadLetterRow(rows[0]) : null;
  }

  /**
   * One statement takes the entry's dedup key again and moves it back (the insert trigger
   * NOTIFYs); a key held by another job moves nothing and is reported. See
   * {@link JobStore.deadLetterReplay}.
   */
  async deadLetterReplay({ id }: JobIdParams): Promise<boolean> {
    this.conn.assertOpen();
    if (!isUuid(id)) return false;
    const { rows } = await this.run<{ found: boolean; queue: string | null }>(this.sql.replay, [
      id,
    ]).catch((err: unknown) => {
      // A live job of the previous version holds the key in the live table's unique index.
      if ((err as { code?: unknown }).code !== "23505") throw err;
      throw new SoniqError("DEDUP_CONFLICT", `a live job already holds the dedup key of ${id}`, {
        cause: err,
        details: { id },
      });
    });
    const answer = rows[0];
    if (!answer?.found) return false;
    if (answer.queue !== null) {
      this.wake(answer.queue);
      return true;
    }
    const holder = await this.run<{ id: string }>(this.sql.replayHolder, [id]).catch(() => ({
      rows: [] as Array<{ id: string }>,
    }));
    const by = holder.rows[0] ? `job ${holder.rows[0].id}` : "a live job";
    throw new SoniqError("DEDUP_CONFLICT", `${by} already holds the dedup key of ${id}`, {
      details: { id, holderId: holder.rows[0]?.id },
    });
  }
}
