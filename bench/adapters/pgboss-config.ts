/**
 * pg-boss settings shared by the in-process adapter and the worker process.
 *
 * pg-boss 10 has no per-worker concurrency option: a `work()` call is one polling loop that
 * fetches up to `batchSize` jobs (one statement), hands them to the handler together, and only
 * after the handler's promise settles sends their completion (not awaited) and waits out the rest
 * of `pollingIntervalSeconds` (minimum 0.5; skipped only when less than 100 ms remain) before it
 * fetches again — also after a full batch (pg-boss 10.4.2 src/worker.js). Its documented ways to
 * run more at once are a larger `batchSize` (the handler runs the batch concurrently: the
 * maintainer's `Promise.allSettled(jobs.map(handler))`) and more `work()` calls; the wait is
 * skipped otherwise only by `notifyWorker(id)` ("bypass the job polling interval for this
 * iteration"), which the benchmark does not call. So with c jobs in flight and quick handlers a
 * drain runs c jobs per 0.5 s = 2c jobs/s however c is split between loops: that is pg-boss's
 * design, measured in
 * bench/profile/pgboss-loop.ts and docs/performance.md ("The pg-boss column").
 *
 * For an in-flight cap c the benchmark uses batches of min(c, 10) and c ÷ batch work() loops
 * (10 → 1 × 10, 100 → 10 × 10), `pollingIntervalSeconds` 0.5: each fetch statement sorts the whole
 * backlog, so one fetch per ten jobs instead of one per job costs the database a tenth as much
 * for the same throughput, and several loops at 100 keep one slow handler from holding every slot.
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

/**
 * The plan for an in-flight cap of `concurrency` (see the top of this file): batches of
 * min(c, 10), c ÷ batch loops (10 → 1 × 10, 100 → 10 × 10). Never more than the cap in flight.
 */
export function pgBossPlan(concurrency: number): PgBossPlan {
  const batchSize = Math.max(1, Math.min(concurrency, 10));
  return { loops: Math.max(1, Math.floor(concurrency / batchSize)), batchSize };
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
