/**
 * The history charts (overview and queues pages): jobs done, failed attempts and dead-lettered
 * jobs per minute, and the mean wait from due to start, over the last 24 h, drawn as plain SVG
 * from `GET api/history` (the job counters: never a scan of the job tables). Each chart has axes
 * with units and a legend with the window's totals; the totals are also `data-*` attributes of
 * the section, which the Chromium tests read.
 */
import type { HistoryPoint, QueueHistory } from "../../backends/contract/admin-store.js";
import { api, query } from "./api.js";
import { ErrorLine } from "./components.js";
import { usePolled } from "./hooks.js";

/** `QueueHistory` as the JSON API sends it (instants as ISO text). */
type Wire<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] };
type WireHistory = Omit<Wire<QueueHistory>, "points"> & { points: Wire<HistoryPoint>[] };

/** How often the charts refresh, in milliseconds (a minute fills slowly). */
const REFRESH_MS = 15_000;
/** The drawing's size in SVG user units (it scales to the page's width). */
const WIDTH = 720;
const HEIGHT = 160;
/** Room for the axes' labels. */
const LEFT = 44;
const BOTTOM = 20;
const TOP = 8;
const RIGHT = 8;

/** One drawn series. */
interface Series {
  key: "done" | "failed" | "dead";
  label: string;
}

const COUNT_SERIES: Series[] = [
  { key: "done", label: "done" },
  { key: "failed", label: "failed attempts" },
  { key: "dead", label: "dead-lettered" },
];

/** The window as one slot per minute, zeros where the counters have nothing. */
interface Dense {
  /** Minutes in the window (the last one still filling). */
  minutes: number;
  /** ms of the first minute's start. */
  since: number;
  done: number[];
  failed: number[];
  dead: number[];
  /** Mean wait in seconds per minute, null where nothing was done. */
  wait: (number | null)[];
  totals: { done: number; failed: number; dead: number; cancelled: number };
  /** Mean wait in seconds over every job done in the window, or null. */
  waitAvg: number | null;
}

function densify(h: WireHistory): Dense {
  const since = Date.parse(h.since);
  const minutes = Math.max(1, Math.floor((Date.parse(h.until) - since) / 60_000) + 1);
  const zeros = () => new Array<number>(minutes).fill(0);
  const d: Dense = {
    minutes,
    since,
    done: zeros(),
    failed: zeros(),
    dead: zeros(),
    wait: new Array<number | null>(minutes).fill(null),
    totals: { done: 0, failed: 0, dead: 0, cancelled: 0 },
    waitAvg: null,
  };
  let waitSum = 0;
  for (const p of h.points) {
    const i = Math.round((Date.parse(p.minute) - since) / 60_000);
    if (i < 0 || i >= minutes) continue;
    d.done[i] = p.done;
    d.failed[i] = p.failed;
    d.dead[i] = p.dead;
    d.wait[i] = p.waitAvgSeconds;
    d.totals.done += p.done;
    d.totals.failed += p.failed;
    d.totals.dead += p.dead;
    d.totals.cancelled += p.cancelled;
    if (p.waitAvgSeconds !== null) waitSum += p.waitAvgSeconds * p.done;
  }
  d.waitAvg = d.totals.done > 0 ? waitSum / d.totals.done : null;
  return d;
}

/** A round axis maximum at or above `max` (1, 2, 5 × a power of ten). */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/** A number as an axis label: whole numbers plain, others with up to two significant decimals. */
function label(n: number): string {
  if (Number.isInteger(n)) return String(n);
  return n >= 10 ? n.toFixed(0) : n.toPrecision(2);
}

/**
 * An SVG path through `values` (one per minute); a null value breaks the line, and a minute with
 * no neighbour is a short dash (a dot with the round line caps of the stylesheet). `x` and `y` map
 * a slot and a value into the drawing.
 */
function linePath(
  values: (number | null)[],
  x: (i: number) => number,
  y: (v: number) => number,
): string {
  let d = "";
  values.forEach((v, i) => {
    if (v === null) return;
    const here = `${x(i).toFixed(1)} ${y(v).toFixed(1)}`;
    const before = i > 0 && values[i - 1] !== null && values[i - 1] !== undefined;
    const after = i + 1 < values.length && values[i + 1] !== null;
    d += before ? `L${here}` : after ? `M${here}` : `M${here}h0.5`;
  });
  return d;
}

/**
 * Stacked bars, one per minute: for each series in order, an SVG path of vertical strokes from
 * the top of the series below it to its own top. Minutes at zero draw nothing.
 */
function stackedPaths(
  stack: Array<{ key: string; values: number[] }>,
  x: (i: number) => number,
  y: (v: number) => number,
): Array<{ key: string; d: string }> {
  const base = new Array<number>(stack[0]?.values.length ?? 0).fill(0);
  return stack.map(({ key, values }) => {
    let d = "";
    values.forEach((v, i) => {
      if (v <= 0) return;
      const from = base[i] ?? 0;
      d += `M${x(i).toFixed(1)} ${y(from).toFixed(1)}V${y(from + v).toFixed(1)}`;
      base[i] = from + v;
    });
    return { key, d };
  });
}

/**
 * One chart over the window's minutes, a y axis in `unit`, x ticks every 6 hours: `bars` stacked
 * per minute (counts), or `line` (a value per minute, null where there is none).
 */
function Chart({
  title,
  unit,
  dense,
  bars,
  line,
  testId,
}: {
  title: string;
  unit: string;
  dense: Dense;
  bars?: Array<{ key: string; values: number[] }>;
  line?: { key: string; values: (number | null)[] };
  testId: string;
}) {
  let top = 0;
  for (let i = 0; i < dense.minutes; i++) {
    const stacked = (bars ?? []).reduce((sum, b) => sum + (b.values[i] ?? 0), 0);
    top = Math.max(top, stacked, line?.values[i] ?? 0);
  }
  const max = niceMax(top);
  const plotW = WIDTH - LEFT - RIGHT;
  const plotH = HEIGHT - TOP - BOTTOM;
  const x = (i: number) => LEFT + (dense.minutes <= 1 ? 0 : (i / (dense.minutes - 1)) * plotW);
  const y = (v: number) => TOP + plotH - (v / max) * plotH;
  const hours = Math.round((dense.minutes - 1) / 60);
  const ticks: Array<{ at: number; text: string }> = [];
  const every = hours >= 12 ? 6 : hours >= 2 ? 1 : 0;
  if (every > 0) {
    for (let h = hours; h > 0; h -= every) {
      ticks.push({ at: dense.minutes - 1 - h * 60, text: `−${h} h` });
    }
  }
  ticks.push({ at: dense.minutes - 1, text: "now" });
  return (
    <figure class="chart" data-testid={testId}>
      <figcaption>{title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`${title}, last ${hours} h, y axis up to ${label(max)} ${unit}`}
      >
        <line class="axis" x1={LEFT} y1={TOP} x2={LEFT} y2={TOP + plotH} />
        <line class="axis" x1={LEFT} y1={TOP + plotH} x2={LEFT + plotW} y2={TOP + plotH} />
        <line class="grid" x1={LEFT} y1={y(max / 2)} x2={LEFT + plotW} y2={y(max / 2)} />
        <text class="tick" x={LEFT - 4} y={y(max) + 4} text-anchor="end">
          {label(max)}
        </text>
        <text class="tick" x={LEFT - 4} y={y(max / 2) + 4} text-anchor="end">
          {label(max / 2)}
        </text>
        <text class="tick" x={LEFT - 4} y={y(0) + 4} text-anchor="end">
          0
        </text>
        <text class="unit" x={LEFT + 4} y={TOP + 10}>
          {unit}
        </text>
        {ticks.map((t) => (
          <text
            key={t.text}
            class="tick"
            x={x(Math.max(0, t.at))}
            y={HEIGHT - 4}
            text-anchor={t.text === "now" ? "end" : "middle"}
          >
            {t.text}
          </text>
        ))}
        {bars &&
          stackedPaths(bars, x, y).map((b) => (
            <path key={b.key} class={`series bars series-${b.key}`} d={b.d} />
          ))}
        {line && <path class={`series line series-${line.key}`} d={linePath(line.values, x, y)} />}
      </svg>
    </figure>
  );
}

/** Seconds as a short wait label (ms below 1 s). */
function waitText(seconds: number | null): string {
  if (seconds === null) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 120) return `${seconds.toFixed(1)} s`;
  return `${(seconds / 60).toFixed(1)} min`;
}

/**
 * The history of one queue (`queue`) or of every queue (null): the per-minute chart of done,
 * failed and dead-lettered jobs, and the mean-wait chart, with a legend of the window's totals.
 */
export function HistoryCharts({ queue }: { queue: string | null }) {
  const { data, error } = usePolled(
    () =>
      api<{ history: WireHistory }>("GET", `api/history${query({ queue: queue ?? undefined })}`),
    [queue],
    REFRESH_MS,
  );
  const where = queue === null ? "every queue" : `queue ${queue}`;
  if (!data) {
    return (
      <section class="history">
        <h3>Last 24 h, {where}</h3>
        <ErrorLine error={error} />
      </section>
    );
  }
  const dense = densify(data.history);
  const { totals } = dense;
  const empty = totals.done + totals.failed + totals.dead + totals.cancelled === 0;
  return (
    <section
      class="history"
      data-testid="history"
      data-queue={queue ?? ""}
      data-done={totals.done}
      data-failed={totals.failed}
      data-dead={totals.dead}
      data-cancelled={totals.cancelled}
      data-wait-avg={dense.waitAvg ?? ""}
    >
      <h3>Last 24 h, {where}</h3>
      <ErrorLine error={error} />
      {empty ? (
        <p class="muted" data-testid="history-empty">
          No jobs in the last 24 h.
        </p>
      ) : (
        <>
          <ul class="legend" data-testid="history-legend">
            {COUNT_SERIES.map((s) => (
              <li key={s.key}>
                <span class={`swatch series-${s.key}`} /> {s.label}:{" "}
                <b data-testid={`history-total-${s.key}`}>{totals[s.key]}</b>
              </li>
            ))}
            <li>
              cancelled: <b data-testid="history-total-cancelled">{totals.cancelled}</b>
            </li>
            <li>
              <span class="swatch series-wait" /> mean wait, due to start:{" "}
              <b data-testid="history-wait-avg">{waitText(dense.waitAvg)}</b>
            </li>
          </ul>
          <Chart
            title="Jobs per minute (stacked: done, failed attempts, dead-lettered)"
            unit="jobs / min"
            dense={dense}
            testId="chart-jobs"
            bars={COUNT_SERIES.map((s) => ({ key: s.key, values: dense[s.key] }))}
          />
          <Chart
            title="Mean wait from due to start, per minute"
            unit="seconds"
            dense={dense}
            testId="chart-wait"
            line={{ key: "wait", values: dense.wait }}
          />
        </>
      )}
    </section>
  );
}
