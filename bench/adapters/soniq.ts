/**
 * Soniq on PostgreSQL and on SQLite, through the public API (`soniq`, i.e. the built dist/).
 *
 * Configuration: documented defaults (`poolSize` 10, `pollInterval` 1 s, LISTEN/NOTIFY
 * wake-ups on PostgreSQL, WAL on SQLite) with `logLevel: "warn"` so no line is written per job
 * (the default `info` logs every completion; the peers are also run without per-job logs).
 * Bulk enqueue is `job.enqueueMany` (one statement per call); the worker is
 * `soniq.worker({ concurrency })`. The CPU-bound workload uses an ordinary async handler.
 *
 * With `--baseline REF` the same adapters run a second Soniq, built at REF (../baseline.ts): the
 * class comes from that build's dist/index.js and its worker processes run that build's
 * dist/cli/main.js; its PostgreSQL schema is `bench_soniq_baseline`. Only the public API is
 * used, so an earlier internal layout does not matter.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { type JobDefinition, Soniq, type Worker } from "soniq";
import type { Baseline } from "../baseline.js";
import { fillHistory, fillSqliteHistory, type HistoryFill, type OperatorApi } from "../history.js";
import type { BenchHandler, BenchPayload } from "../payload.js";
import {
  SONIQ_BASELINE_SCHEMA,
  SONIQ_JOB,
  SONIQ_KEYED_JOB,
  SONIQ_NO_PREFETCH_SCHEMA,
  SONIQ_RETENTION0_SCHEMA,
  SONIQ_SCHEMA,
  soniqOptions,
} from "./soniq-config.js";
import { checkPostgres, packageVersion, REPO_ROOT, sql, withClient } from "./support.js";
import {
  type Adapter,
  type AdapterFactory,
  FLOW_KEYS,
  FLOW_LIMIT,
  type WorkerProcessSpec,
} from "./types.js";

/** The class the adapters construct: this checkout's, or a baseline build's. */
type SoniqClass = typeof Soniq;

/** Which Soniq a factory measures: where its build is and how it is named in the report. */
export interface SoniqBuild {
  /** The package root holding dist/. */
  root: string;
  /** Loads the class (a baseline's from its own dist/index.js). */
  load(): Promise<SoniqClass>;
  /** Environment for the worker process's jobs module (bench/worker-processes/soniq-jobs.ts). */
  workerEnv: Record<string, string>;
  schema: string;
  /** Appended to the library's name and label (`-baseline`, ` @abc1234`). */
  labelSuffix: string;
  baselineOf: boolean;
  version(): string;
  /**
   * The `prefetch` setting, when this build is measured with the window off (`…-prefetch0`,
   * compared with its default-configured counterpart like a baseline); undefined: the default.
   */
  prefetch?: number;
  /**
   * The `resultRetention` setting, when this build is measured keeping no finished job
   * (`soniq-pg-retention0`, a Soniq column of its own beside the defaults); undefined: the default.
   */
  resultRetention?: number;
}

/** This checkout's Soniq with `resultRetention: 0`: finished jobs are deleted, not kept. */
export const RETENTION0: SoniqBuild = {
  root: REPO_ROOT,
  load: async () => Soniq,
  workerEnv: { BENCH_SONIQ_RESULT_RETENTION: "0" },
  schema: SONIQ_RETENTION0_SCHEMA,
  labelSuffix: " retention 0",
  baselineOf: false,
  version: () => `${packageVersion("soniq")} (this checkout, resultRetention: 0)`,
  resultRetention: 0,
};

/** This checkout's Soniq with `prefetch: 0`: what the prefetch window buys, side by side. */
export const NO_PREFETCH: SoniqBuild = {
  root: REPO_ROOT,
  load: async () => Soniq,
  workerEnv: { BENCH_SONIQ_PREFETCH: "0" },
  schema: SONIQ_NO_PREFETCH_SCHEMA,
  labelSuffix: " prefetch 0",
  baselineOf: true,
  version: () => `${packageVersion("soniq")} (this checkout, prefetch: 0)`,
  prefetch: 0,
};

const CURRENT: SoniqBuild = {
  root: REPO_ROOT,
  load: async () => Soniq,
  workerEnv: {},
  schema: SONIQ_SCHEMA,
  labelSuffix: "",
  baselineOf: false,
  version: () => packageVersion("soniq"),
};

/** The build of a `--baseline` ref. */
export function baselineBuild(baseline: Baseline, resultRetention?: number): SoniqBuild {
  const index = join(baseline.root, "dist", "index.js");
  const keepsNothing = resultRetention !== undefined;
  return {
    root: baseline.root,
    load: async () => ((await import(pathToFileURL(index).href)) as { Soniq: SoniqClass }).Soniq,
    workerEnv: {
      BENCH_SONIQ_DIST: index,
      ...(keepsNothing ? { BENCH_SONIQ_RESULT_RETENTION: String(resultRetention) } : {}),
    },
    schema: keepsNothing ? `${SONIQ_BASELINE_SCHEMA}_retention0` : SONIQ_BASELINE_SCHEMA,
    labelSuffix: `${keepsNothing ? " retention 0" : ""} @${baseline.short}`,
    baselineOf: true,
    version: () =>
      `${baseline.version} (baseline ${baseline.ref === baseline.commit ? "" : `${baseline.ref} = `}commit ${baseline.commit}, built in a temporary folder, dependencies ${baseline.dependencies}${keepsNothing ? ", resultRetention: 0" : ""})`,
    ...(keepsNothing ? { resultRetention } : {}),
  };
}

/** Why the `…-prefetch0` variants skip the history workload. */
const PREFETCH_HISTORY =
  "not measured: the prefetch window does not change what history costs (see the column with the defaults)";

class SoniqAdapter implements Adapter {
  private soniq: Soniq | undefined;
  private job: JobDefinition<BenchPayload, void> | undefined;
  private keyedJob: JobDefinition<BenchPayload, void> | undefined;
  private worker: Worker | undefined;
  private handler: BenchHandler = () => undefined;

  constructor(
    private readonly SoniqOf: SoniqClass,
    private readonly build: SoniqBuild,
    private readonly databaseUrl: string,
    private readonly clear: () => Promise<void>,
    private readonly dispose: () => void,
  ) {}

  async setup(): Promise<void> {
    const soniq = new this.SoniqOf(
      soniqOptions(
        this.databaseUrl,
        "warn",
        this.build.schema,
        this.build.prefetch,
        this.build.resultRetention,
      ),
    );
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

  /**
   * Defines the keyed job on first use (before the worker starts: the drain fills first), so a
   * `--baseline` build from before per-key concurrency fails here, in the `flow` rows only.
   */
  async enqueueBulkKeyed(batch: BenchPayload[]): Promise<void> {
    if (!this.soniq) throw new Error("setup() was not called");
    this.keyedJob ??= this.soniq.job<BenchPayload, void>({
      name: SONIQ_KEYED_JOB,
      concurrency: {
        key: (payload: BenchPayload) => `k${payload.i % FLOW_KEYS}`,
        limit: FLOW_LIMIT,
      },
      handler: (payload) => this.handler(payload),
    });
    await this.keyedJob.enqueueMany(batch.map((args) => ({ args })));
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
        join(this.build.root, "dist", "cli", "main.js"),
        "worker",
        join(REPO_ROOT, "bench", "worker-processes", "soniq-jobs.ts"),
        "--concurrency",
        String(concurrency),
      ],
      env: {
        ...this.build.workerEnv,
        BENCH_SONIQ_DATABASE_URL: this.databaseUrl,
        BENCH_SONIQ_SCHEMA: this.build.schema,
      },
    };
  }

  fillHistory(size: number): Promise<HistoryFill> {
    if (this.databaseUrl.startsWith("sqlite:")) {
      const db = new Database(this.databaseUrl.slice("sqlite:".length));
      db.pragma("busy_timeout = 10000");
      try {
        return Promise.resolve(fillSqliteHistory(db, size));
      } finally {
        db.close();
      }
    }
    return withClient(this.databaseUrl, (client) => fillHistory(client, this.build.schema, size));
  }

  operatorApi(): OperatorApi {
    if (!this.soniq) throw new Error("setup() was not called");
    return this.soniq;
  }

  /**
   * A batch of `children` no-op members with an onComplete callback: the callback waits on every
   * member (one edge each) and is released by the transaction that ends the last one. A batch,
   * not `soniq.flow`: a flow holds at most 10,000 jobs, its root included.
   */
  async fanIn(children: number, concurrency: number, timeoutMs: number): Promise<number> {
    const soniq = this.soniq;
    if (!soniq) throw new Error("setup() was not called");
    let firstStart = 0;
    let rootEnd = 0;
    let resolve!: () => void;
    const ended = new Promise<void>((r) => {
      resolve = r;
    });
    const child = soniq.job<{ i: number }, void>({
      name: "bench.fanin.child",
      handler: () => {
        if (firstStart === 0) firstStart = performance.now();
      },
    });
    const root = soniq.job<object, void>({
      name: "bench.fanin.root",
      handler: () => {
        rootEnd = performance.now();
        resolve();
      },
    });
    await soniq.batch({
      jobs: Array.from({ length: children }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
    });
    const worker = soniq.worker({ concurrency });
    await worker.start();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        ended,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the fan-in did not end within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
      await worker.stop();
    }
    return (rootEnd - firstStart) / 1000;
  }

  async teardown(): Promise<void> {
    await this.worker?.stop();
    await this.soniq?.close();
    this.dispose();
  }
}

/** `soniq-pg` → `soniq-baseline-pg` for a baseline, `soniq-pg-prefetch0` for {@link NO_PREFETCH}. */
function variantName(base: string, build: SoniqBuild): string {
  if (build.prefetch !== undefined) return `${base}-prefetch0`;
  if (build.resultRetention !== undefined) {
    return `${build.baselineOf ? base.replace("soniq-", "soniq-baseline-") : base}-retention0`;
  }
  return build.baselineOf ? base.replace("soniq-", "soniq-baseline-") : base;
}

/** The loaded class of a factory, between prepare() and create(). */
function loaded(name: string, SoniqOf: SoniqClass | undefined): SoniqClass {
  if (!SoniqOf) throw new Error(`${name}: prepare() was not called`);
  return SoniqOf;
}

/**
 * Soniq on PostgreSQL, tables in schema `bench_soniq` (a baseline's: `bench_soniq_baseline`).
 * Between measurements the job, dead-letter, worker and counter tables are emptied (those that
 * exist, so a baseline with fewer tables works too). The history workload writes finished jobs
 * into the schema by SQL (../history.ts).
 */
export function soniqPostgres(pgUrl: string, build: SoniqBuild = CURRENT): AdapterFactory {
  const schema = build.schema;
  const name = variantName("soniq-pg", build);
  let SoniqOf: SoniqClass | undefined;
  const clear = () =>
    sql(
      pgUrl,
      `DO $$ DECLARE t text; BEGIN
         FOREACH t IN ARRAY ARRAY['soniq_jobs', 'soniq_finished_jobs', 'soniq_finished_store',
                                  'soniq_dedup_keys', 'soniq_dead_letter_jobs', 'soniq_workers',
                                  'soniq_job_counts', 'soniq_flow_nodes', 'soniq_job_deps'] LOOP
           -- Tables only: since migration 011 soniq_finished_jobs is a view over
           -- soniq_finished_store (partitioned, truncated with its partitions).
           IF (SELECT relkind FROM pg_class
               WHERE oid = to_regclass(format('%I.%I', '${schema}', t))) IN ('r', 'p') THEN
             EXECUTE format('TRUNCATE %I.%I', '${schema}', t);
           END IF;
         END LOOP;
       END $$`,
    );
  return {
    name,
    label: `Soniq PG${build.labelSuffix}`,
    isSoniq: !build.baselineOf,
    baselineOf: build.baselineOf
      ? build.resultRetention === undefined
        ? "soniq-pg"
        : "soniq-pg-retention0"
      : undefined,
    version: build.version,
    database: "postgres",
    configuration: `schema ${schema}; poolSize 10, pollInterval 1 s, LISTEN/NOTIFY, prefetch ${build.prefetch ?? "500 (adaptive)"}${build.prefetch === undefined ? " (defaults)" : ""}; resultRetention ${build.resultRetention ?? "7 days (default)"}; logLevel warn; enqueueMany per batch; worker({ concurrency })`,
    check: () => checkPostgres(pgUrl),
    async prepare() {
      SoniqOf = await build.load();
      await sql(pgUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      const soniq = new SoniqOf(soniqOptions(pgUrl, "warn", schema));
      try {
        await soniq.setup();
      } finally {
        await soniq.close();
      }
    },
    create: () => new SoniqAdapter(loaded(name, SoniqOf), build, pgUrl, clear, () => undefined),
    ...(build.prefetch === undefined ? {} : { historyNotMeasured: PREFETCH_HISTORY }),
    cleanup: () => sql(pgUrl, `DROP SCHEMA IF EXISTS ${schema} CASCADE`),
  };
}

/** Soniq on SQLite: a fresh database file per measurement in a temporary folder. */
export function soniqSqlite(build: SoniqBuild = CURRENT): AdapterFactory {
  const name = variantName("soniq-sqlite", build);
  let SoniqOf: SoniqClass | undefined;
  let dir: string | undefined;
  let seq = 0;
  const removeDb = (path: string) => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  };
  return {
    name,
    label: `Soniq SQLite${build.labelSuffix}`,
    isSoniq: !build.baselineOf,
    baselineOf: build.baselineOf ? "soniq-sqlite" : undefined,
    version: build.version,
    database: "in-process",
    configuration: `a new file per measurement in the OS temp folder; WAL, synchronous=NORMAL (defaults); pollInterval 1 s (in-process wake-ups only); prefetch ${build.prefetch ?? "500 (adaptive, default)"}; logLevel warn`,
    check: async () => null,
    ...(build.prefetch === undefined ? {} : { historyNotMeasured: PREFETCH_HISTORY }),
    async prepare() {
      SoniqOf = await build.load();
      dir = mkdtempSync(join(tmpdir(), "soniq-bench-"));
    },
    create() {
      if (!dir) throw new Error(`${name}: prepare() was not called`);
      seq += 1;
      const path = join(dir, `bench-${seq}.db`);
      removeDb(path);
      return new SoniqAdapter(
        loaded(name, SoniqOf),
        build,
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
