/**
 * A worker's sync-handler threads: the `sync_handler_pool_size` permits, the thread pool (created
 * on the first sync job) and the threads still running, which the drain waits for
 * (WAIT_FOR_THREAD) before it closes the pool.
 */
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import { Permits } from "./permits.js";
import type { ThreadRunner } from "./run-sync-handler.js";
import { ThreadPool } from "./thread-pool.js";

/** See the module comment. */
export class WorkerThreads implements ThreadRunner {
  readonly permits: Permits;
  private threadPool: ThreadPool | undefined;
  private readonly running = new Map<string, Promise<void>>();

  /**
   * @param poolSize - `sync_handler_pool_size`: threads and permits.
   * @param onThreadEnded - called after a thread returned (wakes the claim loop).
   */
  constructor(
    readonly workerId: string,
    private readonly poolSize: number,
    private readonly onThreadEnded: () => void,
  ) {
    this.permits = new Permits(poolSize);
  }

  /** The pool, created on first use. */
  pool(): ThreadPool {
    this.threadPool ??= new ThreadPool(this.poolSize);
    return this.threadPool;
  }

  threadStarted(jobId: string, thread: Promise<void>): void {
    this.running.set(jobId, thread);
  }

  threadEnded(jobId: string): void {
    this.running.delete(jobId);
    this.onThreadEnded();
  }

  /** Ids of the jobs whose thread has not returned yet. */
  runningJobIds(): string[] {
    return [...this.running.keys()];
  }

  /** True while `jobId`'s thread has not returned. */
  isRunning(jobId: string): boolean {
    return this.running.has(jobId);
  }

  /** Closes the pool, if one was created. Call once every thread has returned. Never throws. */
  async close(logger: Logger): Promise<void> {
    const pool = this.threadPool;
    this.threadPool = undefined;
    if (!pool) return;
    await pool.destroy().catch((err: unknown) => {
      logger.warn({ err: errorText(err, 300) }, "closing the sync-handler thread pool failed");
    });
  }
}
