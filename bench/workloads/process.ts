/**
 * Real worker processes (Soniq: `node dist/cli/main.js worker <module>`; peers: their runner in
 * a script of ./../worker-processes/), 10 slots each, fed by an in-process adapter:
 *
 * - idle SIGTERM: start, run one ping job (so the worker is fully up), idle 1 s, SIGTERM, time
 *   until the process has exited;
 * - busy SIGTERM: ten jobs that each sleep `busyHandlerMs` are started; 100 ms after the tenth
 *   has started, SIGTERM; time until exit (graceful: the handlers finish), and how far the exit
 *   lies beyond the end of the last handler (start report + `busyHandlerMs`);
 * - peak RSS: the process drains `rssJobs` no-op jobs (or what it gets within the time box);
 *   then VmHWM (peak resident set) is read from /proc.
 *
 * Every process loads TypeScript through tsx (Soniq's CLI registers it for a .ts module; the
 * peers run under `node --import tsx`), so all carry the same loader overhead.
 */
import type { Adapter, AdapterFactory } from "../adapters/types.js";
import type { BenchConfig } from "../config.js";
import { payloads, sleep } from "../payload.js";
import { WorkerProcess } from "../worker-processes/parent.js";
import { withAdapter } from "./common.js";
import type { Sample, Workload } from "./types.js";

const CONCURRENCY = 10;
const READY_TIMEOUT_MS = 30_000;
const PING = 999_999_000;

async function withWorkerProcess<T>(
  adapter: Adapter,
  fn: (proc: WorkerProcess) => Promise<T>,
): Promise<T> {
  const proc = new WorkerProcess(adapter.workerProcess(CONCURRENCY));
  try {
    return await fn(proc);
  } catch (err) {
    const tail = proc.stderr;
    throw new Error(`${String(err)}${tail ? `\n    worker stderr: ${tail}` : ""}`);
  } finally {
    await proc.kill();
  }
}

/** Enqueues a ping job and waits until the process reports it started. */
async function ready(adapter: Adapter, proc: WorkerProcess): Promise<void> {
  await adapter.enqueueOne({ i: PING, k: "ping" });
  if (!(await proc.waitFor(() => proc.started.has(PING), READY_TIMEOUT_MS))) {
    throw new Error("the worker process did not run the ping job");
  }
}

function exitNote(exit: { code: number | null; signal: string | null }): string | undefined {
  if (exit.code === 0 || exit.signal === "SIGTERM") return undefined;
  return `exit ${exit.code ?? exit.signal}`;
}

async function idleSigterm(factory: AdapterFactory): Promise<Sample> {
  return withAdapter(factory, (adapter) =>
    withWorkerProcess(adapter, async (proc) => {
      await ready(adapter, proc);
      await sleep(1000);
      const exit = await proc.terminate();
      const note = exitNote(exit);
      return { value: exit.ms, ...(note ? { note } : {}) };
    }),
  );
}

async function busySigterm(
  factory: AdapterFactory,
  config: BenchConfig,
): Promise<{ total: Sample; beyond: Sample }> {
  return withAdapter(factory, (adapter) =>
    withWorkerProcess(adapter, async (proc) => {
      await ready(adapter, proc);
      await adapter.enqueueBulk(
        payloads(CONCURRENCY).map((p) => ({ ...p, k: "sleep" as const, ms: config.busyHandlerMs })),
      );
      const tenStarted = () => [...Array(CONCURRENCY).keys()].every((i) => proc.started.has(i));
      if (!(await proc.waitFor(tenStarted, READY_TIMEOUT_MS))) {
        throw new Error("the ten sleeping jobs did not all start");
      }
      await sleep(100);
      const sent = performance.now();
      const exit = await proc.terminate();
      const lastStart = Math.max(
        ...[...Array(CONCURRENCY).keys()].map((i) => proc.started.get(i) ?? 0),
      );
      const handlersEnd = lastStart + config.busyHandlerMs;
      const note = exitNote(exit);
      return {
        total: { value: exit.ms, ...(note ? { note } : {}) },
        beyond: { value: sent + exit.ms - handlersEnd, ...(note ? { note } : {}) },
      };
    }),
  );
}

async function peakRss(factory: AdapterFactory, config: BenchConfig): Promise<Sample> {
  return withAdapter(factory, async (adapter) => {
    for (let first = 0; first < config.rssJobs; first += config.bulkBatch) {
      await adapter.enqueueBulk(
        payloads(Math.min(config.bulkBatch, config.rssJobs - first), first),
      );
    }
    return withWorkerProcess(adapter, async (proc) => {
      const target = Math.floor(config.rssJobs / 100) * 100;
      const done = await proc.waitFor(() => proc.finished >= target, config.timeBoxMs + 5000);
      const mib = proc.peakRssMiB(); // VmHWM: the high-water mark, so one reading at the end
      if (mib === undefined) {
        throw new Error(`the worker process exited during the drain (${proc.finished} jobs done)`);
      }
      await proc.terminate();
      return { value: mib, capped: !done };
    });
  });
}

export const processWorkload: Workload = {
  id: "process",
  metrics: (config) => [
    {
      key: "process.sigterm.idle",
      label: "SIGTERM → exit, idle worker process",
      unit: "ms",
      better: "lower",
    },
    {
      key: "process.sigterm.busy",
      label: `SIGTERM → exit, 10 jobs in flight (each ${config.busyHandlerMs} ms, SIGTERM 100 ms after the 10th started)`,
      unit: "ms",
      better: "lower",
    },
    {
      key: "process.sigterm.beyond",
      label: "  … of which after the last handler ended",
      unit: "ms",
      better: "lower",
    },
    {
      key: "process.rss",
      label: `peak RSS of the worker process (drain of ${config.rssJobs.toLocaleString("en-US")} no-op jobs)`,
      unit: "MiB",
      better: "lower",
    },
  ],
  async run(factory, { config }) {
    const idle = await idleSigterm(factory);
    const busy = await busySigterm(factory, config);
    const rss = await peakRss(factory, config);
    return {
      "process.sigterm.idle": idle,
      "process.sigterm.busy": busy.total,
      "process.sigterm.beyond": busy.beyond,
      "process.rss": rss,
    };
  },
};
