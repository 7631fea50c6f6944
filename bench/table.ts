/**
 * The result table: one row per metric, one column per library with the median over rounds
 * and the min–max range, and for each Soniq backend its ratio to the best peer (the best of
 * the non-Soniq libraries on that row); with `--baseline`, also this checkout's Soniq ÷ the
 * baseline's. Rendered as Markdown, which also reads in a terminal.
 */
import type { AdapterFactory } from "./adapters/types.js";
import { quantile, summarize } from "./stats.js";
import type { MetricSpec, Sample } from "./workloads/types.js";

/** samples[metricKey][library] = one sample per round that produced one. */
export type Results = Record<string, Record<string, Sample[]>>;
/** errors[metricKey][library] = first error message. */
export type Errors = Record<string, Record<string, string>>;

/** A number with 3 significant digits and a k/M suffix: 1234 → 1.23k, 0.01234 → 0.0123. */
export function compact(x: number): string {
  if (!Number.isFinite(x)) return "–";
  const r = Number(x.toPrecision(3));
  if (Math.abs(r) >= 1e6) return `${Number((r / 1e6).toPrecision(3))}M`;
  if (Math.abs(r) >= 1e3) return `${Number((r / 1e3).toPrecision(3))}k`;
  return String(r);
}

/** The central value of a row: the median over rounds, or the pooled quantile. */
function central(metric: MetricSpec, samples: Sample[] | undefined): number | undefined {
  if (!samples || samples.length === 0) return undefined;
  const raw = samples.flatMap((x) => x.raw ?? []);
  if (metric.pooledQuantile !== undefined && raw.length > 0) {
    return quantile(raw, metric.pooledQuantile);
  }
  return summarize(samples.map((x) => x.value)).median;
}

function cell(
  metric: MetricSpec,
  samples: Sample[] | undefined,
  error: string | undefined,
): string {
  if (!samples || samples.length === 0) return error ? "error" : "–";
  const s = summarize(samples.map((x) => x.value));
  const marks = `${samples.some((x) => x.capped) ? "*" : ""}${samples.some((x) => x.note) || error ? "!" : ""}`;
  const range = s.n > 1 ? ` [${compact(s.min)}–${compact(s.max)}]` : "";
  const raw = samples.flatMap((x) => x.raw ?? []);
  const max = metric.showMax && raw.length > 0 ? ` (max ${compact(Math.max(...raw))})` : "";
  return `${compact(central(metric, samples) ?? s.median)}${max}${range}${marks}`;
}

/** The Markdown table. */
export function renderTable(
  metrics: MetricSpec[],
  factories: AdapterFactory[],
  results: Results,
  errors: Errors,
): string {
  const soniqs = factories.filter((f) => f.isSoniq);
  const peers = factories.filter((f) => !f.isSoniq && f.baselineOf === undefined);
  // [this checkout's Soniq, its baseline] for every baseline whose counterpart runs too.
  const pairs = factories.flatMap((b) => {
    const current = factories.find((f) => f.name === b.baselineOf);
    return current ? [[current, b] as const] : [];
  });
  const header = [
    "workload",
    "unit",
    ...factories.map((f) => f.label),
    ...(peers.length > 0 ? soniqs.map((f) => `${f.label} ÷ best peer`) : []),
    ...pairs.map(([current, b]) => `${current.label} ÷ ${b.label}`),
  ];
  const rows: string[][] = [];
  for (const metric of metrics) {
    const bySample = results[metric.key] ?? {};
    const row = [
      metric.label,
      `${metric.unit} ${metric.better === "higher" ? "↑" : "↓"}`,
      ...factories.map((f) => cell(metric, bySample[f.name], errors[metric.key]?.[f.name])),
    ];
    if (peers.length > 0) {
      let best: { label: string; value: number } | undefined;
      for (const peer of peers) {
        const value = central(metric, bySample[peer.name]);
        if (value === undefined || !Number.isFinite(value)) continue;
        const better =
          best === undefined ||
          (metric.better === "higher" ? value > best.value : value < best.value);
        if (better) best = { label: peer.label, value };
      }
      for (const soniq of soniqs) {
        const value = central(metric, bySample[soniq.name]);
        row.push(
          best && value !== undefined && best.value !== 0
            ? `${(value / best.value).toFixed(2)}× (${best.label})`
            : "–",
        );
      }
    }
    for (const [current, b] of pairs) {
      const now = central(metric, bySample[current.name]);
      const then = central(metric, bySample[b.name]);
      row.push(
        now !== undefined && then !== undefined && then !== 0 && Number.isFinite(then)
          ? `${(now / then).toFixed(2)}×`
          : "–",
      );
    }
    rows.push(row);
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  return [
    line(header),
    `|${widths.map((w, i) => (i < 2 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`,
    ...rows.map(line),
  ].join("\n");
}

export const TABLE_LEGEND = [
  "Cells: median over rounds [min–max of the rounds]; latency percentiles are over all rounds' samples pooled. ↑ higher is better, ↓ lower is better.",
  "Ratio columns: Soniq's median ÷ the best peer's median on that row (for ↑ rows above 1 means Soniq is faster; for ↓ rows below 1 means Soniq is better).",
  "With --baseline, the \"÷ @ref\" columns: this checkout's median ÷ the baseline build's (on ↑ rows below 1 is a slowdown, on ↓ rows above 1).",
  "* a time box cut the drain short in at least one round (throughput from the jobs that ran). ! see notes below the table.",
  "history rows: the drains before and after the fill run in the same measurement (each pair after one other drain: untimed before, the cold-cache row after the fill), the ratio is theirs per round; a read's cell is the median of its calls over all rounds (max: the slowest call).",
].join("\n");
