/**
 * The PostgreSQL batch enqueue: one INSERT for the whole batch (optionally on the caller's
 * client, inside its transaction; a single job through a plain `INSERT … VALUES`), dedup within the batch and against the table, and the
 * look-up of holders that committed after the insert's snapshot.
 */
import { SoniqError } from "../../errors.js";
import type { EnqueueResult, NewJob, PgQueryable } from "../contract/index.js";
import type { PgJobStoreDeps } from "./connection.js";
import { enqueueHandedOff } from "./hand-off-enqueue.js";

/** How often enqueue re-tries jobs whose dedup holder vanished under it (pruned, rolled back). */
const ENQUEUE_ATTEMPTS = 3;

/** A `bool` column read through a client that may use non-default type parsers. */
function truthy(value: unknown): boolean {
  return value === true || value === "t" || value === "true";
}

/**
 * One statement (one round trip) on `connection` when given — inside the caller's
 * transaction, so the jobs exist iff the caller commits; the NOTIFY then fires at commit —
 * else on the pool. A second query runs only when a dedup holder committed concurrently and is
 * not yet visible to the insert's snapshot. A pool enqueue of one job due now may be handed off
 * to an idle worker of this process instead (hand-off-enqueue.ts). Implements `JobStore.jobEnqueue`.
 * @throws Driver errors (e.g. a duplicate job id).
 */
export async function enqueueBatch(
  deps: PgJobStoreDeps,
  jobs: readonly NewJob[],
  via: PgQueryable | undefined,
): Promise<EnqueueResult[]> {
  deps.conn.assertOpen();
  if (jobs.length === 0) return [];
  // One job on the pool: an idle worker of this process may take it in the same statement.
  const offer = via ? undefined : deps.handOff?.desk.reserveFor(jobs);
  if (offer && deps.handOff) {
    const handed = await enqueueHandedOff(deps, deps.handOff, offer.job, offer.reservation);
    if (handed) return [handed];
  }
  const unique: NewJob[] = [];
  const slotOf: number[] = [];
  const isFirst: boolean[] = [];
  const slotByKey = new Map<string, number>();
  for (const job of jobs) {
    const seen = job.dedupKey === null ? undefined : slotByKey.get(job.dedupKey);
    if (seen !== undefined) {
      slotOf.push(seen);
      isFirst.push(false);
      continue;
    }
    if (job.dedupKey !== null) slotByKey.set(job.dedupKey, unique.length);
    slotOf.push(unique.length);
    isFirst.push(true);
    unique.push(job);
  }
  const results = await insertUnique(deps, unique, via);
  return slotOf.map((slot, i) => {
    const result = results[slot];
    if (!result) throw new Error(`enqueue lost the result of job ${i}`);
    return isFirst[i] ? result : { id: result.id, inserted: false };
  });
}

/**
 * The statement and values that insert `batch`: `enqueueOne` (plain `INSERT … VALUES`) for one
 * job, `enqueue` (`unnest` of arrays) for more. Both answer one row per job, in order.
 */
function insertStatement(deps: PgJobStoreDeps, batch: readonly NewJob[]): [string, unknown[]] {
  const one = batch.length === 1 ? batch[0] : undefined;
  if (one) {
    return [
      deps.sql.enqueueOne,
      [
        one.id,
        one.name,
        one.queue,
        one.args,
        one.priority,
        one.maxAttempts,
        one.runAt ? one.runAt.toISOString() : null,
        one.delaySeconds,
        one.dedupKey,
        one.meta ?? null,
        one.traceContext ?? null,
        one.version ?? 1,
      ],
    ];
  }
  return [
    deps.sql.enqueue,
    [
      batch.map((j) => j.id),
      batch.map((j) => j.name),
      batch.map((j) => j.queue),
      batch.map((j) => j.args),
      batch.map((j) => j.priority),
      batch.map((j) => j.maxAttempts),
      batch.map((j) => (j.runAt ? j.runAt.toISOString() : null)),
      batch.map((j) => j.delaySeconds),
      batch.map((j) => j.dedupKey),
      batch.map((j) => j.meta ?? null),
      batch.map((j) => j.traceContext ?? null),
      batch.map((j) => j.version ?? 1),
    ],
  ];
}

/** One row of the enqueue statements' answer. */
interface EnqueueRow {
  id: string;
  inserted: unknown;
  due: unknown;
  holder_id: string | null;
}

/**
 * Whether `err` is the live table's dedup index refusing a row: a live job inserted by a process
 * of the previous version (which did not record its key in `soniq_dedup_keys`) holds the key.
 */
function heldByEarlierVersion(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === "23505" && e.constraint === "soniq_jobs_dedup_key_idx";
}

/** {@link insertStatement} for one job on the pool; a key a live job holds answers that job. */
async function insertAlone(deps: PgJobStoreDeps, job: NewJob): Promise<EnqueueRow> {
  try {
    const { rows } = await deps.conn.run<EnqueueRow>(...insertStatement(deps, [job]));
    return rows[0] as EnqueueRow;
  } catch (err) {
    if (!heldByEarlierVersion(err)) throw err;
    const { rows } = await deps.conn.run<{ id: string }>(deps.sql.liveHolder, [job.dedupKey]);
    return { id: job.id, inserted: false, due: false, holder_id: rows[0]?.id ?? null };
  }
}

/** Inserts jobs whose dedup keys are distinct; results aligned with `jobs`. */
async function insertUnique(
  deps: PgJobStoreDeps,
  jobs: readonly NewJob[],
  via: PgQueryable | undefined,
): Promise<EnqueueResult[]> {
  const results: Array<EnqueueResult | undefined> = new Array(jobs.length);
  let pending = jobs.map((_, i) => i);
  for (let attempt = 0; attempt < ENQUEUE_ATTEMPTS && pending.length > 0; attempt += 1) {
    const batch = pending.map((i) => jobs[i] as NewJob);
    let rows: EnqueueRow[];
    try {
      rows = (await deps.conn.run<EnqueueRow>(...insertStatement(deps, batch), via)).rows;
    } catch (err) {
      if (!heldByEarlierVersion(err)) throw err;
      if (via) {
        throw new SoniqError(
          "DEDUP_CONFLICT",
          "a queued or running job enqueued by an earlier version of soniq holds a dedup key of this batch (nothing was inserted)",
          { cause: err },
        );
      }
      // Rare (an upgrade in progress): one job per statement, each answered on its own.
      rows = [];
      for (const job of batch) rows.push(await insertAlone(deps, job));
    }
    const unresolved: number[] = [];
    const woken = new Set<string>();
    rows.forEach((row, k) => {
      const index = pending[k] as number;
      // On the pool the row is committed now: wake this process's workers without waiting for
      // the NOTIFY round trip (in a caller's transaction the NOTIFY at its commit does it).
      const queue = jobs[index]?.queue;
      if (!via && truthy(row.due) && queue !== undefined && !woken.has(queue)) {
        woken.add(queue);
        deps.wake(queue);
      }
      if (truthy(row.inserted)) results[index] = { id: row.id, inserted: true };
      else if (row.holder_id !== null) results[index] = { id: row.holder_id, inserted: false };
      else unresolved.push(index);
    });
    if (unresolved.length === 0) break;
    // The holder committed after this statement's snapshot: look it up with a fresh one.
    const keys = unresolved.map((i) => jobs[i]?.dedupKey);
    const found = await deps.conn.run<{ id: string; dedup_key: string }>(
      deps.sql.holders,
      [keys],
      via,
    );
    const holderByKey = new Map(found.rows.map((row) => [row.dedup_key, row.id]));
    pending = [];
    for (const index of unresolved) {
      const holder = holderByKey.get(jobs[index]?.dedupKey ?? "");
      if (holder !== undefined) results[index] = { id: holder, inserted: false };
      else pending.push(index); // The holder is gone meanwhile: try the insert again.
    }
  }
  return results.map((result, i) => {
    if (!result) {
      throw new Error(`enqueue of job ${jobs[i]?.id} kept racing a changing dedup holder`);
    }
    return result;
  });
}
