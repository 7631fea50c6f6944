/**
 * Soniq on PostgreSQL and on SQLite, through the public API (`soniq`, i.e. the built dist/).
 *
 * Configuration: documented defaults (`poolSize` 10, `pollInterval` 1 s, LISTEN/NOTIFY
 * wake-ups on PostgreSQL, WAL on SQLite) with `logLevel: "warn"` so no line is written per job
 * (the default `info` logs every completion; the peers are also run without per-job logs).
 * Bulk enqueue is `job.enqueueMany` (one statement per call); the worker is
 * `soniq.worker({ concurrency })`. The CPU-bound workload uses an ordinary async handler.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JobDefinition, Soniq, type Worker } from "soniq";
import type { BenchHandler, BenchPayload } from "../payload.js";
import { SONIQ_JOB, SONIQ_SCHEMA, soniqOptions } from "./soniq-config.js";
import { checkPostgres, packageVersion, REPO_ROOT, sql } from "./support.js";
import type { Adapter, AdapterFactory, WorkerProcessSpec } from "./types.js";

class SoniqAdapter implements Adapter {
  private soniq: Soniq | undefined;
  private job: JobDefinition<BenchPayload, void> | undefined;
  private worker: Worker | undefined;
  private handler: BenchHandler = () => undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly clear: () => Promise<void>,
    private readonly dispose: () => void,
  ) {}

  async setup(): Promise<void> {
    const soniq = new Soniq(soniqOptions(this.databaseUrl));
    this.soniq = soniq;
    this.job = soniq.job<BenchPayload, void>({
      name: SONIQ_JOB,
      handler: (payload) => this.handler(payload),
    });
    await soniq.setup();
    await this.clear();
  }

  async enqueueBulk(batch: BenchPayload[]): Promise<void> {
    await this.job?.enqueueMany(batch.map((args) => ({ args })));
  }

  async enqueueOne(payload: BenchPayload): Promise<void> {
    await this.job?.enqueue(payload);
  }

  async startWorker(concurrency: number, handler: BenchHandler): Promise<void> {
    this.handler = handler;
    this.worker = this.soniq?.worker({ concurrency });
    await this.worker?.start();
  }

  async stopWorker(): Promise<void> {
    await this.worker?.stop();
    this.worker = undefined;
  }

  workerProcess(concurrency: number): WorkerProcessSpec {
    return {
      command: process.execPath,
      args: [
        join(REPO_ROOT, "dist", "cli", "main.js"),
        "worker",
        join(REPO_ROOT, "bench", "worker-processes", "soniq-jobs.ts"),
        "--concurrency",
        String(concurrency),
      ],
      env: { BENCH_SONIQ_DATABASE_URL: this.databaseUrl },
    };
  }

  async teardown(): Promise<void> {
    await this.worker?.stop();
    await this.soniq?.close();
    this.dispose();
  }
}

function version(): string {
  return packageVersion("soniq");
}

/** Soniq on PostgreSQL, tables in schema `bench_soniq`. */
export function soniqPostgres(pgUrl: string): AdapterFactory {
  const clear = () =>
    sql(
      pgUrl,
      `TRUNCATE ${SONIQ_SCHEMA}.soniq_jobs, ${SONIQ_SCHEMA}.soniq_dead_letter_jobs, ${SONIQ_SCHEMA}.soniq_workers`,
    );
  return {
    name: "soniq-pg",
    label: "Soniq PG",
    isSoniq: true,
    version,
    configuration: `schema ${SONIQ_SCHEMA}; poolSize 10, pollInterval 1 s, LISTEN/NOTIFY (defaults); logLevel warn; enqueueMany per batch; worker({ concurrency })`,
    check: () => checkPostgres(pgUrl),
    async prepare() {
      await sql(pgUrl, `DROP SCHEMA IF EXISTS ${SONIQ_SCHEMA} CASCADE`);
      const soniq = new Soniq(soniqOptions(pgUrl));
      try {
        await soniq.setup();
      } finally {
        await soniq.close();
      }
    },
    create: () => new SoniqAdapter(pgUrl, clear, () => undefined),
    cleanup: () => sql(pgUrl, `DROP SCHEMA IF EXISTS ${SONIQ_SCHEMA} CASCADE`),
  };
}

/** Soniq on SQLite: a fresh database file per measurement in a temporary folder. */
export function soniqSqlite(): AdapterFactory {
  let dir: string | undefined;
  let seq = 0;
  const removeDb = (path: string) => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  };
  return {
    name: "soniq-sqlite",
    label: "Soniq SQLite",
    isSoniq: true,
    version,
    configuration:
      "a new file per measurement in the OS temp folder; WAL, synchronous=NORMAL (defaults); pollInterval 1 s (in-process wake-ups only); logLevel warn",
    check: async () => null,
    async prepare() {
      dir = mkdtempSync(join(tmpdir(), "soniq-bench-"));
    },
    create() {
      if (!dir) throw new Error("soniq-sqlite: prepare() was not called");
      seq += 1;
      const path = join(dir, `bench-${seq}.db`);
      removeDb(path);
      return new SoniqAdapter(
        `sqlite:${path}`,
        async () => undefined,
        () => removeDb(path),
      );
    },
    async cleanup() {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}
