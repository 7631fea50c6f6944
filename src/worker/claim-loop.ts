/**
 * The producer, as a service: claims jobs for the worker's free slots plus its prefetch window
 * (prefetch-buffer.ts), hands each to the job runner as a slot frees — from the buffer first, at
 * once, even while a claim is in flight — and sleeps on the {@link WakeLatch} (a notification, a
 * freed slot, the poll interval, a buffered row's TTL or the stop, whichever comes first). One
 * claim is in flight at a time; with a buffer it is issued at the low-water mark. A claim is
 * bounded by {@link DB_CALL_TIMEOUT_MS}; rows a timed-out claim took after all are released;
 * failures back off (capped) and mark the worker's owned rows as suspect, for the heartbeat's
 * orphan release. At the stop (drain start) the buffer is NACK'd in one write; a claim answered
 * after it runs the rows its free slots asked for (asked for before the drain began, in-flight work
 * like any other, even when the database took them after it) and NACKs the rest in one write. The stop waits for those writes (bounded).
 */
import type { Backend, ClaimedJob } from "../backends/contract/index.js";
import { isSoniqError } from "../errors.js";
import { BaseService } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import type { InFlightTable } from "./in-flight.js";
import type { PrefetchBuffer } from "./prefetch-buffer.js";
import type { UnstartedReleaseReason } from "./release-unstarted.js";
import type { WakeLatch } from "./wake-latch.js";
import { DB_CALL_TIMEOUT_MS, withTimeout } from "./with-timeout.js";

/** Longest backoff after failed claims, in milliseconds. */
const CLAIM_BACKOFF_CAP_MS = 5000;

/**
 * Bound of the claim loop's `stop()`, in milliseconds: past one claim's own bound, so the drain
 * sees every job a claim in flight returns before it waits for the in-flight jobs.
 */
export const CLAIM_LOOP_STOP_BOUND_MS = DB_CALL_TIMEOUT_MS + 1000;

/** Options of {@link ClaimLoop}. */
export interface ClaimLoopOptions {
  backend: Backend;
  workerId: string;
  /** Queues to claim from; null = all. */
  queues: string[] | null;
  /**
   * The job names this worker has definitions for, read at each claim (definitions added after
   * the start count from the next claim): only jobs of these names are claimed. `null`: any name
   * (tests of the loop alone).
   */
  names(): readonly string[] | null;
  /**
   * Per entry of `names()`, in the same order, the highest job version this worker's definition
   * runs (read at each claim with `names()`): a job of a higher version waits for an upgraded
   * worker. `null` (or absent): any version.
   */
  versions?(): readonly number[] | null;
  /** Slots: jobs run at once. */
  concurrency: number;
  /** Seconds between polls when no notification comes. */
  pollIntervalSeconds: number;
  /** The claimed jobs and their slots. */
  table: InFlightTable;
  latch: WakeLatch;
  logger: Logger;
  /** Runs a claimed job (tracked in `table` by the callee). */
  dispatch(job: ClaimedJob): void;
  /** A timed-out claim's rows arrived after all: release them (tracked in `table` by the callee). */
  releaseLate(job: ClaimedJob): void;
  /**
   * The prefetch window; absent = off (claims only for free slots). Its rows are started by
   * {@link ClaimLoop.fillSlots}, closed and NACK'd at the stop.
   */
  prefetch?: PrefetchBuffer;
  /**
   * NACKs claimed, never-started rows in one write (release-unstarted.ts). Never rejects.
   * Required with `prefetch`; without it a claim answered after the stop is NACK'd through it
   * when given, else its rows are released one by one with `releaseLate`.
   */
  releaseUnstarted?(jobs: ClaimedJob[], reason: UnstartedReleaseReason): Promise<unknown>;
  /** Clock in milliseconds (claim timing and TTLs); default `Date.now`. */
  now?(): number;
  /**
   * The start TTL in milliseconds (prefetch-buffer.ts `prefetchTtlMs`): a claim answered longer
   * than this after it was sent (the worker was frozen, or the database stalled) starts none of
   * its rows — recovery may have handed them on meanwhile — and NACKs them all (`ttl`). Absent:
   * no such check.
   */
  startTtlMs?: number;
}

/** See the module comment. */
export class ClaimLoop extends BaseService {
  private claiming = false;
  private suspect = false;
  /** Aborts the claim in flight (FORCE_TIMEOUT_PATH: the drain waits for no claim past it). */
  private abandon: AbortController | undefined;
  private abandoned = false;
  /** NACKs of unstarted rows in flight (the stop waits for them). */
  private readonly releases = new Set<Promise<unknown>>();
  private fillQueued = false;
  private readonly now: () => number;

  constructor(private readonly options: ClaimLoopOptions) {
    super({ name: "claim-loop", logger: options.logger, stopBoundMs: CLAIM_LOOP_STOP_BOUND_MS });
    this.now = options.now ?? Date.now;
    // A freed slot takes its next job from the buffer in the same tick, claim in flight or not.
    if (options.prefetch) options.table.setSlotListener(() => this.scheduleFill());
  }

  /** Rows held in the prefetch buffer now (claimed, not started). */
  get buffered(): number {
    return this.options.prefetch?.size ?? 0;
  }

  /** True when `jobId` is held in the prefetch buffer (claimed, not started). */
  buffers(jobId: string): boolean {
    return this.options.prefetch?.has(jobId) ?? false;
  }

  /**
   * Takes `jobId` out of the prefetch buffer (an operator cancelled it before it started).
   * @returns The row when it was buffered.
   */
  unbuffer(jobId: string): ClaimedJob | undefined {
    return this.options.prefetch?.remove(jobId);
  }

  /**
   * Starts buffered jobs in the free slots (each checked against its TTL with a fresh clock right
   * before it starts; rows past it are NACK'd in one write instead). Nothing starts once the stop
   * was asked (the buffer is closed then).
   */
  fillSlots(): void {
    const buffer = this.options.prefetch;
    if (!buffer) return;
    let started = 0;
    while (buffer.size > 0 && this.options.concurrency - this.options.table.busySlots > 0) {
      const job = buffer.take();
      if (!job) break;
      this.options.dispatch(job);
      started += 1;
    }
    if (started > 0) buffer.noteStarts(started);
    buffer.sweep();
    this.release(buffer.takeExpired(), "ttl");
  }

  private scheduleFill(): void {
    if (this.fillQueued || (this.options.prefetch?.size ?? 0) === 0) return;
    this.fillQueued = true;
    queueMicrotask(() => {
      this.fillQueued = false;
      this.fillSlots();
    });
  }

  /** NACKs unstarted rows in one write, tracked so the stop waits for it. */
  private release(jobs: ClaimedJob[], reason: UnstartedReleaseReason): void {
    if (jobs.length === 0) return;
    const { releaseUnstarted } = this.options;
    if (!releaseUnstarted) {
      for (const job of jobs) this.options.releaseLate(job);
      return;
    }
    const write = releaseUnstarted(jobs, reason)
      .catch(() => undefined)
      .finally(() => this.releases.delete(write));
    this.releases.add(write);
  }

  /** Drain start: the buffer is closed and everything in it NACK'd in one write. */
  private closeBuffer(): void {
    const buffer = this.options.prefetch;
    if (buffer && !buffer.isClosed) this.release(buffer.close(), "drain");
  }

  /** True while a claim is waiting for its answer. */
  get claimInFlight(): boolean {
    return this.claiming;
  }

  /**
   * True once (then cleared) when a claim failed since the last call and no claim is in flight:
   * its answer may have been lost after the database took the rows.
   */
  takeOrphanSuspicion(): boolean {
    if (!this.suspect || this.claiming) return false;
    this.suspect = false;
    return true;
  }

  /**
   * Abandons the claim in flight, if any, and every later one (called at FORCE_TIMEOUT_PATH): the
   * backend is asked to cancel it (SQLite stops waiting for a busy file, nothing claimed;
   * PostgreSQL cancels the statement), the loop stops waiting for it at once, and rows it took
   * after all are released unstarted (`releaseLate`).
   */
  abandonClaim(): void {
    this.abandoned = true;
    this.abandon?.abort(new Error("claim abandoned at FORCE_TIMEOUT_PATH"));
  }

  protected async run(signal: AbortSignal): Promise<void> {
    const { backend, latch, table } = this.options;
    const buffer = this.options.prefetch;
    const pollMs = this.options.pollIntervalSeconds * 1000;
    const onStop = () => {
      this.closeBuffer();
      latch.wake();
    };
    signal.addEventListener("abort", onStop, { once: true });
    /** The poll interval, or sooner when a buffered row's TTL ends first. */
    const sleepMs = () => Math.min(pollMs, (buffer?.msUntilExpiry() ?? pollMs) + 1);
    let failures = 0;
    try {
      while (!signal.aborted) {
        this.fillSlots();
        const free = Math.max(0, this.options.concurrency - table.busySlots);
        const limit = free + (buffer?.room() ?? 0);
        if (limit <= 0) {
          await latch.wait(sleepMs());
          continue;
        }
        let jobs: ClaimedJob[];
        const abandon = new AbortController();
        if (this.abandoned) break;
        const sentAt = this.now();
        try {
          this.claiming = true;
          this.abandon = abandon;
          jobs = await withTimeout(
            backend.jobClaim({
              workerId: this.options.workerId,
              queues: this.options.queues,
              names: this.options.names(),
              versions: this.options.versions?.() ?? null,
              limit,
              // Not started until the job runner's gate says so (crash accounting).
              deferStart: true,
              signal: abandon.signal,
            }),
            DB_CALL_TIMEOUT_MS,
            "claim",
            // The claim went through after all: these rows are ours but nobody runs them.
            (late) => {
              for (const job of late) this.options.releaseLate(job);
            },
            abandon.signal,
          ).finally(() => {
            this.claiming = false;
            this.abandon = undefined;
          });
          failures = 0;
        } catch (err) {
          if (abandon.signal.aborted) {
            this.logger.warn(
              "FORCE_TIMEOUT_PATH with a claim still waiting for the database: abandoned (rows it takes after all are released unstarted)",
            );
            break;
          }
          failures += 1;
          const backoff = Math.min(CLAIM_BACKOFF_CAP_MS, pollMs * 2 ** Math.min(failures, 6));
          this.logger.error({ err: errorText(err, 500), retry_in_ms: backoff }, "claim failed");
          // Its answer may have been lost after the database took the rows: check what we own.
          this.suspect = true;
          if (isSoniqError(err, "CLOSED")) break;
          await latch.wait(backoff);
          continue;
        }
        const claimMs = this.now() - sentAt;
        buffer?.noteClaim(claimMs);
        const { startTtlMs } = this.options;
        if (startTtlMs !== undefined && claimMs > startTtlMs && jobs.length > 0) {
          // Answered past the start TTL (fresh clock): this worker may have been frozen past the
          // stale window, and recovery may have handed the rows on. None starts.
          this.logger.warn(
            { claim_ms: Math.round(claimMs), start_ttl_ms: startTtlMs, jobs: jobs.length },
            "a claim answered after the start TTL: its rows go back unstarted",
          );
          this.release(jobs, "ttl");
          if (signal.aborted) break;
          continue;
        }
        if (signal.aborted) {
          // Answered after drain start: the rows for free slots were ours before the drain began
          // and run as in-flight work (the deadline bounds them); the rest, claimed for the
          // buffer, never started: back to queued in one write.
          const free = Math.max(0, this.options.concurrency - table.busySlots);
          for (const job of jobs.slice(0, free)) this.options.dispatch(job);
          this.release(jobs.slice(free), "late_claim");
          break;
        }
        this.accept(jobs, sentAt);
        if (jobs.length < limit) await latch.wait(sleepMs());
        // Let the jobs just started run their first stretch before sizing the next claim: quick
        // jobs free their slots meanwhile, so it asks for those slots too instead of only the
        // buffer's few missing rows (one round trip each either way).
        else await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      signal.removeEventListener("abort", onStop);
      this.closeBuffer();
      while (this.releases.size > 0) await Promise.all([...this.releases]);
    }
  }

  /** Claimed rows: into the free slots, the rest into the buffer (claim order kept). */
  private accept(jobs: ClaimedJob[], sentAt: number): void {
    const buffer = this.options.prefetch;
    if (!buffer) {
      for (const job of jobs) this.options.dispatch(job);
      return;
    }
    let free = this.options.concurrency - this.options.table.busySlots;
    let i = 0;
    // Straight into free slots when nothing older waits in the buffer (no TTL check: just claimed).
    if (buffer.size === 0) {
      for (; i < jobs.length && free > 0; i += 1, free -= 1) {
        this.options.dispatch(jobs[i] as ClaimedJob);
      }
      if (i > 0) buffer.noteStarts(i);
    }
    if (i < jobs.length) {
      this.release(buffer.offer(i === 0 ? jobs : jobs.slice(i), sentAt), "late_claim");
      this.fillSlots();
    }
  }
}
