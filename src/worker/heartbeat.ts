/**
 * The worker's heartbeat, as a service: every `heartbeatInterval` it writes its row's heartbeat,
 * status (`running`, or `draining` from the drain's start — heartbeats go on until every claimed
 * row is finished or released) and shutdown state with the drain's start and deadline, together
 * with the progress its jobs reported since the last beat; the same round trip returns the owned
 * jobs an operator asked to cancel (contract: admin-store.ts `workerBeat`). It keeps
 * `healthySince` (the start of the current unbroken run of successful beats, which maintenance
 * uses to judge whether stale owners may be recovered), and releases orphans: rows this worker
 * owns but does not track, left by a claim whose answer was lost (the worker is live, so crash
 * recovery would never free them). After each beat it runs the optional `afterBeat` hook: the
 * schedules' catch-up (worker-schedules.ts).
 */
import type { Backend, WorkerBeatParams } from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { Service, ServiceState } from "../lifecycle/service.js";
import type { Logger } from "../observability/logger.js";
import type { PendingProgress } from "./progress-reports.js";
import { DB_CALL_TIMEOUT_MS, withTimeout } from "./with-timeout.js";

/** Bound of the heartbeat's `stop()` at the end of a drain, in milliseconds. */
export const HEARTBEAT_STOP_BOUND_MS = 2000;

/** Where orphan suspicion comes from: the claim loop. */
export interface OrphanSource {
  /** True while a claim waits for its answer (never release while one may still answer). */
  readonly claimInFlight: boolean;
  /** True once (then cleared) after a failed claim, when no claim is in flight. */
  takeOrphanSuspicion(): boolean;
  /**
   * Keeps the suspicion for the next beat: a release skipped a row because a claim was in flight
   * meanwhile (that row may be the lost answer's, not the new claim's).
   */
  retainOrphanSuspicion?(): void;
}

/** What a beat reports about the worker besides "alive" (contract: admin-store.ts `workerBeat`). */
export type BeatReport = Pick<
  WorkerBeatParams,
  "status" | "shutdownState" | "drainElapsedSeconds" | "deadlineInSeconds"
>;

/** Options of {@link Heartbeat}. */
export interface HeartbeatOptions {
  backend: Backend;
  workerId: string;
  /** Seconds between beats. */
  intervalSeconds: number;
  logger: Logger;
  /** The status and shutdown state to report: `running` / RUNNING until the drain starts. */
  report(): BeatReport;
  /** The progress reported since the last beat, written with it. */
  progress(): PendingProgress;
  /** Called with the ids of owned jobs an operator asked to cancel. */
  onCancelRequested(jobIds: string[]): void;
  /** True when the worker tracks `jobId` (claimed and not settled). */
  isTracked(jobId: string): boolean;
  orphans: OrphanSource;
  /** Clock in milliseconds since the epoch. */
  now(): number;
  /** Runs after each successful beat (the schedules' catch-up); must not throw. */
  afterBeat?: (signal: AbortSignal) => Promise<void>;
}

/** See the module comment. */
export class Heartbeat implements Service {
  readonly name = "heartbeat";
  private readonly service: PeriodicService;
  private readonly intervalMs: number;
  private healthy: number | undefined;
  private lastBeat: number | undefined;

  constructor(private readonly options: HeartbeatOptions) {
    this.intervalMs = options.intervalSeconds * 1000;
    this.service = new PeriodicService({
      name: "heartbeat",
      logger: options.logger,
      intervalMs: this.intervalMs,
      stopBoundMs: HEARTBEAT_STOP_BOUND_MS,
      tick: (signal) => this.beat(signal),
    });
  }

  get state(): ServiceState {
    return this.service.state;
  }

  /** Start of the current unbroken run of successful beats (ms), if any. */
  get healthySince(): number | undefined {
    return this.healthy;
  }

  /**
   * Seconds this worker has been heartbeating without a break (0 when not healthy): 0 too once no
   * beat has answered for longer than a break ({@link overdue}), before the beat in flight has
   * failed or answered — a beat waiting on a lock is not a healthy run.
   */
  healthySeconds(): number {
    const now = this.options.now();
    if (this.healthy === undefined || this.overdue(now)) return 0;
    return (now - this.healthy) / 1000;
  }

  /** Whether no beat has answered for more than two intervals and a second (a break). */
  private overdue(now: number): boolean {
    return this.lastBeat === undefined || now - this.lastBeat > 2 * this.intervalMs + 1000;
  }

  /** Starts beating; the first beat comes after one interval (registration was the first). */
  start(): Promise<void> {
    return this.service.start();
  }

  /** Stops beating; waits for a beat in flight at most `boundMs` ms. Never throws. */
  stop(boundMs?: number): Promise<void> {
    return this.service.stop(boundMs);
  }

  /** Beats now (e.g. to report `draining` at once). */
  runNow(): Promise<void> {
    return this.service.runNow();
  }

  private async beat(signal: AbortSignal): Promise<void> {
    const { backend, workerId } = this.options;
    const progress = this.options.progress();
    let answer: { cancelRequested: string[] };
    try {
      answer = await withTimeout(
        backend.admin.workerBeat({
          workerId,
          ...this.options.report(),
          progress: progress.reports,
        }),
        DB_CALL_TIMEOUT_MS,
        "heartbeat",
      );
    } catch (err) {
      this.healthy = undefined;
      this.lastBeat = undefined;
      throw err;
    }
    progress.written();
    if (answer.cancelRequested.length > 0) this.options.onCancelRequested(answer.cancelRequested);
    const now = this.options.now();
    // A break in the beats (the event loop or the database stalled) restarts the count.
    if (this.overdue(now)) this.healthy = now;
    this.lastBeat = now;
    if (!signal.aborted) await this.releaseOrphans();
    if (!signal.aborted) await this.options.afterBeat?.(signal);
  }

  /** Releases (NACKs) every owned row this worker does not track, after a lost claim answer. */
  private async releaseOrphans(): Promise<void> {
    const { backend, orphans, workerId } = this.options;
    if (!orphans.takeOrphanSuspicion()) return;
    const owned = await withTimeout(
      backend.jobOwnedBy({ workerId }),
      DB_CALL_TIMEOUT_MS,
      "owned rows",
    );
    let skipped = false;
    for (const row of owned) {
      if (this.options.isTracked(row.id)) continue;
      if (orphans.claimInFlight) {
        skipped = true;
        continue;
      }
      if (
        await backend.jobNack({
          id: row.id,
          owner: { workerId: row.workerId, claimToken: row.claimToken },
        })
      ) {
        this.options.logger.warn(
          { job_id: row.id },
          "released a job claimed by an answer that was lost",
        );
      }
    }
    if (skipped) orphans.retainOrphanSuspicion?.();
  }
}
