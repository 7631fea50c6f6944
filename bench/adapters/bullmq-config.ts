/**
 * BullMQ settings shared by the in-process adapter and the worker process.
 *
 * Documented fast path: one `Worker` with `concurrency` = the in-flight cap (jobs are fetched
 * over a blocking connection, so idle workers wake at once), `removeOnComplete: true` (completed
 * jobs are not kept, as the docs advise for throughput and memory), `addBulk` for bulk enqueue
 * (one MULTI per batch), `add` for one job. Keys live under the prefix `bench-bullmq`.
 */
import { type ConnectionOptions, Worker } from "bullmq";
import type { BenchPayload } from "../payload.js";

export const BULLMQ_PREFIX = "bench-bullmq";
export const BULLMQ_QUEUE = "bench_task";
export const BULLMQ_JOB = "task";

/** ioredis options for `redis://host:port[/db]`; `maxRetriesPerRequest: null` as BullMQ asks. */
export function bullConnection(redisUrl: string): ConnectionOptions {
  const url = new URL(redisUrl);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    db,
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    maxRetriesPerRequest: null,
  };
}

/** The benchmark's Worker: `concurrency` jobs at once, errors to standard error. */
export function newBullWorker(
  redisUrl: string,
  concurrency: number,
  handler: (payload: BenchPayload) => Promise<void> | void,
): Worker {
  const worker = new Worker(
    BULLMQ_QUEUE,
    async (job) => {
      await handler(job.data as BenchPayload);
    },
    { connection: bullConnection(redisUrl), prefix: BULLMQ_PREFIX, concurrency },
  );
  worker.on("error", (err) => process.stderr.write(`bullmq worker error: ${String(err)}\n`));
  return worker;
}
