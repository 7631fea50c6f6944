/**
 * What flow-control limits hold back, per queue and key (docs/flow-control.md, "Seeing what a
 * limit holds back"), computed on read from the raw counts of `AdminStore.keyFlowList`: no
 * counter is kept, so nothing can drift. The rule mirrors the keyed claim's admission: a key's
 * due jobs beyond its free concurrency slots (its limit minus its processing jobs, every queue)
 * are held by concurrency; of the rest, those beyond its free starts (its rate limit minus its
 * starts in the window) are held by rate, and all of them while a handler paused the key
 * (`ctx.rateLimited(ms, { scope: "key" })`). A job is counted once, under concurrency first.
 */
import type { KeyFlowRow } from "../backends/contract/index.js";

/** One key's jobs in one queue and what its limits hold back. */
export interface KeyFlow {
  /** The queue. */
  queue: string;
  /** The concurrency/rate key. */
  key: string;
  /** `processing` jobs of the key, in every queue (what its concurrency limit counts). */
  running: number;
  /** Queued jobs of the key in this queue that are due now. */
  due: number;
  /** The key's concurrency limit (the smallest of its jobs here); null: none. */
  concurrencyLimit: number | null;
  /** The key's rate limit, starts per window (the smallest of its jobs here); null: none. */
  rateLimit: number | null;
  /** Starts of the key inside their rate-limit window. */
  startsInWindow: number;
  /** Due jobs that cannot start now because the key runs `concurrencyLimit` jobs. */
  heldByConcurrency: number;
  /** Due jobs that cannot start now because of the rate limit or a handler's pause of the key. */
  heldByRate: number;
  /**
   * When the first job held by rate may start: the earliest start leaving its window, or the
   * key's pause ending, whichever is later (database clock); null when none is held by rate.
   */
  nextWindowAt: Date | null;
  /** When a handler's pause of the key ends (database clock); null: not paused. */
  pausedUntil: Date | null;
}

/** One queue's keyed jobs: totals and its top keys. */
export interface QueueFlow {
  /** The queue. */
  queue: string;
  /** Keys with queued or processing jobs in the queue. */
  keys: number;
  /** Sum of {@link KeyFlow.heldByConcurrency} over the queue's keys. */
  heldByConcurrency: number;
  /** Sum of {@link KeyFlow.heldByRate} over the queue's keys. */
  heldByRate: number;
  /** The earliest {@link KeyFlow.nextWindowAt} of the queue's keys; null: none held by rate. */
  nextWindowAt: Date | null;
  /** Its keys with the most running jobs first, then the most held, then by key. */
  topKeys: KeyFlow[];
}

/** The held counts of one row (see the module comment). */
export function keyFlowOf(row: KeyFlowRow): KeyFlow {
  const freeSlots =
    row.concurrencyLimit === null
      ? Number.POSITIVE_INFINITY
      : Math.max(0, row.concurrencyLimit - row.running);
  const heldByConcurrency = Math.max(0, row.due - freeSlots);
  const admissible = row.due - heldByConcurrency;
  const full = row.rateLimit !== null && row.startsInWindow >= row.rateLimit;
  const heldByRate =
    row.pausedUntil !== null
      ? admissible
      : row.rateLimit === null
        ? 0
        : Math.max(0, admissible - Math.max(0, row.rateLimit - row.startsInWindow));
  let nextWindowAt: Date | null = null;
  if (heldByRate > 0) {
    const windowAt = full || row.pausedUntil === null ? row.firstStartExpiresAt : null;
    const times = [windowAt, row.pausedUntil].filter((t): t is Date => t !== null);
    nextWindowAt = times.length === 0 ? null : new Date(Math.max(...times.map((t) => t.getTime())));
  }
  return {
    queue: row.queue,
    key: row.key,
    running: row.running,
    due: row.due,
    concurrencyLimit: row.concurrencyLimit,
    rateLimit: row.rateLimit,
    startsInWindow: row.startsInWindow,
    heldByConcurrency,
    heldByRate,
    nextWindowAt,
    pausedUntil: row.pausedUntil,
  };
}

/** The order of {@link QueueFlow.topKeys}: most running, then most held, then by key. */
export function compareKeyFlow(a: KeyFlow, b: KeyFlow): number {
  return (
    b.running - a.running ||
    b.heldByConcurrency + b.heldByRate - (a.heldByConcurrency + a.heldByRate) ||
    b.due - a.due ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
  );
}

/**
 * Groups rows by queue (queues by name) with each queue's totals and its first `topKeys` keys.
 * @param topKeys - keys listed per queue (>= 0).
 */
export function queueFlows(rows: readonly KeyFlowRow[], topKeys: number): QueueFlow[] {
  const byQueue = new Map<string, KeyFlow[]>();
  for (const row of rows) {
    const list = byQueue.get(row.queue) ?? [];
    list.push(keyFlowOf(row));
    byQueue.set(row.queue, list);
  }
  return [...byQueue.keys()].sort().map((queue) => {
    const keys = (byQueue.get(queue) ?? []).sort(compareKeyFlow);
    const next = keys
      .map((k) => k.nextWindowAt)
      .filter((t): t is Date => t !== null)
      .sort((a, b) => a.getTime() - b.getTime())[0];
    return {
      queue,
      keys: keys.length,
      heldByConcurrency: keys.reduce((sum, k) => sum + k.heldByConcurrency, 0),
      heldByRate: keys.reduce((sum, k) => sum + k.heldByRate, 0),
      nextWindowAt: next ?? null,
      topKeys: keys.slice(0, topKeys),
    };
  });
}
