/**
 * Benchmark settings: defaults, `--quick`, command-line flags and `BENCH_*` variables.
 *
 *   npm run bench                        # full run (3 rounds, N = 10,000 and 100,000)
 *   npm run bench -- --quick             # 1 round at a tenth of the size, shorter time boxes
 *   npm run bench -- --only soniq-pg,bullmq --workloads drain,latency --rounds 5
 *   BENCH_SCALE=0.5 npm run bench        # every job count halved
 *   npm run bench -- --quick --baseline HEAD~5   # also Soniq built at HEAD~5, as a ratio
 *   npm run bench -- --json out.json --markdown out.md
 *   npm run bench -- --only soniq-pg,soniq-pg-retention0 --workloads history --history-size 10000000
 */

/**
 * Every library the harness knows, in the default order of round 1. The `…-prefetch0` entries are
 * this checkout's Soniq with `prefetch: 0`, compared with the default configuration in a ratio
 * column (what the prefetch window buys); they are neither peers nor the Soniq compared with them.
 * `soniq-pg-retention0` is Soniq on PostgreSQL keeping no finished job (`resultRetention: 0`): a
 * Soniq column of its own, compared with the peers like the defaults.
 */
export const LIBRARIES = [
  "soniq-pg",
  "soniq-sqlite",
  "graphile-worker",
  "pg-boss",
  "bullmq",
  "soniq-pg-prefetch0",
  "soniq-sqlite-prefetch0",
  "soniq-pg-retention0",
];

/**
 * Libraries that run only when named with `--only`: graphile-worker with its default
 * configuration (no local queue, one completion per job), to show what its local queue buys.
 */
export const OPTIONAL_LIBRARIES = ["graphile-worker-defaults"];

/**
 * With `--baseline REF`: Soniq built at REF, measured beside this checkout's Soniq. Each is
 * added right after its counterpart (so it takes turns with every library like the others)
 * when that counterpart is selected; `--only` may also name them, but only with `--baseline`.
 */
export const BASELINE_LIBRARIES: Record<string, string> = {
  "soniq-baseline-pg": "soniq-pg",
  "soniq-baseline-pg-retention0": "soniq-pg-retention0",
  "soniq-baseline-sqlite": "soniq-sqlite",
};

/** Every workload, in the order they run within a round. */
export const WORKLOADS = [
  "enqueue",
  "drain",
  "latency",
  "handlers",
  "process",
  "fanin",
  "history",
  "flow",
];

export interface BenchConfig {
  quick: boolean;
  rounds: number;
  /** Multiplies every job count below (BENCH_SCALE). */
  scale: number;
  libraries: string[];
  workloads: string[];
  /** `--baseline REF`: the git ref whose Soniq build is measured too (see ./baseline.ts). */
  baseline: string | undefined;
  pgUrl: string;
  redisUrl: string;
  /** Sizes of the bulk-enqueue measurements. */
  bulkSizes: number[];
  /** Jobs per bulk call (each library's own batch API). */
  bulkBatch: number;
  /** Sequential single-job enqueue calls. */
  singleCalls: number;
  /** No-op jobs drained per measurement. */
  drainJobs: number;
  /** Jobs of the 5 ms handler and of the CPU-bound handler. */
  ioJobs: number;
  cpuJobs: number;
  /** A drain stops after this long and counts what it got (slow libraries). */
  timeBoxMs: number;
  /** Idle pick-up samples per round. */
  latencySamples: number;
  /** No-op jobs the separate worker process drains while its peak RSS is taken. */
  rssJobs: number;
  /** How long a handler of the "10 in flight" SIGTERM test sleeps. */
  busyHandlerMs: number;
  /**
   * The `history` workload: finished jobs written between its two drains (`--history-size`; not
   * scaled by BENCH_SCALE), and how many times each operator read is timed.
   */
  historySize: number;
  historyReadTimes: number;
  /** In how many rounds (the first) the history workload runs (`--history-rounds`, default 1). */
  historyRounds: number;
  /** No-op jobs of each of the history workload's drains: 10,000, never fewer (also `--quick`). */
  historyDrainJobs: number;
  /**
   * Children of the fan-in workload's waiting job, and jobs of the drain it is compared with:
   * 10,000, never fewer (also `--quick`: issue 29's row is about 10,000).
   */
  fanInJobs: number;
  jsonOut: string | undefined;
  markdownOut: string | undefined;
}

function flagValue(argv: string[], name: string): string | undefined {
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  if (eq) return eq.slice(name.length + 3);
  const at = argv.indexOf(`--${name}`);
  if (at >= 0 && at + 1 < argv.length && !argv[at + 1]?.startsWith("--")) return argv[at + 1];
  return undefined;
}

function list(value: string | undefined, known: string[], what: string): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    if (!known.includes(item)) {
      throw new Error(`unknown ${what} ${JSON.stringify(item)}; known: ${known.join(", ")}`);
    }
  }
  return items;
}

function positive(value: string | undefined, what: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${what} must be a positive number`);
  return n;
}

/**
 * The libraries to run: `--only` or the defaults, and with a baseline each Soniq library's
 * baseline right after it (unless `--only` placed it already).
 */
function selectLibraries(only: string | undefined, baseline: string | undefined): string[] {
  const baselines = Object.keys(BASELINE_LIBRARIES);
  const chosen =
    list(only, [...LIBRARIES, ...OPTIONAL_LIBRARIES, ...baselines], "library") ?? LIBRARIES;
  if (baseline === undefined) {
    const named = chosen.filter((name) => baselines.includes(name));
    if (named.length > 0) throw new Error(`${named.join(", ")} needs --baseline REF`);
    return chosen;
  }
  const out: string[] = [];
  for (const name of chosen) {
    if (!out.includes(name)) out.push(name);
    const pair = baselines.find((b) => BASELINE_LIBRARIES[b] === name);
    if (pair && !chosen.includes(pair)) out.push(pair);
  }
  if (!out.some((name) => baselines.includes(name))) {
    throw new Error("--baseline needs soniq-pg or soniq-sqlite among the libraries");
  }
  return out;
}

/** The `--baseline` value: a ref for git, never something git would read as an option. */
function baselineRef(argv: string[]): string | undefined {
  if (!argv.some((a) => a === "--baseline" || a.startsWith("--baseline="))) return undefined;
  const ref = flagValue(argv, "baseline")?.trim();
  if (!ref || ref.startsWith("-") || /\s/.test(ref)) {
    throw new Error("--baseline needs a git ref or commit id (e.g. --baseline HEAD~5)");
  }
  return ref;
}

/** The history workload's size: full run, and `--quick`. */
export const DEFAULT_HISTORY_SIZE = 2_000_000;
export const QUICK_HISTORY_SIZE = 200_000;

export const USAGE = `usage: npm run bench -- [--quick] [--rounds N] [--only LIBS] [--workloads LIST]
                        [--baseline REF] [--history-size N] [--history-rounds R]
                        [--json FILE] [--markdown FILE]
  libraries: ${LIBRARIES.join(", ")} (by default); also ${OPTIONAL_LIBRARIES.join(", ")} with --only
  --baseline REF: also build Soniq at git REF (a commit id, HEAD~5, a branch) in a temporary
    folder and measure it in the same run as ${Object.keys(BASELINE_LIBRARIES).join(", ")}
    (added after soniq-pg / soniq-sqlite); the table gives this checkout ÷ REF
  workloads: ${WORKLOADS.join(", ")}
  --history-size N: finished jobs the history workload writes between its drains
    (default ${DEFAULT_HISTORY_SIZE.toLocaleString("en-US")}, with --quick ${QUICK_HISTORY_SIZE.toLocaleString("en-US")}); --history-rounds R: it runs in
    the first R rounds only (default 1)
  env: BENCH_SCALE (job-count multiplier), BENCH_PG_URL, BENCH_REDIS_URL, BENCH_TIME_BOX_MS`;

export function loadConfig(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): BenchConfig {
  const quick = argv.includes("--quick");
  const scale = positive(env.BENCH_SCALE, "BENCH_SCALE") ?? (quick ? 0.1 : 1);
  const rounds = positive(flagValue(argv, "rounds"), "--rounds") ?? (quick ? 1 : 3);
  const n = (base: number, min = 10) => Math.max(min, Math.round(base * scale));
  const baseline = baselineRef(argv);
  return {
    quick,
    rounds: Math.round(rounds),
    scale,
    libraries: selectLibraries(flagValue(argv, "only"), baseline),
    workloads: list(flagValue(argv, "workloads"), WORKLOADS, "workload") ?? WORKLOADS,
    baseline,
    pgUrl: env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test",
    redisUrl: env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379",
    bulkSizes: [n(10_000), n(100_000)],
    bulkBatch: Math.max(1, Math.round(positive(env.BENCH_BULK_BATCH, "BENCH_BULK_BATCH") ?? 1000)),
    singleCalls: n(1000),
    drainJobs: n(10_000),
    ioJobs: n(2000),
    cpuJobs: n(1000),
    timeBoxMs: positive(env.BENCH_TIME_BOX_MS, "BENCH_TIME_BOX_MS") ?? (quick ? 4000 : 8000),
    latencySamples: quick ? 20 : 40,
    rssJobs: n(5000),
    busyHandlerMs: 1000,
    historySize: Math.round(
      positive(flagValue(argv, "history-size"), "--history-size") ??
        (quick ? QUICK_HISTORY_SIZE : DEFAULT_HISTORY_SIZE),
    ),
    historyReadTimes: 5,
    historyRounds: Math.round(positive(flagValue(argv, "history-rounds"), "--history-rounds") ?? 1),
    historyDrainJobs: n(10_000, 10_000),
    fanInJobs: n(10_000, 10_000),
    jsonOut: flagValue(argv, "json"),
    markdownOut: flagValue(argv, "markdown"),
  };
}
