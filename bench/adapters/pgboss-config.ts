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
/** pg-boss's smallest allowed polling interval. */
export const PGBOSS_POLLING_SECONDS = 0.5;

export function newBoss(connectionString: string, schema = PGBOSS_SCHEMA): PgBoss {
  const boss = new PgBoss({ connectionString, schema, schedule: false });
  boss.on("error", (err) => process.stderr.write(`pg-boss error: ${String(err)}\n`));
  return boss;
}

/** How the benchmark runs an in-flight cap with pg-boss: `loops` work() calls of `batchSize` each. */
export interface PgBossPlan {
  loops: number;
  batchSize: number;
}

/** The plan for an in-flight cap of `concurrency` (see the top of this file). */
export function pgBossPlan(concurrency: number): PgBossPlan {
  const loops = Math.min(concurrency, 10);
  return { loops, batchSize: Math.max(1, Math.floor(concurrency / loops)) };
}

/**
 * Starts the work() loops for an in-flight cap of `concurrency` (or an explicit `plan`, for
 * bench/profile/pgboss-loop.ts); returns their ids. The handlers of one batch run concurrently and
 * the batch settles when all of them have (the maintainer's `Promise.allSettled(jobs.map(handler))`),
 * so a failing handler never lets the loop fetch while others of its batch still run.
 */
export async function startPgBossWorkers(
  boss: PgBoss,
  concurrency: number,
  handler: BenchHandler,
  plan: PgBossPlan = pgBossPlan(concurrency),
): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < plan.loops; n += 1) {
    ids.push(
      await boss.work<BenchPayload>(
        PGBOSS_QUEUE,
        { batchSize: plan.batchSize, pollingIntervalSeconds: PGBOSS_POLLING_SECONDS },
        async (jobs) => {
          const settled = await Promise.allSettled(jobs.map(async (job) => handler(job.data)));
          const failed = settled.find((r) => r.status === "rejected");
          if (failed) throw failed.reason;
        },
      ),
    );
  }
  return ids;
}
