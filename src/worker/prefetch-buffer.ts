/**
 * The prefetch window (docs/shutdown.md, "The claimed-not-yet-running window"): a FIFO of jobs the
 * worker claimed beyond its free slots, so a slot that frees takes its next job without waiting for
 * a claim. Buffered rows are claimed, not yet running: `processing` and owned by the worker, never
 * started, and never charged an interruption by crash recovery (a worker's claim leaves
 * `start_known` false).
 *
 * - **Size**: the target follows the worker's own pace,
 *   `floor(start rate × max(2 × claim time, BATCH_WINDOW_MS))`, capped by the `prefetch` setting:
 *   two claim round trips' worth of starts, and at least {@link BATCH_WINDOW_MS} of them, so a
 *   busy worker claims in batches large enough to spread each statement's fixed cost (its round
 *   trip and its commit's flush) over many jobs. When jobs start rarely (long jobs, a quiet
 *   queue) the target is 0 and the worker claims only for its free slots, as without prefetch.
 *   The start rate is an exponentially decaying count of starts ({@link RATE_WINDOW_MS}), dropped
 *   to 0 when a buffered row outlives its TTL; the claim time an average of the last claims'
 *   round trips.
 * - **Refill** at the low-water mark: once fewer than half the target are buffered, the next claim
 *   asks for the free slots plus what the buffer lacks ({@link PrefetchBuffer.room}).
 * - **TTL**: a row may be started only within `ttlMs` of the moment its claim was sent, checked
 *   with a fresh clock right before it starts ({@link PrefetchBuffer.take}); an older row is set
 *   aside to be NACK'd ({@link PrefetchBuffer.takeExpired}). The TTL is well inside the heartbeat
 *   stale window ({@link prefetchTtlMs}), so a worker frozen long enough to be presumed dead never
 *   starts a buffered row that recovery may have handed to another worker.
 * - **Close** at drain start: {@link PrefetchBuffer.close} hands every buffered row back (to be
 *   NACK'd in one statement) and refuses later offers.
 *
 * Entry point for rows claimed elsewhere (hand-off at enqueue): {@link PrefetchBuffer.offer}.
 */
import type { ClaimedJob } from "../backends/contract/index.js";

/**
 * Least span of starts the target covers, in milliseconds: at 5,000 starts a second a claim
 * takes about 250 rows, not the handful two fast round trips would ask for.
 */
export const BATCH_WINDOW_MS = 50;
/** Time constant of the start-rate estimate, in milliseconds. */
export const RATE_WINDOW_MS = 500;
/** Longest TTL of a buffered row, in milliseconds. */
export const PREFETCH_TTL_CAP_MS = 2000;
/** Weight of the newest claim time in the running average. */
const LATENCY_WEIGHT = 0.3;

/**
 * The TTL of a buffered row, in milliseconds: `min(2 s, (heartbeatTimeout − heartbeatInterval) / 2)`.
 * A worker's rows are recovered only once its last heartbeat is older than `heartbeatTimeout`;
 * while it runs, its last heartbeat is at most `heartbeatInterval` old, so a row claimed at `t`
 * cannot be recovered before `t − heartbeatInterval + heartbeatTimeout`. Starting it no later
 * than `t + ttl` keeps half of that margin in hand (2 s against 25 s with the defaults).
 * @param heartbeatIntervalSeconds - seconds between heartbeats.
 * @param heartbeatTimeoutSeconds - seconds without a heartbeat before a worker is not live.
 */
export function prefetchTtlMs(
  heartbeatIntervalSeconds: number,
  heartbeatTimeoutSeconds: number,
): number {
  const margin = ((heartbeatTimeoutSeconds - heartbeatIntervalSeconds) * 1000) / 2;
  return Math.max(0, Math.min(PREFETCH_TTL_CAP_MS, margin));
}

/** Options of {@link PrefetchBuffer}. */
export interface PrefetchBufferOptions {
  /** The `prefetch` setting: most rows buffered (0 = off: nothing is ever buffered). */
  max: number;
  /** Milliseconds from a claim's sending within which its buffered rows may start. */
  ttlMs: number;
  /** A fresh clock, in milliseconds (read at every check). */
  now(): number;
}

interface Buffered {
  job: ClaimedJob;
  /** When the claim that took the row was sent (ms, {@link PrefetchBufferOptions.now}). */
  claimedAt: number;
}

/** See the module comment. */
export class PrefetchBuffer {
  private readonly rows: Buffered[] = [];
  private head = 0;
  private readonly expired: ClaimedJob[] = [];
  private closed = false;
  private rate = 0;
  private rateAt = 0;
  private latencyMs: number | undefined;

  constructor(private readonly options: PrefetchBufferOptions) {}

  /** Rows buffered now. */
  get size(): number {
    return this.rows.length - this.head;
  }

  /** True once {@link close} was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** True when `jobId` is buffered (or set aside as expired and not yet taken). */
  has(jobId: string): boolean {
    for (let i = this.head; i < this.rows.length; i += 1) {
      if (this.rows[i]?.job.id === jobId) return true;
    }
    return this.expired.some((job) => job.id === jobId);
  }

  /**
   * Records starts, for the start rate (every job the worker starts, buffered or not).
   * @param count - jobs started now.
   */
  noteStarts(count: number): void {
    const now = this.options.now();
    this.rate = this.rateNow(now) + count / RATE_WINDOW_MS;
    this.rateAt = now;
  }

  /** Records a claim's round trip, in milliseconds. */
  noteClaim(latencyMs: number): void {
    const sample = Math.max(0, latencyMs);
    this.latencyMs =
      this.latencyMs === undefined
        ? sample
        : this.latencyMs + LATENCY_WEIGHT * (sample - this.latencyMs);
  }

  /** Starts per millisecond now (decayed since the last start). */
  private rateNow(now: number): number {
    if (this.rate === 0) return 0;
    return this.rate * Math.exp(-Math.max(0, now - this.rateAt) / RATE_WINDOW_MS);
  }

  /**
   * The target size now: `floor(start rate × max(2 × claim time, BATCH_WINDOW_MS))`, capped by
   * `max`; 0 before the first claim was timed, and while claims take longer than half the TTL
   * (rows would expire before they could start).
   */
  target(): number {
    const { max, ttlMs } = this.options;
    if (max <= 0 || this.closed || this.latencyMs === undefined) return 0;
    if (this.latencyMs * 2 > ttlMs) return 0;
    const span = Math.max(2 * this.latencyMs, BATCH_WINDOW_MS);
    const wanted = Math.floor(this.rateNow(this.options.now()) * span);
    return Math.min(max, wanted);
  }

  /**
   * Rows the next claim should take for the buffer: what it lacks of the target once it has
   * fallen under half of it (the low-water mark), else 0.
   */
  room(): number {
    const target = this.target();
    const size = this.size;
    return size * 2 < target ? target - size : 0;
  }

  /**
   * Adds claimed rows at the back (claim order kept). Entry point for every path that holds
   * claimed, unstarted rows of this worker.
   * @param jobs - rows claimed by this worker and not started.
   * @param claimedAt - when their claim was sent ({@link PrefetchBufferOptions.now}'s clock).
   * @returns The rows refused because the buffer is closed (draining): the caller NACKs them.
   */
  offer(jobs: readonly ClaimedJob[], claimedAt: number): ClaimedJob[] {
    if (this.closed) return [...jobs];
    for (const job of jobs) this.rows.push({ job, claimedAt });
    return [];
  }

  /**
   * The next row to start, or undefined when none is left. Rows past their TTL (fresh clock) are
   * set aside for {@link takeExpired} instead of being returned.
   */
  take(): ClaimedJob | undefined {
    const now = this.options.now();
    while (this.head < this.rows.length) {
      const next = this.rows[this.head] as Buffered;
      this.head += 1;
      if (now - next.claimedAt > this.options.ttlMs) {
        this.expire(next.job);
        continue;
      }
      this.compact();
      return next.job;
    }
    this.compact();
    return undefined;
  }

  /** Sets aside every row past its TTL now (a parked row is returned without waiting for a slot). */
  sweep(): void {
    const now = this.options.now();
    while (this.head < this.rows.length) {
      const next = this.rows[this.head] as Buffered;
      if (now - next.claimedAt <= this.options.ttlMs) break;
      this.head += 1;
      this.expire(next.job);
    }
    this.compact();
  }

  /**
   * Sets a row aside past its TTL. Starts did not keep up with the buffer, so the rate estimate
   * is dropped: the target stays 0 until jobs start again (no cycle of parked rows).
   */
  private expire(job: ClaimedJob): void {
    this.expired.push(job);
    this.rate = 0;
  }

  /** Milliseconds until the oldest buffered row's TTL ends (undefined when empty). */
  msUntilExpiry(): number | undefined {
    const oldest = this.rows[this.head];
    if (!oldest) return undefined;
    return Math.max(0, oldest.claimedAt + this.options.ttlMs - this.options.now());
  }

  /** The rows set aside past their TTL (each returned once): the caller NACKs them. */
  takeExpired(): ClaimedJob[] {
    return this.expired.splice(0);
  }

  /** Removes `jobId` (an operator cancelled it); its row when it was buffered. */
  remove(jobId: string): ClaimedJob | undefined {
    for (let i = this.head; i < this.rows.length; i += 1) {
      const row = this.rows[i] as Buffered;
      if (row.job.id !== jobId) continue;
      this.rows.splice(i, 1);
      return row.job;
    }
    return undefined;
  }

  /**
   * Closes the buffer (drain start): returns every row still buffered or set aside, in claim
   * order, and refuses later offers. Idempotent (later calls return nothing).
   */
  close(): ClaimedJob[] {
    this.closed = true;
    const rest = this.rows.slice(this.head).map((row) => row.job);
    this.rows.length = 0;
    this.head = 0;
    return [...this.takeExpired(), ...rest];
  }

  /** Drops taken rows from the front once they are many (amortised O(1) takes). */
  private compact(): void {
    if (this.head === this.rows.length) {
      this.rows.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.rows.length) {
      this.rows.splice(0, this.head);
      this.head = 0;
    }
  }
}
