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
import { type CountedRow, countOne, countOutcome, FinishedTally } from "./finished-counts.js";
import type { ClaimedRecord } from "./rows.js";
import type { StatementName } from "./sql.js";

/** The owner's fields as the named parameters of the fence (nothing else from the object). */
export function fence(owner: Owner): { workerId: string; claimToken: string } {
  return { workerId: owner.workerId, claimToken: owner.claimToken };
}

/**
 * Job `id` takes `dedupKey` in `soniq_dedup_keys` (sql.ts `takeDedupKey`: absent, its hold
 * passed, or already `id`'s), inside the caller's transaction.
 * @returns `undefined` when taken; else the id of the job that holds it.
 */
export function takeDedupKey(
  s: SqliteSession,
  dedupKey: string,
  id: string,
  now: number,
): string | undefined {
  if (s.statement("takeDedupKey").run({ dedupKey, id, now }).changes > 0) return undefined;
  // Not taken, so held (the holder read is the take's condition negated, at the same `now`).
  return (s.statement("dedupHolder").get({ dedupKey, now }) as { id: string }).id;
}

/**
 * Inserts `jobs`, all or nothing. `scheduled_at` is `runAt`, or the database's now plus
 * `delaySeconds` (seconds). A job whose dedup key is held (`soniq_dedup_keys`, including by a job
 * inserted earlier in the batch) gets its holder's id with `inserted: false`; otherwise the job
 * takes the key.
 * @returns One result per job, in input order, and the queues that received a job.
 */
export function insertJobs(
  s: SqliteSession,
  jobs: readonly NewJob[],
): { results: EnqueueResult[]; queues: Set<string> } {
  const insert = s.statement("insertJob");
  return s.immediate(() => {
    const now = s.nowMs();
    const results: EnqueueResult[] = [];
    const queues = new Set<string>();
    for (const job of jobs) {
      if (job.dedupKey !== null) {
        const holder = takeDedupKey(s, job.dedupKey, job.id, now);
        if (holder !== undefined) {
          results.push({ id: holder, inserted: false });
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
    version: job.version ?? 1,
  };
}

/**
 * The claim's `@versions` (sql.ts `dueIdsStatement`): a JSON object, each of `request.names` →
 * its entry of `request.versions`; NULL (any version) when either is absent.
 */
function versionsParam(request: JobClaimParams): string | null {
  const { names, versions } = request;
  if (names == null || versions == null) return null;
  const byName: Record<string, number> = {};
  names.forEach((name, i) => {
    byName[name] = versions[i] ?? 0;
  });
  return JSON.stringify(byName);
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
      const holder = takeDedupKey(s, job.dedupKey, job.id, now);
      if (holder !== undefined) return { result: { id: holder, inserted: false } };
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

/** Per connection: how many claims it ran (odd: keyed jobs last; even: keyed jobs first). */
const keyedTurns = new WeakMap<SqliteSession, number>();

/**
 * Per connection: whether its last read of due ids without a key came back empty, and the claims
 * since the last one that ran that read (see {@link DRY_ORDINARY_EVERY}).
 */
const ordinaryReads = new WeakMap<SqliteSession, { dry: boolean; without: number }>();

/**
 * While a connection's read of due jobs without a key comes back empty, keyed jobs go first on
 * every claim and that read still runs on at least every this-many-th claim (as PostgreSQL's
 * `DRY_ORDINARY_EVERY`, docs/flow-control.md "Fairness"): a job without a key queued during a
 * keyed backlog waits at most this many claims of the connection.
 */
export const DRY_ORDINARY_EVERY = 4;

/** Per connection: the key its last rotating pass took a head from (keyedRotation). */
const keyedCursors = new WeakMap<SqliteSession, string>();

/**
 * The keyed claim's read (docs/flow-control.md, "Fairness"): first a rotating pass — the keys
 * with queued jobs walked in key order from just after the key where this connection's last pass
 * stopped, wrapping round, each key's head taken while the key has room (running below the head's
 * limit, starts in the window below its rate limit, not paused), until `limit` heads — which
 * reads about as many keys as it takes jobs, in one statement (sql.ts `keyedPass`). A pass that
 * went round every key with fewer heads than `limit` is replaced by the full ranked read
 * (`keyedRead`: rank within key first, then claim order), which also takes second and later jobs
 * of keys with room; its count of each key's running rows does not include the rotating pass's
 * picks, so the two are never combined. The caller runs it only when a keyed job is queued
 * ({@link keyedJobQueued}).
 */
function keyedRotation(
  s: SqliteSession,
  params: Record<string, unknown>,
  limit: number,
  keyedRead: { all(params: Record<string, unknown>): unknown[] },
): string[] {
  const pass = s.statement(params.queues === undefined ? "keyedPass" : "keyedPassInQueues");
  const cursor = keyedCursors.get(s) ?? null;
  const rows = pass.all({ ...params, cursor, limit }) as Array<{ k: string; id: string }>;
  const last = rows.at(-1);
  if (last !== undefined) keyedCursors.set(s, last.k);
  if (rows.length >= limit) return rows.map((row) => row.id);
  return keyedRead.all({ ...params, limit }) as string[];
}

/**
 * Whether any keyed job is queued (due or not, any queue): one probe of migration 012's partial
 * index `soniq_jobs_keyed_claim`, empty while no job has a key. A claim asks it once, inside its
 * transaction, before any keyed read, so a drain of jobs without a key runs no keyed read.
 */
function keyedJobQueued(s: SqliteSession): boolean {
  return s.statement("keyedQueued").get() !== undefined;
}

/**
 * Claims up to `request.limit` due queued jobs in claim order, each with a fresh random UUID
 * `claim_token`: exactly once across every process sharing the file. Inside one `BEGIN
 * IMMEDIATE`: the ids are read in claim order (queues that are paused or have a `max_running`
 * skipped; each limited queue then within its room, its rows after the others'), then one
 * `UPDATE … RETURNING` claims them all (none when nothing is due). Rate-limited jobs among them
 * record their starts (docs/flow-control.md, "Rate limits"); then `seen.rate` is set. Once it is
 * set, a claim that takes fewer than its limit sets `seen.nextMs`: the milliseconds until the
 * first full window of a key with due held jobs opens (null: none).
 * @returns The claimed jobs, in claim order (empty when the limit is below 1).
 */
export function claimDue(
  s: SqliteSession,
  request: JobClaimParams,
  seen?: { rate: boolean; nextMs?: number | null },
): ClaimedJob[] {
  const limit = Math.floor(request.limit);
  if (!(limit >= 1) || request.names?.length === 0) return [];
  return s.immediate(() => {
    const now = s.nowMs();
    const queues = request.queues === null ? null : JSON.stringify(request.queues);
    const restricted =
      (s.statement("restrictedQueueExists").get() as { restricted: number }).restricted === 1;
    const read = s.statement(DUE_IDS[queues === null ? "all" : "some"][restricted ? 1 : 0]);
    const names = request.names == null ? null : JSON.stringify(request.names);
    const versions = versionsParam(request);
    const params: Record<string, unknown> = { now, limit, names, versions };
    if (queues !== null) params.queues = queues;
    // Jobs with a concurrency key (sql.ts keyedDueIdsStatement): after the others, or first on
    // every other claim of this connection, so neither kind starves the other.
    const keyedRead = s.statement(queues === null ? "keyedDueIds" : "keyedDueIdsInQueues").pluck();
    const turn = (keyedTurns.get(s) ?? 0) + 1;
    keyedTurns.set(s, turn);
    // After a read without a key that found nothing (a backlog of keyed jobs only: that read goes
    // past every queued keyed row), keyed jobs go first on every claim, and that read runs on
    // every DRY_ORDINARY_EVERY-th claim at least.
    const ordinary = ordinaryReads.get(s) ?? { dry: false, without: 0 };
    ordinaryReads.set(s, ordinary);
    // No keyed job queued (keyedJobQueued, asked once): the claim runs no keyed read at all.
    let keyedQueued: boolean | undefined;
    const anyKeyed = () => {
      keyedQueued ??= keyedJobQueued(s);
      return keyedQueued;
    };
    const keyedFirst =
      ordinary.without < DRY_ORDINARY_EVERY - 1 && (turn % 2 === 0 || ordinary.dry) && anyKeyed();
    const ids = keyedFirst ? keyedRotation(s, params, limit, keyedRead) : [];
    // The keyed reads count processing rows and recorded starts, which this claim's own picks
    // are not yet: after one keyed read took jobs, no other keyed read runs in this claim, so a
    // key spanning a limited queue and another queue is never admitted twice on the same count.
    let keyedTook = ids.length > 0;
    if (ids.length < limit) {
      // After a read without a key that found nothing: while every queued row has a key (two
      // counts of index entries, sql.ts allQueuedKeyed, against a read that parses the meta of
      // every queued keyed row it goes past), it would find nothing again, so it is not run.
      const skip =
        ordinary.dry &&
        (s.statement("allQueuedKeyed").get() as { allKeyed: number }).allKeyed === 1;
      const plain = skip
        ? []
        : (read.pluck().all({ ...params, limit: limit - ids.length }) as string[]);
      ids.push(...plain);
      ordinary.dry = plain.length === 0;
      ordinary.without = 0;
    } else {
      ordinary.without += 1;
    }
    if (restricted) {
      // Queues with a max_running: at most their room, counted inside this same transaction.
      const dueInQueue = s.statement("dueIdsInLimitedQueue").pluck();
      const limited = s.statement("limitedQueues").all({ queues }) as Array<{
        name: string;
        maxRunning: number;
        processing: number;
      }>;
      const keyedInQueue = s.statement("keyedDueIdsInLimitedQueue").pluck();
      for (const { name, ...load } of limited) {
        const room = limitedRoom({ ...load, wanted: limit - ids.length });
        if (room > 0) {
          const taken = dueInQueue.all({ now, limit: room, queue: name, names, versions });
          ids.push(...(taken as string[]));
          // Keyed jobs of this queue, within the room left (docs/flow-control.md).
          if (taken.length < room && !keyedTook && anyKeyed()) {
            const more = { now, limit: room - taken.length, queue: name, names, versions };
            const keyed = keyedInQueue.all(more) as string[];
            ids.push(...keyed);
            if (keyed.length > 0) keyedTook = true;
          }
        }
      }
    }
    if (!keyedFirst && !keyedTook && ids.length < limit && anyKeyed()) {
      ids.push(...keyedRotation(s, params, limit - ids.length, keyedRead));
    }
    if (seen?.rate === true && ids.length < limit) {
      // Rate-limited jobs may be held by full windows: when the first opens, read at this
      // claim's `now` so the answer matches what the claim saw.
      const next = s.statement("nextRateWindow").get({ now }) as { ms: number | null };
      seen.nextMs = next.ms;
    }
    if (ids.length === 0) return [];
    const rows = s.statement("claimByIds").all({
      ids: JSON.stringify(ids),
      now,
      workerId: request.workerId,
      startKnown: request.deferStart === true ? 0 : 1,
    }) as ClaimedRecord[];
    if (rows.some((row) => row.meta?.includes('"rate"') === true)) {
      // Rate-limited jobs among them: their starts count against their keys' windows.
      const charged = JSON.stringify(rows.map((row) => row.id));
      s.statement("chargeRateStarts").run({ ids: charged, now });
      s.statement("pruneRateStarts").run({ now });
      if (seen) seen.rate = true;
    }
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

/** A row a finishing move returns (sql.ts `finishMove`, `finishDrop`). */
interface FinishedRecord extends CountedRow {
  dedup_key: string | null;
  /** Absent after a drop (retention 0). */
  result_expires_at?: number;
  /** Only the statements that return it (`cancelOwned…`). */
  attempts?: number;
}

/** The pair of statements of one finishing write: kept (`move`) or, with retention 0, deleted. */
export interface FinishStatements {
  move: StatementName;
  drop: StatementName;
  /** The status the job finishes with (what it is counted as). */
  status: "done" | "cancelled";
}

/**
 * One finishing write (docs/backends.md, "Two tables: live jobs and finished jobs"), inside the
 * caller's transaction: with a positive retention the job is copied into `soniq_finished_jobs`
 * (`statements.move`), its live row deleted and its dedup key held until `result_expires_at`;
 * with a retention of 0 (or less) the live row is deleted (`statements.drop`) and its key
 * released. `params` carries the statement's fence (and `@id`).
 * @returns The moved row's `dedup_key` (and `attempts` when the statement returns it), or
 * `undefined` when nothing matched (a refused fence moves nothing).
 */
export function finishJob(
  s: SqliteSession,
  statements: FinishStatements,
  params: { id: string } & Record<string, unknown>,
  retentionMs: number,
): FinishedRecord | undefined {
  const id = params.id;
  if (retentionMs > 0 || awaited(s, id)) {
    const row = s.statement(statements.move).get({
      ...params,
      retentionMs: Math.max(retentionMs, 0),
    }) as FinishedRecord | undefined;
    if (row === undefined) return undefined;
    s.statement("deleteJob").run({ id });
    if (row.dedup_key !== null) {
      const heldUntil = row.result_expires_at;
      s.statement("holdDedupKey").run({ dedupKey: row.dedup_key, id, heldUntil });
    }
    countOne(s, row, statements.status);
    return row;
  }
  const row = s.statement(statements.drop).get(params) as FinishedRecord | undefined;
  if (row === undefined) return undefined;
  if (row.dedup_key !== null) s.statement("releaseDedupKey").run({ dedupKey: row.dedup_key, id });
  const tally = new FinishedTally();
  tally.add(row, statements.status);
  tally.add(row, `${statements.status}_gone`);
  tally.write(s);
  return row;
}

/**
 * Whether another job waits for job `id` (an edge in `soniq_job_deps`, migration 015): such a job
 * is kept as finished even with a retention of 0 (expiring at once), so the trigger on
 * `soniq_finished_jobs` reads how it ended.
 */
function awaited(s: SqliteSession, id: string): boolean {
  return s.statement("flowAwaited").get({ id }) !== undefined;
}

/** A job's success ({@link finishJob}): `completeMove` / `completeDrop`, fenced on the owner. */
export const COMPLETE: FinishStatements = {
  move: "completeMove",
  drop: "completeDrop",
  status: "done",
};

/** The cancel of a queued job by id ({@link finishJob}): `cancelQueuedMove` / `cancelQueuedDrop`. */
export const CANCEL_QUEUED: FinishStatements = {
  move: "cancelQueuedMove",
  drop: "cancelQueuedDrop",
  status: "cancelled",
};

/** The owner's cancel of its running job ({@link finishJob}), fenced: `cancelOwned…`. */
export const CANCEL_OWNED: FinishStatements = {
  move: "cancelOwnedMove",
  drop: "cancelOwnedDrop",
  status: "cancelled",
};

/**
 * Completes each item, fenced on its own, in one transaction: `done`, moved to
 * `soniq_finished_jobs` with `result_expires_at = now + retention` (each item's own
 * `resultRetentionSeconds`, else `retentionSeconds`), or deleted when that retention is 0; its
 * dedup key held until then (or released). The statements are those of {@link finishJob},
 * prepared once for the batch.
 * @returns `moved`: per item, in input order, whether its row moved; `released`: the queues of
 *   the jobs that waited for the items and were released by their ends (to wake in this process).
 */
export function completeAll(
  s: SqliteSession,
  items: readonly CompletionItem[],
  retentionSeconds: number,
): { moved: boolean[]; released: string[] } {
  const move = s.statement("completeMove");
  const drop = s.statement("completeDrop");
  const remove = s.statement("deleteJob");
  const batchRetentionMs = secondsToMs(retentionSeconds);
  const tally = new FinishedTally();
  return s.immediate(() => {
    // The flow triggers skip these moves; settleCompleted does their work once for all of them.
    s.statement("flowGroupingOn").run();
    const kept: string[] = [];
    const moved = items.map((item) => {
      const id = item.id;
      const params = { id, ...fence(item.owner), result: item.result };
      const retentionMs =
        item.resultRetentionSeconds === undefined
          ? batchRetentionMs
          : secondsToMs(item.resultRetentionSeconds);
      if (retentionMs > 0 || awaited(s, id)) {
        const row = move.get({ ...params, retentionMs: Math.max(retentionMs, 0) }) as
          | FinishedRecord
          | undefined;
        if (row === undefined) return false;
        remove.run({ id });
        kept.push(id);
        if (row.dedup_key !== null) {
          const heldUntil = row.result_expires_at;
          s.statement("holdDedupKey").run({ dedupKey: row.dedup_key, id, heldUntil });
        }
        tally.add(row, "done");
        return true;
      }
      const row = drop.get(params) as FinishedRecord | undefined;
      if (row === undefined) return false;
      if (row.dedup_key !== null) {
        s.statement("releaseDedupKey").run({ dedupKey: row.dedup_key, id });
      }
      tally.add(row, "done");
      tally.add(row, "done_gone");
      return true;
    });
    const released = settleCompleted(s, kept);
    tally.write(s);
    return { moved, released };
  });
}

/**
 * The flow work of jobs just moved to `soniq_finished_jobs` as `done` while the grouping row of
 * migration 019 was held (`flowGroupingOn`, which the caller ran before the moves), set-based
 * instead of by row triggers per job: each batch counts its members among `ids` down once, flow
 * roots among them end, their open edges end `done` in one statement, the grouping row is
 * deleted, and each dependant's `pending` comes down once by the number of its edges that ended
 * (migration 018's trigger releases it at 0; what that release does in turn runs through the
 * triggers, the row being gone). The nodes are read grouped (a batch's members ending together
 * are one row), so a job with no node and no open edge costs two index probes and nothing more.
 * Inside the caller's transaction.
 * @returns The queues of the dependants this released (no longer waiting), for the wake-up.
 */
function settleCompleted(s: SqliteSession, ids: readonly string[]): string[] {
  if (ids.length === 0) {
    s.statement("flowGroupingOff").run();
    return [];
  }
  const json = JSON.stringify(ids);
  const nodes = s.statement("flowEndedNodes").all({ ids: json }) as Array<{
    role: string;
    flow_id: string | null;
    root: number | null;
    n: number;
  }>;
  const batches = new Map<string, number>();
  const roots = new Set<string>();
  for (const node of nodes) {
    if (node.flow_id === null) continue;
    if (node.role === "member") batches.set(node.flow_id, node.n);
    else if (node.role === "job" && node.root === 1) roots.add(node.flow_id);
  }
  if (batches.size > 0) {
    s.statement("flowBatchesCountDown").run({ counts: byKey(batches) });
  }
  if (roots.size > 0) {
    // In the order the jobs were given, as the triggers of the other finishing paths append.
    const ordered = ids.filter((id) => roots.has(id));
    s.statement("flowRootsDone").run({ ids: JSON.stringify(ordered) });
  }
  const ended = s.statement("flowEdgesDone").pluck().all({ ids: json }) as string[];
  s.statement("flowGroupingOff").run();
  if (ended.length === 0) return [];
  const dependants = new Map<string, number>();
  for (const id of ended) dependants.set(id, (dependants.get(id) ?? 0) + 1);
  const counts = byKey(dependants);
  s.statement("flowDependantsCountDown").run({ counts });
  return s.statement("flowReleasedDependants").pluck().all({ counts }) as string[];
}

/** `counts` as a JSON object, its keys in ascending order (the order the updates take). */
function byKey(counts: ReadonlyMap<string, number>): string {
  const out: Record<string, number> = {};
  for (const key of [...counts.keys()].sort()) out[key] = counts.get(key) ?? 0;
  return JSON.stringify(out);
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
 * Moves the job `owner` holds into `soniq_dead_letter_jobs` (same id, in exactly one table),
 * releases its dedup key and counts the move (`dead`).
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
    const row = move.get({ ...params, now: s.nowMs() }) as
      | { dedup_key: string | null; queue: string }
      | undefined;
    if (row === undefined) return false;
    remove.run({ id });
    releaseKey(s, row.dedup_key, id);
    countOutcome(s, row.queue, "dead");
    return true;
  });
}

/** Releases `dedupKey` (when not null) if job `id` holds it, inside the caller's transaction. */
export function releaseKey(s: SqliteSession, dedupKey: string | null, id: string): void {
  if (dedupKey !== null) s.statement("releaseDedupKey").run({ dedupKey, id });
}

/**
 * Moves dead-letter entry `id` back to `soniq_jobs` (see the `replay` statement); the job takes
 * its dedup key again.
 * @returns The job's queue, or `undefined` when there is no such entry.
 * @throws SoniqError `DEDUP_CONFLICT` when another job holds the entry's dedup key (nothing
 * changes).
 */
export function replayEntry(s: SqliteSession, id: string): string | undefined {
  const find = s.statement("deadLetterEntry");
  const restore = s.statement("replay");
  const remove = s.statement("deleteDeadLetter");
  return s.immediate(() => {
    const entry = find.get({ id }) as { queue: string; dedup_key: string | null } | undefined;
    if (!entry) return undefined;
    const now = s.nowMs();
    if (entry.dedup_key !== null) {
      const holder = takeDedupKey(s, entry.dedup_key, id, now);
      if (holder !== undefined) {
        throw new SoniqError(
          "DEDUP_CONFLICT",
          `job ${holder} already holds dedup key ${JSON.stringify(entry.dedup_key)}`,
          { details: { id, holder, dedupKey: entry.dedup_key } },
        );
      }
    }
    restore.run({ id, now });
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
      if (d.kind === "cancel") {
        if (finishJob(s, CANCEL_STALE, row, retentionMs) === undefined) continue;
      } else if (d.kind === "requeue") {
        if (requeue.run({ ...row, charge: job.charged ? 1 : 0 }).changes === 0) continue;
      } else {
        const buried = bury.get({ ...row, error: d.error, reason: d.reason }) as
          | { dedup_key: string | null; queue: string }
          | undefined;
        if (buried === undefined) continue;
        remove.run({ id });
        releaseKey(s, buried.dedup_key, id);
        countOutcome(s, buried.queue, "dead");
      }
      changed.add(id);
    }
    return recoveryResult(decisions, changed);
  });
}

/** Crash recovery's cancel ({@link finishJob}), fenced on the stale owner it read. */
const CANCEL_STALE: FinishStatements = {
  move: "cancelStaleMove",
  drop: "cancelStaleDrop",
  status: "cancelled",
};

/** A row of the `staleClaims` statement: a {@link StaleClaim} with 0/1 for its booleans. */
type StaleRecord = Omit<StaleClaim, "startKnown" | "cancelRequested"> & {
  startKnown: number;
  cancelRequested: number;
};
