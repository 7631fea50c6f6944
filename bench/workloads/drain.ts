/**
 * Drain throughput: the queue is filled first (untimed), then an in-process worker with an
 * in-flight cap runs them. Throughput = jobs handled / (last handler end − first handler
 * start), so worker start-up is not counted. A drain stops at the time box and reports what
 * it got (marked *). Handlers: no-op, a 5 ms async wait, or a fixed CPU-bound computation.
 * Every job number is checked off: a job handled twice is reported.
 */
import type { AdapterFactory } from "../adapters/types.js";
import type { BenchConfig } from "../config.js";
import { type BenchPayload, cpuWork, sleep } from "../payload.js";
import { deferred, fill, withAdapter } from "./common.js";
import type { Sample, Workload } from "./types.js";

export type HandlerKind = "noop" | "io5ms" | "cpu";

const fmt = (n: number) => n.toLocaleString("en-US");

async function work(kind: HandlerKind, payload: BenchPayload): Promise<void> {
  if (kind === "io5ms") await sleep(5);
  else if (kind === "cpu") cpuWork(payload.i);
}

/** One drain of `jobs` jobs with `concurrency` in flight. */
export async function measureDrain(
  factory: AdapterFactory,
  config: BenchConfig,
  jobs: number,
  concurrency: number,
  kind: HandlerKind,
): Promise<Sample> {
  return withAdapter(factory, async (adapter) => {
    await fill(adapter, jobs, config.bulkBatch);
    const seen = new Uint8Array(jobs);
    let handled = 0;
    let duplicates = 0;
    let firstStart = 0;
    let lastEnd = 0;
    const all = deferred();
    const handler = async (payload: BenchPayload) => {
      if (firstStart === 0) firstStart = performance.now();
      if (seen[payload.i]) duplicates += 1;
      seen[payload.i] = 1;
      await work(kind, payload);
      handled += 1;
      lastEnd = performance.now();
      if (handled >= jobs) all.resolve();
    };
    const boxed = deferred();
    const timer = setTimeout(() => boxed.resolve(), config.timeBoxMs);
    await adapter.startWorker(concurrency, handler);
    await Promise.race([all.promise, boxed.promise]);
    clearTimeout(timer);
    await adapter.stopWorker();
    if (handled < 2) throw new Error(`only ${handled} jobs ran within the time box`);
    const sample: Sample = {
      value: handled / ((lastEnd - firstStart) / 1000),
      capped: handled < jobs,
    };
    if (duplicates > 0) sample.note = `${duplicates} jobs ran twice`;
    return sample;
  });
}

export const drainWorkload: Workload = {
  id: "drain",
  metrics: (config) => [
    {
      key: "drain.noop.c10",
      label: `drain ${fmt(config.drainJobs)} no-op jobs, 10 in flight`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: "drain.noop.c100",
      label: `drain ${fmt(config.drainJobs)} no-op jobs, 100 in flight`,
      unit: "jobs/s",
      better: "higher",
    },
  ],
  async run(factory, { config }) {
    return {
      "drain.noop.c10": await measureDrain(factory, config, config.drainJobs, 10, "noop"),
      "drain.noop.c100": await measureDrain(factory, config, config.drainJobs, 100, "noop"),
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
