/**
 * Enqueue rates. Bulk: N jobs through the library's bulk API in batches of `bulkBatch`, one
 * call after another, into an empty queue (after one untimed warm-up batch). Single: one job
 * per call, each awaited before the next (a request handler enqueueing one job at a time).
 */
import { payloads } from "../payload.js";
import { withAdapter } from "./common.js";
import type { Sample, Workload } from "./types.js";

const fmt = (n: number) => n.toLocaleString("en-US");

export const enqueueWorkload: Workload = {
  id: "enqueue",
  metrics: (config) => [
    ...config.bulkSizes.map((size, k) => ({
      key: `enqueue.bulk.${k}`,
      label: `bulk enqueue, N=${fmt(size)} (batches of ${fmt(config.bulkBatch)})`,
      unit: "jobs/s",
      better: "higher" as const,
    })),
    {
      key: "enqueue.single",
      label: `single enqueue, ${fmt(config.singleCalls)} sequential calls`,
      unit: "jobs/s",
      better: "higher",
    },
  ],
  async run(factory, { config }) {
    const out: Record<string, Sample> = {};
    for (const [k, size] of config.bulkSizes.entries()) {
      out[`enqueue.bulk.${k}`] = await withAdapter(factory, async (adapter) => {
        await adapter.enqueueBulk(payloads(Math.min(100, config.bulkBatch), 1_000_000_000));
        const start = performance.now();
        for (let first = 0; first < size; first += config.bulkBatch) {
          await adapter.enqueueBulk(payloads(Math.min(config.bulkBatch, size - first), first));
        }
        return { value: size / ((performance.now() - start) / 1000) };
      });
    }
    out["enqueue.single"] = await withAdapter(factory, async (adapter) => {
      for (let i = 0; i < 20; i += 1) await adapter.enqueueOne({ i: 1_000_000_000 + i });
      const start = performance.now();
      for (let i = 0; i < config.singleCalls; i += 1) await adapter.enqueueOne({ i });
      return { value: config.singleCalls / ((performance.now() - start) / 1000) };
    });
    return out;
  },
};
