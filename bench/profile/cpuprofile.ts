/**
 * Reads a V8 `.cpuprofile` (from `node --cpu-prof`) and summarises the samples inside a time
 * window: self time by function and by category (Soniq, pg driver, logging, Node internals…).
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Milliseconds of samples in the window (wall time while the process was sampled). */
  windowMs: number;
  /** Self milliseconds by category, largest first. */
  categories: Array<{ name: string; ms: number }>;
  /** Self milliseconds by function, largest first. */
  functions: Array<{ name: string; where: string; category: string; ms: number }>;
}

/** Which part of the stack a frame belongs to. */
export function category(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === "(idle)") return "idle (waiting for I/O)";
  if (functionName === "(garbage collector)") return "garbage collector";
  if (functionName === "(program)") return "V8/native (program)";
  if (url.includes("/node_modules/pg") || url.includes("/node_modules/pg-")) return "pg driver";
  if (url.includes("/node_modules/pino") || url.includes("/node_modules/sonic-boom"))
    return "logging (pino)";
  if (url.includes("/node_modules/zod")) return "zod";
  if (url.includes("/node_modules/tsx") || url.includes("/node_modules/esbuild"))
    return "tsx (module loading)";
  if (url.includes("/dist/")) return "Soniq (dist/)";
  if (url.includes("/bench/profile/")) return "profiling instrumentation";
  if (url.includes("/bench/")) return "benchmark handler";
  if (url.startsWith("node:")) return "Node.js internals";
  if (url.includes("/node_modules/")) return "other packages";
  if (url === "") return "native / builtins";
  return "other";
}

function shortUrl(url: string): string {
  const at = url.search(/\/(dist|node_modules|bench)\//);
  return at >= 0 ? url.slice(at + 1) : url;
}

/**
 * Summarises `file`. The window is where the stack contains a frame whose URL includes
 * `marker` (first to last such sample), e.g. the benchmark handler: start-up and shut-down
 * are left out. Without a marker the whole profile counts.
 */
export function summarizeProfile(file: string, marker?: string): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node.id);
  const marked = new Map<number, boolean>();
  const isMarked = (id: number): boolean => {
    const known = marked.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const up = parent.get(id);
    const value =
      marker !== undefined &&
      ((node?.callFrame.url.includes(marker) ?? false) || (up !== undefined && isMarked(up)));
    marked.set(id, value);
    return value;
  };
  const times: number[] = [];
  let t = 0;
  for (const delta of profile.timeDeltas) {
    t += delta;
    times.push(t);
  }
  let from = 0;
  let to = profile.samples.length - 1;
  if (marker !== undefined) {
    const hits = profile.samples.flatMap((id, i) => (isMarked(id) ? [i] : []));
    if (hits.length > 0) {
      from = hits[0] as number;
      to = hits[hits.length - 1] as number;
    }
  }
  const self = new Map<number, number>();
  for (let i = from; i <= to; i += 1) {
    const id = profile.samples[i] as number;
    const next = i + 1 < times.length ? (times[i + 1] as number) : (times[i] as number);
    self.set(id, (self.get(id) ?? 0) + (next - (times[i] as number)) / 1000);
  }
  const fns = new Map<string, { name: string; where: string; category: string; ms: number }>();
  const cats = new Map<string, number>();
  for (const [id, ms] of self) {
    const frame = (byId.get(id) as ProfileNode).callFrame;
    const cat = category(frame);
    cats.set(cat, (cats.get(cat) ?? 0) + ms);
    const where = frame.url ? `${shortUrl(frame.url)}:${frame.lineNumber + 1}` : "";
    const key = `${frame.functionName}@${where}`;
    const entry = fns.get(key) ?? {
      name: frame.functionName || "(anonymous)",
      where,
      category: cat,
      ms: 0,
    };
    entry.ms += ms;
    fns.set(key, entry);
  }
  return {
    windowMs: ((times[to] ?? 0) - (times[from] ?? 0)) / 1000,
    categories: [...cats].map(([name, ms]) => ({ name, ms })).sort((a, b) => b.ms - a.ms),
    functions: [...fns.values()].sort((a, b) => b.ms - a.ms),
  };
}
