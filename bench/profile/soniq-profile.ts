/**
 * Where a Soniq worker's time goes during a no-op drain: `npm run build` first, then
 *
 *   node --import tsx bench/profile/soniq-profile.ts [--jobs 20000] [--concurrency 10]
 *        [--backend pg|sqlite] [--log-level warn|info] [--keep DIR]
 *
 * Fills the queue, then runs the real CLI worker (`node --cpu-prof … dist/cli/main.js worker
 * bench/worker-processes/soniq-jobs.ts`) with ./count-queries.ts preloaded, waits for the
 * drain, stops it with SIGTERM and prints: throughput, worker CPU per job, statements per job
 * (with their average wait), CPU profile self time by category and the top functions — all
 * over the drain window only (first to last sample inside the benchmark handler).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { soniqPostgres, soniqSqlite } from "../adapters/soniq.js";
import { REPO_ROOT } from "../adapters/support.js";
import { sleep } from "../payload.js";
import { WorkerProcess } from "../worker-processes/parent.js";
import { fill } from "../workloads/common.js";
import { summarizeProfile } from "./cpuprofile.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

/** utime + stime of `pid` in milliseconds (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const jobs = Number(flag("jobs", "20000"));
const concurrency = Number(flag("concurrency", "10"));
const backend = flag("backend", "pg");
const logLevel = flag("log-level", "warn");
const keep = flag("keep", "");
const pgUrl = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const factory = backend === "sqlite" ? soniqSqlite() : soniqPostgres(pgUrl);
const dir = keep || mkdtempSync(join(tmpdir(), "soniq-profile-"));
await factory.prepare();
const adapter = factory.create();
try {
  await adapter.setup();
  await fill(adapter, jobs, 1000);
  const spec = adapter.workerProcess(concurrency);
  const queryLog = join(dir, "queries.json");
  const proc = new WorkerProcess({
    command: spec.command,
    args: [
      "--cpu-prof",
      `--cpu-prof-dir=${dir}`,
      "--import",
      "tsx",
      "--import",
      join(REPO_ROOT, "bench", "profile", "count-queries.ts"),
      ...spec.args,
    ],
    env: { ...spec.env, BENCH_QUERY_LOG: queryLog, BENCH_SONIQ_LOG_LEVEL: logLevel },
  });
  const pid = proc.child.pid as number;
  if (!(await proc.waitFor(() => proc.finished >= 100, 60_000))) {
    throw new Error(`the worker did not start draining\n${proc.stderr}`);
  }
  const t0 = performance.now();
  const cpu0 = cpuMs(pid);
  const last = Math.floor(jobs / 100) * 100;
  if (!(await proc.waitFor(() => proc.finished >= last, 600_000))) {
    throw new Error(`the drain did not finish\n${proc.stderr}`);
  }
  const wall = performance.now() - t0;
  const cpu = cpuMs(pid) - cpu0;
  const counted = last - 100;
  const rss = proc.peakRssMiB() ?? Number.NaN;
  await proc.terminate();
  await sleep(200);
  const profileFile = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  const queries = JSON.parse(readFileSync(queryLog, "utf8")) as Record<
    string,
    { count: number; ms: number }
  >;
  const out: string[] = [];
  out.push(
    `Soniq ${backend} worker process, ${jobs.toLocaleString("en-US")} no-op jobs, concurrency ${concurrency}, logLevel ${logLevel}`,
    `- throughput ${(counted / (wall / 1000)).toFixed(0)} jobs/s; worker CPU ${(cpu / counted).toFixed(3)} ms per job (${((cpu / wall) * 100).toFixed(0)}% of one core); peak RSS ${rss.toFixed(0)} MiB`,
    "",
    "| statement | per job | avg wait (ms) |",
    "|---|---:|---:|",
  );
  const rows = Object.entries(queries).sort((a, b) => b[1].count - a[1].count);
  for (const [kind, s] of rows) {
    out.push(`| ${kind} | ${(s.count / jobs).toFixed(3)} | ${(s.ms / s.count).toFixed(2)} |`);
  }
  const total = rows.reduce((n, [, s]) => n + s.count, 0);
  out.push(`| all statements (round trips) | ${(total / jobs).toFixed(3)} | |`);
  if (profileFile) {
    const summary = summarizeProfile(join(dir, profileFile), "/bench/worker-processes/protocol.ts");
    const busy = summary.categories
      .filter((c) => !c.name.startsWith("idle"))
      .reduce((n, c) => n + c.ms, 0);
    out.push(
      "",
      `CPU profile over the drain window (${summary.windowMs.toFixed(0)} ms; ${busy.toFixed(0)} ms on the CPU):`,
      "",
      "| category | self ms | % of CPU |",
      "|---|---:|---:|",
    );
    for (const c of summary.categories) {
      out.push(
        `| ${c.name} | ${c.ms.toFixed(0)} | ${c.name.startsWith("idle") ? "" : ((c.ms / busy) * 100).toFixed(1)} |`,
      );
    }
    out.push("", "| top functions (self) | where | category | % of CPU |", "|---|---|---|---:|");
    for (const f of summary.functions.filter((x) => !x.category.startsWith("idle")).slice(0, 20)) {
      out.push(`| ${f.name} | ${f.where} | ${f.category} | ${((f.ms / busy) * 100).toFixed(1)} |`);
    }
  }
  process.stdout.write(`${out.join("\n")}\n`);
  if (keep) process.stdout.write(`\nprofile and query counts kept in ${dir}\n`);
} finally {
  await adapter.teardown();
  await factory.cleanup();
  if (!keep) rmSync(dir, { recursive: true, force: true });
}
