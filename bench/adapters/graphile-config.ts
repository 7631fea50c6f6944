/**
 * graphile-worker settings shared by the in-process adapter and the worker process.
 *
 * The fastest documented configuration (the one of graphile-worker's own performance page):
 * a local queue (`localQueue.size` 500: jobs fetched and locked in batches), batched
 * completions and failures (`completeJobBatchDelay` / `failJobBatchDelay` 0), prepared
 * statements (default), `concurrentJobs` = the in-flight cap, and the recommended pool of
 * `max(10, concurrency + 2)` connections, capped at 50 so that 100 in flight stays within
 * PostgreSQL's default `max_connections` of 100 (with the local queue and batched completions
 * the jobs do not each hold a connection). Bulk enqueue is `addJobs` (one
 * `add_jobs` call per batch); LISTEN/NOTIFY wakes idle workers (pollInterval 2 s, default).
 * The default logger would print a line per completed job: a logger that keeps only warnings
 * and errors is used instead.
 */
import { Logger, type RunnerOptions, type TaskList } from "graphile-worker";

/** PostgreSQL schema of the graphile-worker measurements. */
export const GRAPHILE_SCHEMA = "bench_graphile_worker";
/** PostgreSQL schema of the graphile-worker measurements with its default configuration. */
export const GRAPHILE_DEFAULTS_SCHEMA = "bench_graphile_defaults";

/**
 * `fastest`: the configuration described above. `defaults`: graphile-worker's own defaults for
 * the worker (no local queue: each of the `concurrency` loops fetches one job per statement;
 * one completion statement per job), with the same pool, logger and task.
 */
export type GraphileVariant = "fastest" | "defaults";

/** The schema of a variant's measurements. */
export function graphileSchema(variant: GraphileVariant): string {
  return variant === "defaults" ? GRAPHILE_DEFAULTS_SCHEMA : GRAPHILE_SCHEMA;
}
/** The one task every measurement enqueues. */
export const GRAPHILE_TASK = "bench_task";

/** Warnings and errors only, on standard error. */
export const quietLogger = new Logger(() => (level, message) => {
  if (level === "error" || level === "warning")
    process.stderr.write(`graphile-worker ${level}: ${message}\n`);
});

/** Options of `run()` for `concurrency` jobs at once. */
export function graphileRunnerOptions(
  connectionString: string,
  concurrency: number,
  taskList: TaskList,
  noHandleSignals: boolean,
  variant: GraphileVariant = "fastest",
): RunnerOptions {
  const options: RunnerOptions = {
    connectionString,
    schema: graphileSchema(variant),
    concurrency,
    maxPoolSize: Math.min(Math.max(10, concurrency + 2), 50),
    logger: quietLogger,
    taskList,
    noHandleSignals,
  };
  if (variant === "defaults") return options;
  return {
    ...options,
    preset: {
      worker: {
        localQueue: { size: 500 },
        completeJobBatchDelay: 0,
        failJobBatchDelay: 0,
      },
    },
  };
}
