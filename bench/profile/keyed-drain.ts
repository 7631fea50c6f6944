/**
 * Where a keyed drain's time goes, claim by claim: `npm run build` first, then
 *
 *   node --import tsx bench/profile/keyed-drain.ts [--backend pg|sqlite] [--concurrency 10]
 *        [--rounds 1] [--root DIR] [--plain-only] [--no-statements]
 *
 * The statement wrappers cost CPU too (and wrap only the better-sqlite3 this checkout resolves):
 * compare CPU per job between builds with `--no-statements`.
 * `--root DIR` measures the build of another checkout (DIR with its dist/ built, e.g. a worktree
 * of an earlier commit), through the same wrappers. In this process, as the flow workload (bench/workloads/flow.ts): per round a drain of 10,000
 * no-op jobs without a key and one over 1,000 keys (at most 2 per key), each on a fresh adapter.
 * Per drain it prints the throughput, this process's CPU per job (from the hooks around the timed
 * drain: on a shared machine steadier than throughput), the worker's claims (how many, the jobs asked for and got,
 * how many came back empty or short, the time spent in them and their share of the drain) and,
 * the statements by kind (count per claim, average wait: on PostgreSQL what the pool sent, on
 * SQLite every statement run, its time in the call). Soniq is not changed: the built store's
 * `jobClaim`, node-postgres's `Client.query` and better-sqlite3's statement methods are wrapped.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { baselineBuild, soniqPostgres, soniqSqlite } from "../adapters/soniq.js";
import { REPO_ROOT } from "../adapters/support.js";
import { loadConfig } from "../config.js";
import { withAdapter } from "../workloads/common.js";
import { drainOn } from "../workloads/drain.js";
import { FLOW_DRAIN_JOBS } from "../workloads/flow.js";

type Fn = (this: unknown, ...args: unknown[]) => unknown;

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const backend = flag("backend", "pg");
/** `--plain-only`: the drains without a key only (a build from before per-key concurrency). */
const plainOnly = process.argv.includes("--plain-only");
/** `--root DIR`: measure the build in DIR (another checkout, built) instead of this one's. */
const root = flag("root", REPO_ROOT);
const build =
  root === REPO_ROOT
    ? undefined
    : baselineBuild({
        ref: root,
        commit: root,
        short: "root",
        root,
        version: "?",
        dependencies: "linked",
        remove: () => undefined,
      });
const concurrency = Number(flag("concurrency", "10"));
const rounds = Number(flag("rounds", "1"));

/** A statement's kind: its first words, with the keyed claim's statements named. */
function kind(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (/soniq_keyed_claim\(/i.test(t)) return "keyed: one-statement claim (028)";
  if (/^WITH RECURSIVE after_keys/i.test(t)) return "keyed: rotating pass";
  if (/^WITH RECURSIVE keys/i.test(t)) return "keyed: full pass";
  if (/pg_advisory_xact_lock/i.test(t)) return "keyed: advisory lock";
  if (/^SELECT EXISTS \(SELECT 1 FROM \S+ AS k/i.test(t)) return "keyed: anyQueued probe";
  if (/^WITH picked AS/i.test(t)) return "ordinary claim";
  const table = /(?:UPDATE|FROM|INTO)\s+(?:"[^"]+"\.)?"?([a-z_]+)"?/i.exec(t)?.[1] ?? "";
  return `${t.split(" ")[0]?.toUpperCase() ?? "?"} ${table}`.trim();
}

const stats = new Map<string, { count: number; ms: number }>();
const require = createRequire(join(REPO_ROOT, "package.json"));
const pg = require("pg") as { Client: { prototype: { query: Fn } } };
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const first = args[0];
  const text =
    typeof first === "string" ? first : ((first as { text?: string } | null)?.text ?? "?");
  const entry = stats.get(kind(text)) ?? { count: 0, ms: 0 };
  stats.set(kind(text), entry);
  entry.count += 1;
  const started = performance.now();
  const done = () => {
    entry.ms += performance.now() - started;
  };
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === "function") {
    args[last] = (...results: unknown[]) => {
      done();
      return (callback as Fn)(...results);
    };
  }
  const result = originalQuery.apply(this, args);
  if (typeof callback !== "function" && result instanceof Promise) result.then(done, done);
  return result;
};

/** A SQLite statement's kind: the statement's name in sql.ts where it is one of the claim's. */
function sqliteKind(text: string): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (/^SELECT EXISTS \(SELECT 1 FROM soniq_queues/.test(t)) return "restrictedQueueExists";
  if (/^SELECT id FROM soniq_jobs WHERE status = 'queued' AND scheduled_at <= @now/.test(t)) {
    return "ordinary read (dueIds…)";
  }
  if (/^WITH RECURSIVE/.test(t)) return "keyed: rotating pass (one statement)";
  if (/^WITH running AS/.test(t)) return "keyed: ranked read (keyedDueIds…)";
  if (/AS k FROM soniq_jobs/.test(t)) return "keyed: next key (before keyedPass)";
  if (/AS running,/.test(t)) return "keyed: head (before keyedPass)";
  if (/^SELECT \(SELECT count\(\*\) FROM soniq_jobs INDEXED BY/.test(t)) return "allQueuedKeyed";
  if (/^SELECT 1 FROM soniq_jobs WHERE status = 'queued' AND json_extract/.test(t)) {
    return "keyed: any queued? (probe)";
  }
  if (/^UPDATE soniq_jobs SET status = 'processing'/.test(t)) return "claimByIds";
  const table = /(?:UPDATE|FROM|INTO)\s+"?([a-z_]+)"?/i.exec(t)?.[1] ?? "";
  return `${t.split(" ")[0]?.toUpperCase() ?? "?"} ${table}`.trim();
}

/** `--no-statements`: no statement wrappers (their time is not in the CPU per job then). */
const wrapStatements = !process.argv.includes("--no-statements");
const kindOf = new Map<string, string>();

if (backend === "sqlite" && wrapStatements) {
  // better-sqlite3's statements share one prototype: time each run by the statement's text.
  const Database = require("better-sqlite3") as new (
    path: string,
  ) => { prepare(sql: string): object; close(): void };
  const scratch = new Database(":memory:");
  const proto = Object.getPrototypeOf(scratch.prepare("SELECT 1")) as Record<string, Fn>;
  scratch.close();
  for (const method of ["all", "get", "run"] as const) {
    const original = proto[method] as Fn;
    proto[method] = function (this: unknown, ...args: unknown[]) {
      const source = (this as { source: string }).source;
      let k = kindOf.get(source);
      if (k === undefined) {
        k = sqliteKind(source);
        kindOf.set(source, k);
      }
      const entry = stats.get(k) ?? { count: 0, ms: 0 };
      stats.set(k, entry);
      entry.count += 1;
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        entry.ms += performance.now() - started;
      }
    };
  }
}

const claims = { count: 0, asked: 0, got: 0, empty: 0, short: 0, ms: 0 };
const storeModule =
  backend === "sqlite"
    ? ((await import(join(root, "dist/backends/sqlite/job-store.js"))) as Record<
        string,
        { prototype: Record<string, Fn> }
      >)
    : ((await import(join(root, "dist/backends/postgres/job-store.js"))) as Record<
        string,
        { prototype: Record<string, Fn> }
      >);
const Store = (storeModule.SqliteJobStore ?? storeModule.PgJobStore) as {
  prototype: Record<string, Fn>;
};
const originalClaim = Store.prototype.jobClaim as Fn;
Store.prototype.jobClaim = async function (this: unknown, ...args: unknown[]) {
  const started = performance.now();
  const rows = (await originalClaim.apply(this, args)) as unknown[];
  const asked = (args[0] as { limit: number }).limit;
  claims.count += 1;
  claims.asked += asked;
  claims.got += rows.length;
  if (rows.length === 0) claims.empty += 1;
  else if (rows.length < asked) claims.short += 1;
  claims.ms += performance.now() - started;
  return rows;
};

const config = loadConfig(["--quick"]);
const factory =
  backend === "sqlite"
    ? soniqSqlite(build)
    : soniqPostgres(process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test", build);
await factory.prepare();

async function one(keyed: boolean): Promise<number> {
  stats.clear();
  Object.assign(claims, { count: 0, asked: 0, got: 0, empty: 0, short: 0, ms: 0 });
  let drainMs = 0;
  let cpuAt = process.cpuUsage();
  let cpuUsPerJob = 0;
  const result = await withAdapter(factory, async (adapter) => {
    const enqueue = keyed ? adapter.enqueueBulkKeyed?.bind(adapter) : undefined;
    const t0 = performance.now();
    const r = await drainOn(
      adapter,
      factory,
      config,
      FLOW_DRAIN_JOBS,
      concurrency,
      "noop",
      {
        before() {
          cpuAt = process.cpuUsage();
          stats.clear();
          Object.assign(claims, { count: 0, asked: 0, got: 0, empty: 0, short: 0, ms: 0 });
        },
        after() {
          drainMs = performance.now() - t0;
          const used = process.cpuUsage(cpuAt);
          cpuUsPerJob = (used.user + used.system) / FLOW_DRAIN_JOBS;
        },
      },
      enqueue,
    );
    return r;
  });
  const c = claims;
  const lines = [
    `${keyed ? "keyed" : "no key"} c${concurrency}: ${result.sample.value.toFixed(0)} jobs/s, this process's CPU ${cpuUsPerJob.toFixed(1)} µs per job (SQLite: the database included)`,
    `  claims ${c.count}: asked ${(c.asked / c.count).toFixed(1)}, got ${(c.got / c.count).toFixed(1)} avg; empty ${c.empty}, short ${c.short}; ${(c.ms / c.count).toFixed(2)} ms avg, ${c.ms.toFixed(0)} ms in all (drain window incl. fill ${drainMs.toFixed(0)} ms)`,
  ];
  const rows = [...stats.entries()].sort((a, b) => b[1].ms - a[1].ms);
  for (const [k, s] of rows) {
    lines.push(
      `  ${k.padEnd(36)} ${(s.count / c.count).toFixed(2).padStart(6)} per claim  ${(s.ms / s.count).toFixed(2).padStart(6)} ms avg  ${s.ms.toFixed(0).padStart(6)} ms`,
    );
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  lastCpu = cpuUsPerJob;
  return result.sample.value;
}

let lastCpu = 0;

try {
  await one(false); // warm-up
  for (let r = 0; r < rounds; r++) {
    const plain = await one(false);
    const plainCpu = lastCpu;
    if (plainOnly) continue;
    const keyed = await one(true);
    process.stdout.write(
      `ratio keyed / no key: ${(keyed / plain).toFixed(2)}; CPU per job no key / keyed: ${(plainCpu / lastCpu).toFixed(2)}\n\n`,
    );
  }
} finally {
  await factory.cleanup();
}
