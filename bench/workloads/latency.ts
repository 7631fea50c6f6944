/**
 * Idle pick-up latency: an idle in-process worker (10 slots); one job at a time is enqueued
 * with the single-job API and the time from the start of the enqueue call to the start of its
 * handler is recorded. After each handler a pause drawn uniformly from 20–520 ms lets the
 * worker go idle again; its randomness over a whole polling period of the fastest poller
 * (pg-boss, 500 ms) keeps samples from locking onto the poll phase, so a poller shows its real
 * average delay. p50/p90/p99 in the table are over the samples of all rounds pooled; the range
 * is that of the per-round values.
 */
import { sleep } from "../payload.js";
import { quantile } from "../stats.js";
import { withAdapter, withTimeout } from "./common.js";
import type { Sample, Workload } from "./types.js";

const WARMUP = 5;
const SAMPLE_TIMEOUT_MS = 10_000;

export const latencyWorkload: Workload = {
  id: "latency",
  metrics: (config) =>
    (["p50", "p90", "p99"] as const).map((p) => ({
      key: `latency.${p}`,
      label: `idle pick-up latency ${p} (enqueue call → handler start, ${config.latencySamples}/round)`,
      unit: "ms",
      better: "lower" as const,
      pooledQuantile: Number(p.slice(1)) / 100,
    })),
  async run(factory, { config }) {
    return withAdapter(factory, async (adapter) => {
      const waiting = new Map<number, (at: number) => void>();
      await adapter.startWorker(10, (payload) => {
        const at = performance.now();
        waiting.get(payload.i)?.(at);
      });
      await sleep(500);
      const samples: number[] = [];
      let timeouts = 0;
      for (let n = 0; n < WARMUP + config.latencySamples; n += 1) {
        const started = new Promise<number>((resolve) => waiting.set(n, resolve));
        const t0 = performance.now();
        await adapter.enqueueOne({ i: n });
        let ms: number;
        try {
          ms = (await withTimeout(started, SAMPLE_TIMEOUT_MS, "pick-up")) - t0;
        } catch {
          ms = SAMPLE_TIMEOUT_MS;
          timeouts += 1;
        }
        waiting.delete(n);
        if (n >= WARMUP) samples.push(ms);
        await sleep(20 + Math.random() * 500);
      }
      await adapter.stopWorker();
      const note = timeouts > 0 ? `${timeouts} samples timed out` : undefined;
      const sample = (q: number): Sample => ({
        value: quantile(samples, q),
        raw: samples,
        ...(note ? { note } : {}),
      });
      return {
        "latency.p50": sample(0.5),
        "latency.p90": sample(0.9),
        "latency.p99": sample(0.99),
      };
    });
  },
};
