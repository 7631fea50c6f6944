/** graphile-worker (see ./graphile-config.ts for the configuration and why). */
import { join } from "node:path";
import { makeWorkerUtils, type Runner, run, type WorkerUtils } from "graphile-worker";
import type { BenchHandler, BenchPayload } from "../payload.js";
import {
  GRAPHILE_TASK,
  type GraphileVariant,
  graphileRunnerOptions,
  graphileSchema,
  quietLogger,
} from "./graphile-config.js";
import { checkPostgres, packageVersion, REPO_ROOT, sql } from "./support.js";
import type { Adapter, AdapterFactory, WorkerProcessSpec } from "./types.js";

class GraphileAdapter implements Adapter {
  private utils: WorkerUtils | undefined;
  private runner: Runner | undefined;

  constructor(
    private readonly pgUrl: string,
    private readonly variant: GraphileVariant,
  ) {}

  private get schema(): string {
    return graphileSchema(this.variant);
  }

  async setup(): Promise<void> {
    this.utils = await makeWorkerUtils({
      connectionString: this.pgUrl,
      schema: this.schema,
      logger: quietLogger,
    });
    await this.utils.migrate();
    await sql(
      this.pgUrl,
      `TRUNCATE ${this.schema}._private_jobs, ${this.schema}._private_job_queues CASCADE`,
    );
  }

  async enqueueBulk(batch: BenchPayload[]): Promise<void> {
    await this.utils?.addJobs(batch.map((payload) => ({ identifier: GRAPHILE_TASK, payload })));
  }

  async enqueueOne(payload: BenchPayload): Promise<void> {
    await this.utils?.addJob(GRAPHILE_TASK, payload);
  }

  async startWorker(concurrency: number, handler: BenchHandler): Promise<void> {
    this.runner = await run(
      graphileRunnerOptions(
        this.pgUrl,
        concurrency,
        { [GRAPHILE_TASK]: async (payload) => handler(payload as BenchPayload) },
        true,
        this.variant,
      ),
    );
  }

  async stopWorker(): Promise<void> {
    await this.runner?.stop();
    this.runner = undefined;
  }

  workerProcess(concurrency: number): WorkerProcessSpec {
    return {
      command: process.execPath,
      args: ["--import", "tsx", join(REPO_ROOT, "bench", "worker-processes", "graphile-worker.ts")],
      env: {
        BENCH_PG_URL: this.pgUrl,
        BENCH_CONCURRENCY: String(concurrency),
        BENCH_GRAPHILE_VARIANT: this.variant,
      },
    };
  }

  async teardown(): Promise<void> {
    await this.stopWorker();
    await this.utils?.release();
  }
}

/**
 * graphile-worker in schema `bench_graphile_worker` with its fastest documented configuration,
 * or (`defaults`, only with `--only graphile-worker-defaults`) in `bench_graphile_defaults` with
 * its default configuration.
 */
export function graphile(pgUrl: string, variant: GraphileVariant = "fastest"): AdapterFactory {
  const schema = graphileSchema(variant);
  return {
    name: variant === "defaults" ? "graphile-worker-defaults" : "graphile-worker",
    label: variant === "defaults" ? "graphile-worker (defaults)" : "graphile-worker",
    isSoniq: false,
    version: () => packageVersion("graphile-worker"),
    database: "postgres",
    configuration:
      variant === "defaults"
        ? `schema ${schema}; concurrency = in-flight cap, maxPoolSize min(max(10, c+2), 50), otherwise graphile-worker's defaults (no local queue, one completion per job), LISTEN/NOTIFY; addJobs per batch; warnings-only logger`
        : `schema ${schema}; concurrency = in-flight cap, maxPoolSize min(max(10, c+2), 50), localQueue.size 500, completeJobBatchDelay 0, failJobBatchDelay 0, LISTEN/NOTIFY; addJobs per batch; warnings-only logger`,
    check: () => checkPostgres(pgUrl),
    async prepare() {
      await sql(pgUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      const utils = await makeWorkerUtils({
        connectionString: pgUrl,
        schema,
        logger: quietLogger,
      });
      try {
        await utils.migrate();
      } finally {
        await utils.release();
      }
    },
    create: () => new GraphileAdapter(pgUrl, variant),
    historyNotMeasured:
      "n/a: graphile-worker deletes a job when it succeeds, so it keeps no history to drain next to",
    cleanup: () => sql(pgUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`),
  };
}
