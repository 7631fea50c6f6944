/**
 * The worker reaper: forgets worker rows not seen for a while (docs/reliability.md, "Maintenance:
 * small services behind one lease"), so a machine that vanished does not stay listed for ever.
 * Every process start registers a fresh incarnation, so without it `soniq_workers` only grows.
 * Deleting a row does not touch jobs: the rescuer treats an unknown owner as dead, like a stale
 * one. Leader-only: the maintainer runs it while this process holds the maintenance lease.
 *
 * Each tick deletes in batches of at most `batchLimit` rows until a batch comes back short,
 * checking for a stop between batches.
 *
 * Options (see {@link WorkerReaperOptions}): `forgetAfterSeconds` (seconds since the last
 * heartbeat, default {@link FORGET_WORKERS_AFTER_SECONDS}), `intervalMs` (milliseconds between
 * ticks, default {@link WORKER_REAPER_INTERVAL_MS}), `batchLimit` (rows per statement, default
 * {@link WORKER_REAPER_BATCH_LIMIT}).
 *
 * Events: none; a tick that deleted rows logs "forgot workers not seen for a while" (debug) with
 * `forgotten`.
 */
import type { Backend } from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { BaseServiceOptions } from "../lifecycle/service.js";
import { inBatches } from "./batches.js";

/** Worker rows not heartbeating for this many seconds are deleted (one hour). */
export const FORGET_WORKERS_AFTER_SECONDS = 3600;

/** Default milliseconds between two ticks of the {@link WorkerReaper} (one minute). */
export const WORKER_REAPER_INTERVAL_MS = 60_000;

/** Default worker rows the {@link WorkerReaper} deletes per statement. */
export const WORKER_REAPER_BATCH_LIMIT = 1_000;

/** Options of {@link WorkerReaper}. */
export interface WorkerReaperOptions extends Omit<BaseServiceOptions, "name"> {
  /** The forgetting method of the backend. */
  backend: Pick<Backend, "workerForget">;
  /** Seconds since its last heartbeat after which a worker row is deleted. Default one hour. */
  forgetAfterSeconds?: number;
  /** Milliseconds between ticks. Default {@link WORKER_REAPER_INTERVAL_MS}. */
  intervalMs?: number;
  /** Rows per delete statement (≥ 1). Default {@link WORKER_REAPER_BATCH_LIMIT}. */
  batchLimit?: number;
}

/** See the module comment. */
export class WorkerReaper extends PeriodicService {
  constructor(options: WorkerReaperOptions) {
    const limit = options.batchLimit ?? WORKER_REAPER_BATCH_LIMIT;
    const after = options.forgetAfterSeconds ?? FORGET_WORKERS_AFTER_SECONDS;
    super({
      ...options,
      name: "worker-reaper",
      intervalMs: options.intervalMs ?? WORKER_REAPER_INTERVAL_MS,
      immediately: true,
      tick: async (signal) => {
        const forgotten = await inBatches(limit, signal, () =>
          options.backend.workerForget({ notSeenForSeconds: after, limit }),
        );
        if (forgotten > 0) this.logger.debug({ forgotten }, "forgot workers not seen for a while");
      },
    });
  }
}
