/**
 * pg-boss settings shared by the in-process adapter and the worker process.
 *
 * pg-boss 10 has no per-worker concurrency option: a `work()` call is one polling loop that
 * fetches up to `batchSize` jobs, hands them to the handler together, completes them in one
 * statement, and then waits out the rest of `pollingIntervalSeconds` before it fetches again
 * (even after a full batch). Its documented ways to run more at once are more `work()` calls
 * and a larger `batchSize`. For an in-flight cap of `c` the benchmark uses
 * `min(c, 10)` work() loops × `batchSize` c / loops (10 × 1 for c = 10, 10 × 10 for c = 100),
 * handlers of one batch run concurrently, and `pollingIntervalSeconds` 0.5 (the minimum).
 * Bulk enqueue is `insert()`; single enqueue `send()`. `schedule: false` (no cron is used);
 * everything else is default (pool of 10, maintenance on).
 */
import PgBoss from "pg-boss";
import type { BenchHandler, BenchPayload } from "../payload.js";

/** PostgreSQL schema of the pg-boss measurements. */
export const PGBOSS_SCHEMA = "bench_pgboss";
/** The queue every measurement uses. */
export const PGBOSS_QUEUE = "bench_task";

export function newBoss(connectionString: string): PgBoss {
  const boss = new PgBoss({ connectionString, schema: PGBOSS_SCHEMA, schedule: false });
  boss.on("error", (err) => process.stderr.write(`pg-boss error: ${String(err)}\n`));
  return boss;
}

/** Starts the work() loops for an in-flight cap of `concurrency`; returns their ids. */
export async function startPgBossWorkers(
  boss: PgBoss,
  concurrency: number,
  handler: BenchHandler,
): Promise<string[]> {
  const loops = Math.min(concurrency, 10);
  const batchSize = Math.max(1, Math.floor(concurrency / loops));
  const ids: string[] = [];
  for (let n = 0; n < loops; n += 1) {
    ids.push(
      await boss.work<BenchPayload>(
        PGBOSS_QUEUE,
        { batchSize, pollingIntervalSeconds: 0.5 },
        async (jobs) => {
          await Promise.all(jobs.map((job) => handler(job.data)));
        },
      ),
    );
  }
  return ids;
}
