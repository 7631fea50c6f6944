/**
 * History (issue 24 item 11): does a drain, and does what an operator reads, stay fast when the
 * finished jobs of a busy week are present?
 *
 * One measurement, on one adapter (the storage is emptied once, at its set-up):
 * 1. one untimed warm-up drain, then `historyDrainJobs` no-op jobs (10,000, also with `--quick`:
 *    a shorter drain is noise) with 10, then 100 in flight on the empty schema (as the `drain`
 *    workload: throughput from the first handler start to the last handler end);
 * 2. write `historySize` finished jobs by SQL as the product stores them, then `VACUUM ANALYZE`
 *    and `CHECKPOINT` (../history.ts: one `INSERT … SELECT generate_series(…)` plus the counters;
 *    SQLite: a recursive CTE, then `ANALYZE`);
 * 3. a first drain right after the fill (10 in flight, its own row: the fill has pushed the live
 *    table's pages out of the caches, which a production table with history is not), then the same
 *    two drains as in step 1, next to that history; the ratio of each to its empty-schema drain of
 *    step 1 (same measurement, minutes apart);
 * 4. each operator read of issue 24 item 7 through the public API (`soniq.stats()`,
 *    `soniq.jobs.list(…)`, …), `historyReadTimes` calls in a row, milliseconds per call.
 *
 * It runs in the first `historyRounds` rounds only (default 1: a 2M fill takes a minute or two per
 * library, and the ratio is taken within one measurement anyway).
 *
 * Libraries whose adapters cannot write history get one row with the reason (graphile-worker
 * deletes what succeeds; the bench's BullMQ removes completed jobs).
 */
import type { AdapterFactory } from "../adapters/types.js";
import type { BenchConfig } from "../config.js";
import { OPERATOR_READS, timeReads } from "../history.js";
import { withAdapter } from "./common.js";
import { drainOn } from "./drain.js";
import type { MetricSpec, Sample, Workload } from "./types.js";

const fmt = (n: number) => n.toLocaleString("en-US");
const CAPS = [10, 100] as const;

/** `2,000,000` → `2M`, `200,000` → `200k`: the history size in a row label. */
function size(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 100 === 0) return `${n / 1e3}k`;
  return fmt(n);
}

function metrics(config: BenchConfig): MetricSpec[] {
  const n = size(config.historySize);
  const drains = CAPS.flatMap((c): MetricSpec[] => [
    {
      key: `history.empty.c${c}`,
      label: `drain ${fmt(config.historyDrainJobs)} no-op jobs, ${c} in flight, empty schema`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: `history.full.c${c}`,
      label: `… the same with ${n} finished jobs present`,
      unit: "jobs/s",
      better: "higher",
    },
    {
      key: `history.ratio.c${c}`,
      label: `… with ${n} ÷ empty (${c} in flight, same measurement)`,
      unit: "×",
      better: "higher",
    },
  ]);
  return [
    ...drains,
    {
      key: "history.fill",
      label: `write ${n} finished jobs by SQL, VACUUM ANALYZE, CHECKPOINT (set-up; SQLite: ANALYZE)`,
      unit: "s",
      better: "lower",
    },
    {
      key: "history.cold.c10",
      label: `drain ${fmt(config.historyDrainJobs)} no-op jobs, 10 in flight, the first after the fill (cold caches)`,
      unit: "jobs/s",
      better: "higher",
    },
    ...OPERATOR_READS.map(
      (read): MetricSpec => ({
        key: `history.read.${read.key}`,
        label: `${read.label} with ${n} finished (${config.historyReadTimes} calls)`,
        unit: "ms",
        better: "lower",
        pooledQuantile: 0.5,
        showMax: true,
      }),
    ),
  ];
}

/** Every row of a library the workload does not measure: no value, `reason` on the first. */
function notMeasured(config: BenchConfig, reason: string): Record<string, Sample> {
  const out: Record<string, Sample> = {};
  for (const [k, metric] of metrics(config).entries()) {
    out[metric.key] = k === 0 ? { value: Number.NaN, note: reason } : { value: Number.NaN };
  }
  return out;
}

async function run(
  factory: AdapterFactory,
  config: BenchConfig,
  log: (message: string) => void,
): Promise<Record<string, Sample>> {
  if (factory.historyNotMeasured !== undefined) {
    return notMeasured(config, factory.historyNotMeasured);
  }
  return withAdapter(factory, async (adapter) => {
    if (!adapter.fillHistory || !adapter.operatorApi) {
      return notMeasured(config, "not measured: its adapter writes no history");
    }
    const out: Record<string, Sample> = {};
    const empty = new Map<number, Sample>();
    // Untimed: the first drain of a fresh instance and schema (as the first after the fill below).
    await drainOn(adapter, factory, config, config.historyDrainJobs, CAPS[0], "noop");
    for (const c of CAPS) {
      const r = await drainOn(adapter, factory, config, config.historyDrainJobs, c, "noop");
      empty.set(c, r.sample);
      out[`history.empty.c${c}`] = r.sample;
    }
    const fill = await adapter.fillHistory(config.historySize);
    log(
      `  ${factory.name}: ${fmt(fill.rows)} finished jobs in ${fill.table}: insert ${fill.insertSeconds.toFixed(1)} s, then statistics ${fill.vacuumSeconds.toFixed(1)} s`,
    );
    out["history.fill"] = { value: fill.insertSeconds + fill.vacuumSeconds };
    const cold = await drainOn(adapter, factory, config, config.historyDrainJobs, 10, "noop");
    out["history.cold.c10"] = cold.sample;
    for (const c of CAPS) {
      const r = await drainOn(adapter, factory, config, config.historyDrainJobs, c, "noop");
      out[`history.full.c${c}`] = r.sample;
      const before = empty.get(c);
      if (before) {
        out[`history.ratio.c${c}`] = {
          value: r.sample.value / before.value,
          capped: Boolean(r.sample.capped || before.capped),
        };
      }
    }
    const timed = await timeReads(adapter.operatorApi(), config.historyReadTimes);
    for (const { read, ms } of timed) {
      const sorted = [...ms].sort((a, b) => a - b);
      out[`history.read.${read.key}`] = {
        value: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN,
        raw: ms,
      };
    }
    return out;
  });
}

export const historyWorkload: Workload = {
  id: "history",
  section: (config) =>
    `History: ${fmt(config.historySize)} finished jobs (issue 24; \`--history-size\`)`,
  metrics,
  rounds: (config) => config.historyRounds,
  run: (factory, { config, log }) => run(factory, config, log),
};
