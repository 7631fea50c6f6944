/**
 * A worker's sync-handler threads: the `sync_handler_pool_size` permits, the thread pool (created
 * on the first sync job) and the threads still running, which the drain waits for
 * (WAIT_FOR_THREAD) before it closes the pool.
 */
import type { Logger } from "../observability/logger.js";
import { errorText } from "./error-text.js";
import { Permits } from "./permits.js";
import type { ThreadRunner } from "./run-sync-handler.js";
import type { ThreadCheckpoints } from "./thread-checkpoints.js";
import type { ThreadDependencies } from "./thread-dependencies.js";
import { ThreadPool } from "./thread-pool.js";

/** See the module comment. */
export class WorkerThreads implements ThreadRunner {
  readonly permits: Permits;
  private threadPool: ThreadPool | undefined;
  /**
   * Threads not returned yet, each with its job's id (by thread: a job timed out on a thread that
   * still runs may be claimed again here and run on a second thread meanwhile).
   */
  private readonly running = new Map<Promise<void>, string>();

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

  /** Answers the threads' `ctx.checkpoint` while the pool is open (thread-checkpoints.ts). */
  checkpoints: ThreadCheckpoints | undefined;

  /** Answers the threads' `ctx.dependencies()` while the pool is open (thread-dependencies.ts). */
  dependencies: ThreadDependencies | undefined;

  /** The pool, created on first use (with the checkpoint and dependency channels). */
  pool(): ThreadPool {
    if (!this.threadPool) {
      this.checkpoints?.open();
      this.dependencies?.open();
    }
    this.threadPool ??= new ThreadPool(this.poolSize);
    return this.threadPool;
  }

  threadStarted(jobId: string, thread: Promise<void>): void {
    this.running.set(thread, jobId);
  }

  threadEnded(thread: Promise<void>): void {
    this.running.delete(thread);
    this.onThreadEnded();
  }

  /** Ids of the jobs whose thread has not returned yet (each once). */
  runningJobIds(): string[] {
    return [...new Set(this.running.values())];
  }

  /** True while a thread of `jobId` has not returned. */
  isRunning(jobId: string): boolean {
    for (const id of this.running.values()) if (id === jobId) return true;
    return false;
  }

  /** Closes the pool, if one was created. Call once every thread has returned. Never throws. */
  async close(logger: Logger): Promise<void> {
    const pool = this.threadPool;
    this.threadPool = undefined;
    this.checkpoints?.close();
    this.dependencies?.close();
    if (!pool) return;
    await pool.destroy().catch((err: unknown) => {
      logger.warn({ err: errorText(err, 300) }, "closing the sync-handler thread pool failed");
    });
  }
}
