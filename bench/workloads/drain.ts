/**
 * Drain throughput: the queue is filled first (untimed), then an in-process worker with an
 * in-flight cap runs them. Throughput = jobs handled / (last handler end − first handler
 * start), so worker start-up is not counted. A drain stops at the time box and reports what
 * it got (marked *). Handlers: no-op, a 5 ms async wait, or a fixed CPU-bound computation.
 * Every job number is checked off: a job handled twice is reported. The no-op drains also report
 * CPU per job (../cpu-meter.ts): the worker process's over the same window, and the database's
 * (the PostgreSQL backends serving this process, or the Redis server) from just before the worker
 * starts to the last handler's end.
 */
import type { Adapter, AdapterFactory } from "../adapters/types.js";
import type { BenchConfig } from "../config.js";
import {
  type DatabaseReading,
  PostgresCpu,
  readProcess,
  redisServerPid,
  selfCpuMicros,
  usageBetween,
} from "../cpu-meter.js";
import { type BenchPayload, cpuWork, sleep } from "../payload.js";
import { deferred, fill, withAdapter } from "./common.js";
import type { MetricSpec, Sample, Workload } from "./types.js";

export type HandlerKind = "noop" | "io5ms" | "cpu";

const fmt = (n: number) => n.toLocaleString("en-US");

async function work(kind: HandlerKind, payload: BenchPayload): Promise<void> {
  if (kind === "io5ms") await sleep(5);
  else if (kind === "cpu") cpuWork(payload.i);
}

/** What one drain measured. */
export interface DrainResult {
  /** Throughput (jobs/s). */
  sample: Sample;
  /** The worker process's CPU per job, in microseconds (first handler start → last end). */
  workerMicrosPerJob: number;
  /** The database's CPU per job, in microseconds (undefined for SQLite: it is in the worker's). */
  databaseMicrosPerJob?: number;
  /** WAL bytes per job (PostgreSQL, server-wide). */
  walBytesPerJob?: number;
  /** Jobs the CPU figures are divided by. */
  jobs: number;
}

/** Starts a database CPU reading for `factory` (see ../cpu-meter.ts). */
async function databaseMeter(
  factory: AdapterFactory,
  config: BenchConfig,
): Promise<{ read(): Promise<DatabaseReading>; close(): Promise<void> } | undefined> {
  if (factory.database === "postgres") {
    const meter = new PostgresCpu(config.pgUrl);
    return { read: () => meter.read(), close: () => meter.close() };
  }
  if (factory.database === "redis") {
    const pid = await redisServerPid(config.redisUrl);
    if (pid === undefined) return undefined;
    return { read: async () => readProcess(pid), close: async () => undefined };
  }
  return undefined;
}

/** One drain of `jobs` jobs with `concurrency` in flight, with its CPU split. */
export async function runDrain(
  factory: AdapterFactory,
  config: BenchConfig,
  jobs: number,
  concurrency: number,
  kind: HandlerKind,
  /** Awaited right before the worker starts and right after the drain (profile harness). */
  around?: { before(): void | Promise<void>; after(): void | Promise<void> },
): Promise<DrainResult> {
  return withAdapter(factory, (adapter) =>
    drainOn(adapter, factory, config, jobs, concurrency, kind, around),
  );
}

/**
 * {@link runDrain} on an adapter already set up (its storage is not emptied first: the history
 * workload drains next to the finished jobs it wrote). `enqueue` fills the queue (default: the
 * adapter's `enqueueBulk`; the flow workload's keyed jobs: `enqueueBulkKeyed`).
 */
export async function drainOn(
  adapter: Adapter,
  factory: AdapterFactory,
  config: BenchConfig,
  jobs: number,
  concurrency: number,
  kind: HandlerKind,
  around?: { before(): void | Promise<void>; after(): void | Promise<void> },
  enqueue?: (batch: BenchPayload[]) => Promise<void>,
): Promise<DrainResult> {
  await fill(adapter, jobs, config.bulkBatch, enqueue);
  const meter = await databaseMeter(factory, config);
  try {
    const seen = new Uint8Array(jobs);
    let handled = 0;
    let duplicates = 0;
    let firstStart = 0;
    let lastEnd = 0;
    let cpuAtFirst = 0;
    let cpuAtLast = 0;
    const all = deferred();
    const handler = async (payload: BenchPayload) => {
      if (firstStart === 0) {
        firstStart = performance.now();
        cpuAtFirst = selfCpuMicros();
      }
      if (seen[payload.i]) duplicates += 1;
      seen[payload.i] = 1;
      await work(kind, payload);
      handled += 1;
      lastEnd = performance.now();
      if (handled >= jobs) {
        cpuAtLast = selfCpuMicros();
        all.resolve();
      }
    };
    const before = await meter?.read();
    await around?.before();
    const boxed = deferred();
    const timer = setTimeout(() => boxed.resolve(), config.timeBoxMs);
    await adapter.startWorker(concurrency, handler);
    await Promise.race([all.promise, boxed.promise]);
    clearTimeout(timer);
    if (cpuAtLast === 0) cpuAtLast = selfCpuMicros();
    await around?.after();
    const after = await meter?.read();
    await adapter.stopWorker();
    if (handled < 2) throw new Error(`only ${handled} jobs ran within the time box`);
    const sample: Sample = {
      value: handled / ((lastEnd - firstStart) / 1000),
      capped: handled < jobs,
    };
    if (duplicates > 0) sample.note = `${duplicates} jobs ran twice`;
    const result: DrainResult = {
      sample,
      workerMicrosPerJob: (cpuAtLast - cpuAtFirst) / handled,
      jobs: handled,
    };
    if (before && after) {
      const usage = usageBetween(before, after);
      result.databaseMicrosPerJob = usage.cpuMicros / handled;
      if (usage.walBytes !== undefined) result.walBytesPerJob = usage.walBytes / handled;
    }
    return result;
  } finally {
    await meter?.close();
  }
}

/** One drain's throughput (see {@link runDrain}). */
export async function measureDrain(
  factory: AdapterFactory,
  config: BenchConfig,
  jobs: number,
  concurrency: number,
  kind: HandlerKind,
): Promise<Sample> {
  return (await runDrain(factory, config, jobs, concurrency, kind)).sample;
}

/** The drain rows of one in-flight cap: throughput, then CPU per job (worker, database). */
async function drainRows(
  factory: AdapterFactory,
  config: BenchConfig,
  concurrency: number,
): Promise<Record<string, Sample>> {
  const r = await runDrain(factory, config, config.drainJobs, concurrency, "noop");
  const key = `drain.noop.c${concurrency}`;
  const rows: Record<string, Sample> = {
    [key]: r.sample,
    [`${key}.cpu.worker`]: { value: r.workerMicrosPerJob, capped: r.sample.capped },
  };
  if (r.databaseMicrosPerJob !== undefined) {
    rows[`${key}.cpu.database`] = { value: r.databaseMicrosPerJob, capped: r.sample.capped };
  }
  return rows;
}

const cpuRows = (concurrency: number): MetricSpec[] => [
  {
    key: `drain.noop.c${concurrency}.cpu.worker`,
    label: `… CPU per job, worker process (${concurrency} in flight; SQLite: database included)`,
    unit: "µs",
    better: "lower",
  },
  {
    key: `drain.noop.c${concurrency}.cpu.database`,
    label: `… CPU per job, database (${concurrency} in flight; PG backends serving it, or Redis)`,
    unit: "µs",
    better: "lower",
  },
];

export const drainWorkload: Workload = {
  id: "drain",
  metrics: (config) => [
    {
      key: "drain.noop.c10",
      label: `drain ${fmt(config.drainJobs)} no-op jobs, 10 in flight`,
      unit: "jobs/s",
      better: "higher",
    },
    ...cpuRows(10),
    {
      key: "drain.noop.c100",
      label: `drain ${fmt(config.drainJobs)} no-op jobs, 100 in flight`,
      unit: "jobs/s",
      better: "higher",
    },
    ...cpuRows(100),
  ],
  async run(factory, { config }) {
    return {
      ...(await drainRows(factory, config, 10)),
      ...(await drainRows(factory, config, 100)),
    };
  },
};

export const handlersWorkload: Workload = {
  id: "handlers",
  metrics: (config) => [
    {
      key: "handlers.io5ms",
      label: `${fmt(config.ioJobs)} jobs with a 5 ms async handler, 10 in flight (ideal 2,000)`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: "handlers.cpu",
      label: `${fmt(config.cpuJobs)} jobs with a CPU-bound handler, 10 in flight`,
      unit: "jobs/s",
      better: "higher",
    },
  ],
  async run(factory, { config }) {
    return {
      "handlers.io5ms": await measureDrain(factory, config, config.ioJobs, 10, "io5ms"),
      "handlers.cpu": await measureDrain(factory, config, config.cpuJobs, 10, "cpu"),
    };
  },
};
