/**
 * The producer, as a service: claims as many jobs as the worker has free slots, hands each to
 * the job runner, and sleeps on the {@link WakeLatch} (a notification, a freed slot, the poll
 * interval or the stop, whichever comes first). A claim is bounded by {@link DB_CALL_TIMEOUT_MS};
 * rows a timed-out claim took after all are released; failures back off (capped) and mark the
 * worker's owned rows as suspect, for the heartbeat's orphan release. The stop is checked between
 * claims; jobs a claim in flight returns after the stop are still run (they were ours before the
 * drain began).
 */
import type { Backend, ClaimedJob } from "../backends/contract/index.js";
import { isSoniqError } from "../errors.js";
import { BaseService } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import type { InFlightTable } from "./in-flight.js";
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
}

/** See the module comment. */
export class ClaimLoop extends BaseService {
  private claiming = false;
  private suspect = false;

  constructor(private readonly options: ClaimLoopOptions) {
    super({ name: "claim-loop", logger: options.logger, stopBoundMs: CLAIM_LOOP_STOP_BOUND_MS });
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

  protected async run(signal: AbortSignal): Promise<void> {
    const { backend, latch, table } = this.options;
    const pollMs = this.options.pollIntervalSeconds * 1000;
    const wake = () => latch.wake();
    signal.addEventListener("abort", wake, { once: true });
    let failures = 0;
    try {
      while (!signal.aborted) {
        const free = this.options.concurrency - table.busySlots;
        if (free <= 0) {
          await latch.wait(pollMs);
          continue;
        }
        let jobs: ClaimedJob[];
        try {
          this.claiming = true;
          jobs = await withTimeout(
            backend.jobClaim({
              workerId: this.options.workerId,
              queues: this.options.queues,
              limit: free,
            }),
            DB_CALL_TIMEOUT_MS,
            "claim",
            // The claim went through after all: these rows are ours but nobody runs them.
            (late) => {
              for (const job of late) this.options.releaseLate(job);
            },
          ).finally(() => {
            this.claiming = false;
          });
          failures = 0;
        } catch (err) {
          failures += 1;
          const backoff = Math.min(CLAIM_BACKOFF_CAP_MS, pollMs * 2 ** Math.min(failures, 6));
          this.logger.error({ err: errorText(err, 500), retry_in_ms: backoff }, "claim failed");
          // Its answer may have been lost after the database took the rows: check what we own.
          this.suspect = true;
          if (isSoniqError(err, "CLOSED")) break;
          await latch.wait(backoff);
          continue;
        }
        // Run what the claim returned, even when a stop arrived while it was in flight: those
        // jobs were ours before the drain began and are in-flight work like any other (DRAINING
        // only stops new claims; the deadline still bounds them).
        for (const job of jobs) this.options.dispatch(job);
        if (jobs.length < free) await latch.wait(pollMs);
      }
    } finally {
      signal.removeEventListener("abort", wake);
    }
  }
}
