/**
 * The SQLite backend's multi-statement writes: each one `BEGIN IMMEDIATE` transaction over the
 * catalogue's statements (sql.ts), doing what PostgreSQL does in a single statement. Each takes
 * the session of one `SqliteConnection.use` call and returns plain results; waking subscribers
 * is the facade's job.
 */
import { SoniqError } from "../../errors.js";
import { claimedJobOfRow } from "../claimed-job.js";
import {
  type ClaimedJob,
  type CompletionItem,
  DEFAULT_CANCELLED_RETENTION_SECONDS,
  type EnqueueResult,
  type JobClaimParams,
  type JobRecoverStaleParams,
  type NewJob,
  type Owner,
  type RecoveryResult,
} from "../contract/index.js";
import { limitedRoom } from "../shared/claim-policy.js";
import { decideRecovery, recoveryResult, type StaleClaim } from "../shared/recovery-policy.js";
import { secondsToMs } from "./clock.js";
import type { SqliteSession } from "./connection.js";
import type { ClaimedRecord } from "./rows.js";

/** The owner's fields as the named parameters of the fence (nothing else from the object). */
export function fence(owner: Owner): { workerId: string; claimToken: string } {
  return { workerId: owner.workerId, claimToken: owner.claimToken };
}

/**
 * Inserts `jobs`, all or nothing. `scheduled_at` is `runAt`, or the database's now plus
 * `delaySeconds` (seconds). A job whose dedup key is held by any row of `soniq_jobs` (including
 * one inserted earlier in the batch) gets its holder's id with `inserted: false`.
 * @returns One result per job, in input order, and the queues that received a job.
 */
export function insertJobs(
  s: SqliteSession,
  jobs: readonly NewJob[],
): { results: EnqueueResult[]; queues: Set<string> } {
  const holderOf = s.statement("dedupHolder");
  const insert = s.statement("insertJob");
  return s.immediate(() => {
    const now = s.nowMs();
    const results: EnqueueResult[] = [];
    const queues = new Set<string>();
    for (const job of jobs) {
      if (job.dedupKey !== null) {
        const holder = holderOf.get({ dedupKey: job.dedupKey }) as { id: string } | undefined;
        if (holder) {
          results.push({ id: holder.id, inserted: false });
          continue;
        }
      }
      insert.run(insertParams(job, now));
      queues.add(job.queue);
      results.push({ id: job.id, inserted: true });
    }
    return { results, queues };
  });
}

/** The named parameters of `insertJob` for `job` at the database's `now` (ms). */
function insertParams(job: NewJob, now: number): Record<string, unknown> {
  return {
    id: job.id,
    name: job.name,
    queue: job.queue,
    args: job.args,
    priority: job.priority,
    maxAttempts: job.maxAttempts,
    scheduledAt: job.runAt ? job.runAt.getTime() : now + secondsToMs(job.delaySeconds),
    now,
    dedupKey: job.dedupKey,
    meta: job.meta ?? null,
    traceContext: job.traceContext ?? null,
  };
}

/**
 * Queued rows the hand-off probe reads at most (sql.ts `handOffProbe`): with more queued rows than
 * this a job is never handed off (queued as usual), so the probe stays cheap on any table.
 */
export const HAND_OFF_PROBE_ROWS = 64;

/**
 * Hand-off at enqueue (contract/hand-off.ts) of one job due now (no `runAt`, no delay), all or
 * nothing: a dedup hit inserts nothing (the holder's id); a job whose queue is free — no due
 * `queued` row of that queue, the queue neither paused nor limited, and at most
 * {@link HAND_OFF_PROBE_ROWS} queued rows in the file (else the probe cannot tell cheaply) — is
 * inserted already claimed by `workerId` and returned as `claimed`; otherwise it is inserted
 * `queued`, as {@link insertJobs} does.
 */
export function insertHandedOff(
  s: SqliteSession,
  job: NewJob,
  workerId: string,
): { result: EnqueueResult; claimed?: ClaimedJob } {
  return s.immediate(() => {
    const now = s.nowMs();
    if (job.dedupKey !== null) {
      const holder = s.statement("dedupHolder").get({ dedupKey: job.dedupKey }) as
        | { id: string }
        | undefined;
      if (holder) return { result: { id: holder.id, inserted: false } };
    }
    const params = insertParams(job, now);
    const result = { id: job.id, inserted: true };
    const probed = s
      .statement("handOffProbe")
      .all({ queue: job.queue, now, rows: HAND_OFF_PROBE_ROWS + 1 }) as Array<{ blocks: number }>;
    const free =
      probed.length <= HAND_OFF_PROBE_ROWS &&
      !probed.some((row) => row.blocks === 1) &&
      s.statement("queueRestricted").get({ queue: job.queue }) === undefined;
    if (!free) {
      s.statement("insertJob").run(params);
      return { result };
    }
    const row = s.statement("insertClaimedJob").get({ ...params, workerId }) as ClaimedRecord;
    return { result, claimed: claimedJobOfRow(row) };
  });
}

/** The claim's read of due ids: every queue or some (`@queues`), without or with the filter. */
const DUE_IDS = {
  all: ["dueIds", "dueIdsUnrestricted"],
  some: ["dueIdsInQueues", "dueIdsInQueuesUnrestricted"],
} as const;

/**
 * Claims up to `request.limit` due queued jobs in claim order, each with a fresh random UUID
 * `claim_token`: exactly once across every process sharing the file. Inside one `BEGIN
 * IMMEDIATE`: the ids are read in claim order (queues that are paused or have a `max_running`
 * skipped; each limited queue then within its room, its rows after the others'), then one
 * `UPDATE … RETURNING` claims them all (none when nothing is due).
 * @returns The claimed jobs, in claim order (empty when the limit is below 1).
 */
export function claimDue(s: SqliteSession, request: JobClaimParams): ClaimedJob[] {
  const limit = Math.floor(request.limit);
  if (!(limit >= 1)) return [];
  return s.immediate(() => {
    const now = s.nowMs();
    const queues = request.queues === null ? null : JSON.stringify(request.queues);
    const restricted =
      (s.statement("restrictedQueueExists").get() as { restricted: number }).restricted === 1;
    const read = s.statement(DUE_IDS[queues === null ? "all" : "some"][restricted ? 1 : 0]);
    const params: Record<string, unknown> = { now, limit };
    if (queues !== null) params.queues = queues;
    const ids = read.pluck().all(params) as string[];
    if (restricted) {
      // Queues with a max_running: at most their room, counted inside this same transaction.
      const dueInQueue = s.statement("dueIdsInLimitedQueue").pluck();
      const limited = s.statement("limitedQueues").all({ queues }) as Array<{
        name: string;
        maxRunning: number;
        processing: number;
      }>;
      for (const { name, ...load } of limited) {
        const room = limitedRoom({ ...load, wanted: limit - ids.length });
        if (room > 0) ids.push(...(dueInQueue.all({ now, limit: room, queue: name }) as string[]));
      }
    }
    if (ids.length === 0) return [];
    const rows = s.statement("claimByIds").all({
      ids: JSON.stringify(ids),
      now,
      workerId: request.workerId,
      startKnown: request.deferStart === true ? 0 : 1,
    }) as ClaimedRecord[];
    // RETURNING order is unspecified: back into the order the ids were read in.
    const byId = new Map(rows.map((row) => [row.id, row]));
    const claimed: ClaimedJob[] = [];
    for (const id of ids) {
      const row = byId.get(id);
      if (row) claimed.push(claimedJobOfRow(row));
    }
    return claimed;
  });
}

/**
 * Completes each item, fenced on its own, with `result_expires_at = now + retentionSeconds`.
 * @returns Per item, in input order, whether its row changed.
 */
export function completeAll(
  s: SqliteSession,
  items: readonly CompletionItem[],
  retentionSeconds: number,
): boolean[] {
  const update = s.statement("complete");
  const retentionMs = secondsToMs(retentionSeconds);
  return s.immediate(() =>
    items.map(
      (item) =>
        update.run({ id: item.id, ...fence(item.owner), result: item.result, retentionMs })
          .changes > 0,
    ),
  );
}

/**
 * NACKs claimed, never-started jobs in ONE statement ({@link SQL.nackMany}), each fenced on its
 * own owner (the NACK field contract, docs/shutdown.md, "What each branch does to a row").
 * @returns Per item, whether its row changed; and the distinct queues of the rows that did.
 */
export function nackAll(
  s: SqliteSession,
  items: readonly { id: string; owner: Owner }[],
): { changed: boolean[]; queues: Set<string> } {
  if (items.length === 0) return { changed: [], queues: new Set() };
  const triples = items.map((item) => [item.id, item.owner.workerId, item.owner.claimToken]);
  const rows = s.statement("nackMany").all({ items: JSON.stringify(triples) }) as Array<{
    id: string;
    queue: string;
  }>;
  const moved = new Set(rows.map((row) => row.id));
  return {
    changed: items.map((item) => moved.has(item.id)),
    queues: new Set(rows.map((row) => row.queue)),
  };
}

/** What {@link moveToDeadLetter} writes besides the fence. */
export interface DeadLetterWrite {
  /** The job's `last_error`. */
  error: string;
  /** Why it was moved (`max_attempts_exceeded`, `unknown_job`, …). */
  reason: string;
  /** Whether the run counts as an attempt (`attempts + 1`). */
  countAttempt: boolean;
}

/**
 * Moves the job `owner` holds into `soniq_dead_letter_jobs` (same id, in exactly one table).
 * @returns `false` (nothing changed) when `owner` does not hold the claim.
 */
export function moveToDeadLetter(
  s: SqliteSession,
  id: string,
  owner: Owner,
  write: DeadLetterWrite,
): boolean {
  const move = s.statement("deadLetter");
  const remove = s.statement("deleteJob");
  return s.immediate(() => {
    const { error, reason } = write;
    const params = { id, ...fence(owner), error, reason, increment: write.countAttempt ? 1 : 0 };
    if (move.run({ ...params, now: s.nowMs() }).changes === 0) return false;
    remove.run({ id });
    return true;
  });
}

/**
 * Moves dead-letter entry `id` back to `soniq_jobs` (see the `replay` statement).
 * @returns The job's queue, or `undefined` when there is no such entry.
 * @throws SoniqError `DEDUP_CONFLICT` when a row of `soniq_jobs` holds the entry's dedup key
 * (nothing changes).
 */
export function replayEntry(s: SqliteSession, id: string): string | undefined {
  const find = s.statement("deadLetterEntry");
  const holderOf = s.statement("dedupHolder");
  const restore = s.statement("replay");
  const remove = s.statement("deleteDeadLetter");
  return s.immediate(() => {
    const entry = find.get({ id }) as { queue: string; dedup_key: string | null } | undefined;
    if (!entry) return undefined;
    if (entry.dedup_key !== null) {
      const holder = holderOf.get({ dedupKey: entry.dedup_key }) as { id: string } | undefined;
      if (holder) {
        throw new SoniqError(
          "DEDUP_CONFLICT",
          `job ${holder.id} already holds dedup key ${JSON.stringify(entry.dedup_key)}`,
          { details: { id, holder: holder.id, dedupKey: entry.dedup_key } },
        );
      }
    }
    restore.run({ id, now: s.nowMs() });
    remove.run({ id });
    return entry.queue;
  });
}

/**
 * Crash recovery (`JobStore.jobRecoverStale`) in one `BEGIN IMMEDIATE`: reads the stale claims,
 * lets the shared policy decide (shared/recovery-policy.ts) and applies each decision in a write
 * fenced on the owner it read.
 */
export function recoverStaleClaims(
  s: SqliteSession,
  params: JobRecoverStaleParams,
): RecoveryResult {
  const { staleAfterSeconds, cancelledRetentionSeconds } = params;
  const timeoutMs = staleAfterSeconds === undefined ? null : secondsToMs(staleAfterSeconds);
  const retentionMs = secondsToMs(cancelledRetentionSeconds ?? DEFAULT_CANCELLED_RETENTION_SECONDS);
  const find = s.statement("staleClaims");
  const cancel = s.statement("cancelStale");
  const requeue = s.statement("requeueStale");
  const bury = s.statement("buryStale");
  const remove = s.statement("deleteJob");
  return s.immediate(() => {
    const now = s.nowMs();
    const liveWorkerId = params.liveWorkerId ?? null;
    const read = find.all({ now, timeoutMs, liveWorkerId }) as StaleRecord[];
    const decisions = read.map((row) => {
      const cancelRequested = row.cancelRequested === 1;
      const claim = { ...row, startKnown: row.startKnown === 1, cancelRequested };
      return decideRecovery(claim, params.crashLoop);
    });
    const changed = new Set<string>();
    for (const d of decisions) {
      const { claim, job } = d;
      const { id, workerId, claimToken } = claim;
      // Each statement reads the named parameters it has and ignores the rest.
      const row = { id, workerId, claimToken, now, interruptions: job.interruptions };
      const written =
        d.kind === "cancel"
          ? cancel.run({ ...row, retentionMs })
          : d.kind === "requeue"
            ? requeue.run({ ...row, charge: job.charged ? 1 : 0 })
            : bury.run({ ...row, error: d.error, reason: d.reason });
      if (written.changes === 0) continue;
      if (d.kind === "deadLetter") remove.run({ id });
      changed.add(id);
    }
    return recoveryResult(decisions, changed);
  });
}

/** A row of the `staleClaims` statement: a {@link StaleClaim} with 0/1 for its booleans. */
type StaleRecord = Omit<StaleClaim, "startKnown" | "cancelRequested"> & {
  startKnown: number;
  cancelRequested: number;
};
