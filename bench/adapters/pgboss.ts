/** pg-boss (see ./pgboss-config.ts for the configuration and why). */
import { join } from "node:path";
import type PgBoss from "pg-boss";
import type { BenchHandler, BenchPayload } from "../payload.js";
import { newBoss, PGBOSS_QUEUE, PGBOSS_SCHEMA, startPgBossWorkers } from "./pgboss-config.js";
import { checkPostgres, packageVersion, REPO_ROOT, sql } from "./support.js";
import type { Adapter, AdapterFactory, WorkerProcessSpec } from "./types.js";

class PgBossAdapter implements Adapter {
  private boss: PgBoss | undefined;
  private working = false;

  constructor(private readonly pgUrl: string) {}

  async setup(): Promise<void> {
    this.boss = newBoss(this.pgUrl);
    await this.boss.start();
    await this.boss.createQueue(PGBOSS_QUEUE);
    await this.boss.clearStorage();
  }

  async enqueueBulk(batch: BenchPayload[]): Promise<void> {
    await this.boss?.insert(batch.map((data) => ({ name: PGBOSS_QUEUE, data })));
  }

  async enqueueOne(payload: BenchPayload): Promise<void> {
    await this.boss?.send(PGBOSS_QUEUE, payload);
  }

  async startWorker(concurrency: number, handler: BenchHandler): Promise<void> {
    if (!this.boss) throw new Error("pg-boss: setup() was not called");
    await startPgBossWorkers(this.boss, concurrency, handler);
    this.working = true;
  }

  async stopWorker(): Promise<void> {
    // offWork() only asks the loops to stop; stop() below waits for jobs in progress.
    if (this.working) await this.boss?.offWork(PGBOSS_QUEUE);
    this.working = false;
  }

  workerProcess(concurrency: number): WorkerProcessSpec {
    return {
      command: process.execPath,
      args: ["--import", "tsx", join(REPO_ROOT, "bench", "worker-processes", "pgboss-worker.ts")],
      env: { BENCH_PG_URL: this.pgUrl, BENCH_CONCURRENCY: String(concurrency) },
    };
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    await this.boss?.stop({ graceful: true, wait: true, timeout: 30_000 });
  }
}

/** pg-boss in schema `bench_pgboss`. */
export function pgBoss(pgUrl: string): AdapterFactory {
  return {
    name: "pg-boss",
    label: "pg-boss",
    isSoniq: false,
    version: () => packageVersion("pg-boss"),
    database: "postgres",
    configuration: `schema ${PGBOSS_SCHEMA}; work() loops of batchSize min(c, 10), c ÷ batchSize of them (c = in-flight cap: 10 → 1 × 10, 100 → 10 × 10; a batch runs concurrently, Promise.allSettled), pollingIntervalSeconds 0.5 (the minimum; a loop fetches once per interval, also after a full batch, so a drain runs ≈ 2c jobs/s by design), schedule false, pool 10; insert() per batch, send() per job`,
    check: () => checkPostgres(pgUrl),
    async prepare() {
      await sql(pgUrl, `DROP SCHEMA IF EXISTS ${PGBOSS_SCHEMA} CASCADE`);
      const boss = newBoss(pgUrl);
      await boss.start();
      try {
        await boss.createQueue(PGBOSS_QUEUE);
      } finally {
        await boss.stop({ graceful: false });
      }
    },
    create: () => new PgBossAdapter(pgUrl),
    historyNotMeasured:
      "not measured: pg-boss keeps completed jobs (archived after 12 h, deleted after 7 days by default), but the bench has no fill matching its storage yet",
    cleanup: () => sql(pgUrl, `DROP SCHEMA IF EXISTS ${PGBOSS_SCHEMA} CASCADE`),
  };
}
