/**
 * Fan-in (issue 29, "Done when": a fan-in of 10,000 children completes within 1.2× the time of
 * draining 10,000 independent jobs). On one adapter, one after the other:
 * 1. an untimed warm-up drain of `fanInJobs` no-op jobs (the first drain of a fresh instance);
 * 2. the drain: `fanInJobs` independent no-op jobs queued first (untimed), an in-process worker
 *    with {@link CONCURRENCY} in flight; seconds from the first handler start to the last end;
 * 3. the fan-in: one job waiting on `fanInJobs` no-op children, enqueued first (untimed; a batch
 *    with an onComplete callback, the adapter's `fanIn`), the same worker settings; seconds from
 *    the first child's handler start to the waiting job's handler end — so every child's end,
 *    its edge, the count-down of the one waiting row, the release and the claim of the released
 *    job are inside it;
 * 4. the ratio fan-in ÷ drain (same instance, seconds apart).
 *
 * Soniq only (libraries whose adapter has no `fanIn` get one row with the reason).
 */
import type { Adapter, AdapterFactory } from "../adapters/types.js";
import type { BenchConfig } from "../config.js";
import { payloads } from "../payload.js";
import { deferred, withAdapter } from "./common.js";
import type { MetricSpec, Sample, Workload } from "./types.js";

const fmt = (n: number) => n.toLocaleString("en-US");

/** Handlers in flight in both measurements. */
const CONCURRENCY = 10;

/** The longest either measurement may take before it fails the row, in milliseconds. */
const TIMEOUT_MS = 120_000;

function metrics(config: BenchConfig): MetricSpec[] {
  const n = fmt(config.fanInJobs);
  return [
    {
      key: "fanin.drain",
      label: `drain ${n} independent no-op jobs, ${CONCURRENCY} in flight (first start → last end)`,
      unit: "s",
      better: "lower",
    },
    {
      key: "fanin.flow",
      label: `fan-in: one job waiting on ${n} no-op children, ${CONCURRENCY} in flight (first child start → its end)`,
      unit: "s",
      better: "lower",
    },
    {
      key: "fanin.ratio",
      label: "… fan-in ÷ drain (same measurement; issue 29's target ≤ 1.2)",
      unit: "×",
      better: "lower",
    },
  ];
}

/** Seconds to drain `jobs` queued no-op jobs with `concurrency` in flight. */
async function timeDrain(adapter: Adapter, config: BenchConfig, jobs: number): Promise<number> {
  for (let start = 0; start < jobs; start += config.bulkBatch) {
    await adapter.enqueueBulk(payloads(Math.min(config.bulkBatch, jobs - start), start));
  }
  let handled = 0;
  let firstStart = 0;
  let lastEnd = 0;
  const all = deferred();
  await adapter.startWorker(CONCURRENCY, () => {
    if (firstStart === 0) firstStart = performance.now();
    handled += 1;
    lastEnd = performance.now();
    if (handled >= jobs) all.resolve();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      all.promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the drain did not end within ${TIMEOUT_MS} ms`)),
          TIMEOUT_MS,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
    await adapter.stopWorker();
  }
  return (lastEnd - firstStart) / 1000;
}

async function run(factory: AdapterFactory, config: BenchConfig): Promise<Record<string, Sample>> {
  return withAdapter(factory, async (adapter) => {
    if (!adapter.fanIn) {
      return {
        "fanin.drain": { value: Number.NaN, note: "not measured: no job dependencies" },
        "fanin.flow": { value: Number.NaN },
        "fanin.ratio": { value: Number.NaN },
      };
    }
    const jobs = config.fanInJobs;
    await timeDrain(adapter, config, jobs); // untimed warm-up
    const drain = await timeDrain(adapter, config, jobs);
    const flow = await adapter.fanIn(jobs, CONCURRENCY, TIMEOUT_MS);
    return {
      "fanin.drain": { value: drain },
      "fanin.flow": { value: flow },
      "fanin.ratio": { value: flow / drain },
    };
  });
}

export const fanInWorkload: Workload = {
  id: "fanin",
  metrics,
  run: (factory, { config }) => run(factory, config),
};
