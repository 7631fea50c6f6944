/**
 * The overview: counts by queue × status, throughput and failure rate over 1 h and 24 h, the
 * oldest claimable age per queue, dead letters by reason, workers by shutdown state, remote jobs by
 * phase (frozen ones need an operator), jobs waiting for a worker that can run them, and warnings derived from that state — all read through the admin API.
 *
 * Throughput and failures come from the job counters (`soniq.queues.history()`: whole minutes,
 * never a scan of the job tables): jobs that finished `done` in the window, whatever their
 * retention, and jobs moved to the dead-letter queue in the window (replayed or deleted since or
 * not).
 */
import type { WaitingForWorker } from "../admin/waiting-for-worker.js";
import type { DashboardSource } from "./source.js";

/**
 * The dead-letter reasons counted one by one: every reason Soniq writes (the `job_dead_lettered`
 * event's, plus `dependency_failed` from a workflow's failure policy); an entry with another
 * reason (written by another version) is summed as `other`.
 */
export const KNOWN_REASONS = [
  "max_attempts_exceeded",
  "invalid_result",
  "crash_loop",
  "unknown_job",
  "invalid_args",
  "no_capable_worker",
  "dependency_failed",
  "remote_failed",
  "remote_timeout",
  "preflight_failed",
];

/** One window's throughput (whole minutes: the window's first minute counts whole). */
export interface WindowStats {
  /** Jobs that finished `done` in the window. */
  done: number;
  /** Jobs moved to the dead-letter queue in the window. */
  deadLettered: number;
  /** deadLettered / (done + deadLettered), or 0. */
  failureRate: number;
}

/** A warning an operator should look at. */
export interface Warning {
  kind: string;
  message: string;
}

/** `GET /api/overview`. */
export interface Overview {
  counts: Array<{ queue: string; status: string; count: number }>;
  windows: { "1h": WindowStats; "24h": WindowStats };
  queues: Array<{ name: string; oldestDueAgeSeconds: number; paused: boolean }>;
  deadLettersByReason: Record<string, number>;
  workersByState: Record<string, number>;
  /**
   * Due queued jobs no live worker can run, per queue and name ("waiting for a worker that can
   * run it"; `soniq.jobs.waitingForWorker()`), with the oldest one's wait in seconds.
   */
  waitingForWorker: WaitingForWorker[];
  /** Remote jobs by phase; `frozen` ones wait for an operator (the remote page). */
  remote: { submitting: number; awaiting: number; frozen: number };
  warnings: Warning[];
}

async function window(soniq: DashboardSource, seconds: number): Promise<WindowStats> {
  const { points } = await soniq.queues.history({ windowSeconds: seconds });
  let done = 0;
  let deadLettered = 0;
  for (const p of points) {
    done += p.done;
    deadLettered += p.dead;
  }
  const total = done + deadLettered;
  return { done, deadLettered, failureRate: total === 0 ? 0 : deadLettered / total };
}

/** Builds the overview. */
export async function overview(soniq: DashboardSource): Promise<Overview> {
  const [waitingForWorker, remote, counts, hour, day, queues, workers, byReason] =
    await Promise.all([
      soniq.jobs.waitingForWorker(),
      soniq.remote.counts(),
      soniq.jobs.countByQueueStatus(),
      window(soniq, 3600),
      window(soniq, 86400),
      soniq.queues.list(),
      soniq.workers(),
      soniq.deadLetters.countByReason(),
    ]);
  const deadLettersByReason: Record<string, number> = {};
  let other = 0;
  for (const [reason, n] of Object.entries(byReason)) {
    if (KNOWN_REASONS.includes(reason)) deadLettersByReason[reason] = n;
    else other += n;
  }
  if (other > 0) deadLettersByReason.other = other;
  const workersByState: Record<string, number> = {};
  const warnings: Warning[] = [];
  for (const w of workers) {
    const state = w.shutdownState === "STOPPED" || w.live ? w.shutdownState : "STALE";
    workersByState[state] = (workersByState[state] ?? 0) + 1;
    if (state === "FORCE_TIMEOUT_PATH" || state === "WAIT_FOR_THREAD") {
      warnings.push({
        kind: "drain_timeout",
        message: `worker ${w.id} (${w.hostname}) is in ${state}`,
      });
    }
    if (state === "STALE" && w.inFlight.length > 0) {
      warnings.push({
        kind: "stale_worker",
        message: `worker ${w.id} missed its heartbeats holding ${w.inFlight.length} job(s); recovery will requeue them`,
      });
    }
  }
  const crashLoops = deadLettersByReason.crash_loop ?? 0;
  if (crashLoops > 0) {
    warnings.push({
      kind: "crash_loop",
      message: `${crashLoops} job(s) dead-lettered for crash_loop`,
    });
  }
  for (const w of waitingForWorker) {
    warnings.push({
      kind: "waiting_for_worker",
      message: `${w.count} ${w.name} job(s) in queue ${w.queue} waiting for a worker that can run it (${w.reason})`,
    });
  }
  if (remote.frozen > 0) {
    warnings.push({
      kind: "frozen_remote",
      message: `${remote.frozen} remote job(s) frozen: an operator must resolve them (accepted, not submitted or failed)`,
    });
  }
  for (const q of queues) {
    if (q.paused && q.queued > 0) {
      warnings.push({
        kind: "paused_queue",
        message: `queue ${q.name} is paused with ${q.queued} queued job(s)`,
      });
    }
  }
  return {
    counts,
    windows: { "1h": hour, "24h": day },
    queues: queues.map((q) => ({
      name: q.name,
      oldestDueAgeSeconds: q.oldestDueAgeSeconds,
      paused: q.paused,
    })),
    deadLettersByReason,
    workersByState,
    waitingForWorker,
    remote: { submitting: remote.submitting, awaiting: remote.awaiting, frozen: remote.frozen },
    warnings,
  };
}
