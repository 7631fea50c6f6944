/**
 * The worker-thread pool for sync handlers (piscina), created on the first sync job. The runner is
 * the compiled `thread-runner.js` next to this module; when Soniq runs from its TypeScript sources
 * (its own tests), the compiled copy in `dist/` is used, since threads do not load `.ts` files.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Piscina } from "piscina";
import { SoniqError } from "../errors.js";
import type { ThreadCheck, ThreadOutcome, ThreadTask } from "./thread-task.js";

function runnerPath(): string {
  const beside = fileURLToPath(new URL("./thread-runner.js", import.meta.url));
  if (existsSync(beside)) return beside;
  const built = fileURLToPath(new URL("../../dist/worker/thread-runner.js", import.meta.url));
  if (existsSync(built)) return built;
  throw new SoniqError("WORKER_START", "the sync-handler runner is missing: run `npm run build`");
}

/** A pool of `size` threads that run {@link ThreadTask}s. */
export class ThreadPool {
  private readonly pool: Piscina;

  constructor(size: number) {
    this.pool = new Piscina({
      filename: runnerPath(),
      minThreads: 0,
      maxThreads: size,
      // Sync jobs hold a permit each, so the pool never queues more than it has threads.
      maxQueue: size,
      idleTimeout: 30_000,
      concurrentTasksPerWorker: 1,
    });
  }

  /**
   * Runs one task on a thread; resolves with the handler's outcome (what it threw included);
   * rejects only when the thread itself fails (a value that cannot be cloned, a crashed thread).
   */
  run(task: ThreadTask | ThreadCheck): Promise<ThreadOutcome> {
    return this.pool.run(task) as Promise<ThreadOutcome>;
  }

  /** Terminates idle threads. Call only once every task has returned. */
  async destroy(): Promise<void> {
    await this.pool.destroy();
  }
}
