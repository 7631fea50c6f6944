/** BullMQ on Redis (see ./bullmq-config.ts for the configuration and why). */
import { join } from "node:path";
import { Queue, type Worker } from "bullmq";
import { Redis } from "ioredis";
import type { BenchHandler, BenchPayload } from "../payload.js";
import {
  BULLMQ_JOB,
  BULLMQ_PREFIX,
  BULLMQ_QUEUE,
  bullConnection,
  newBullWorker,
} from "./bullmq-config.js";
import { packageVersion, REPO_ROOT } from "./support.js";
import type { Adapter, AdapterFactory, WorkerProcessSpec } from "./types.js";

class BullMqAdapter implements Adapter {
  private queue: Queue | undefined;
  private worker: Worker | undefined;

  constructor(private readonly redisUrl: string) {}

  async setup(): Promise<void> {
    this.queue = new Queue(BULLMQ_QUEUE, {
      connection: bullConnection(this.redisUrl),
      prefix: BULLMQ_PREFIX,
      defaultJobOptions: { removeOnComplete: true, removeOnFail: 1000 },
    });
    await this.queue.waitUntilReady();
    await this.queue.obliterate({ force: true });
  }

  async enqueueBulk(batch: BenchPayload[]): Promise<void> {
    await this.queue?.addBulk(batch.map((data) => ({ name: BULLMQ_JOB, data })));
  }

  async enqueueOne(payload: BenchPayload): Promise<void> {
    await this.queue?.add(BULLMQ_JOB, payload);
  }

  async startWorker(concurrency: number, handler: BenchHandler): Promise<void> {
    this.worker = newBullWorker(this.redisUrl, concurrency, (payload) => handler(payload));
    await this.worker.waitUntilReady();
  }

  async stopWorker(): Promise<void> {
    await this.worker?.close();
    this.worker = undefined;
  }

  workerProcess(concurrency: number): WorkerProcessSpec {
    return {
      command: process.execPath,
      args: ["--import", "tsx", join(REPO_ROOT, "bench", "worker-processes", "bullmq-worker.ts")],
      env: { BENCH_REDIS_URL: this.redisUrl, BENCH_CONCURRENCY: String(concurrency) },
    };
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    await this.queue?.close();
  }
}

async function deleteKeys(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${BULLMQ_PREFIX}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/** BullMQ on the Redis at `redisUrl`, keys under `bench-bullmq:`. */
export function bullMq(redisUrl: string): AdapterFactory {
  return {
    name: "bullmq",
    label: "BullMQ",
    isSoniq: false,
    version: () => packageVersion("bullmq"),
    database: "redis",
    configuration: `Redis ${redisUrl.replace(/\/\/[^@]*@/, "//")}, prefix ${BULLMQ_PREFIX}; one Worker with concurrency = in-flight cap; removeOnComplete true; addBulk per batch, add per job`,
    async check() {
      const redis = new Redis(redisUrl, {
        maxRetriesPerRequest: 1,
        lazyConnect: true,
        retryStrategy: () => null,
      });
      try {
        await redis.connect();
        await redis.ping();
        return null;
      } catch (err) {
        return `Redis at ${redisUrl} is not reachable: ${String(err)}`;
      } finally {
        redis.disconnect();
      }
    },
    prepare: () => deleteKeys(redisUrl),
    create: () => new BullMqAdapter(redisUrl),
    historyNotMeasured:
      "n/a: the bench runs BullMQ with removeOnComplete (its advice for throughput), so it keeps no history",
    cleanup: () => deleteKeys(redisUrl),
  };
}
