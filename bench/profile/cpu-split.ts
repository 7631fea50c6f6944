/**
 * Where a no-op drain's CPU goes, per job, through the bench's real adapters (in process, as the
 * drain rows of the bench run them): `npm run build` first, then
 *
 *   node --import tsx bench/profile/cpu-split.ts [--jobs 20000] [--inflight 10,100]
 *        [--libs soniq-pg,soniq-sqlite] [--repeat 1] [--baseline REF]
 *
 * With `--baseline REF` Soniq built at REF (../baseline.ts) is measured too, right after this
 * checkout's, in the same minutes (`--libs` may then name soniq-baseline-pg, soniq-baseline-sqlite).
 *
 * For each library and in-flight cap it fills the queue, drains it and prints, per job:
 * - worker CPU (µs): this process's `process.cpuUsage()` from the first handler start to the
 *   last handler end (SQLite: the database runs in here, so it is included);
 * - database CPU (µs): the PostgreSQL backends serving this process (found by their client port
 *   in `pg_stat_activity`, CPU from /proc/<pid>/stat in 10 ms ticks), from just before the worker
 *   starts to the end of the drain; for BullMQ the Redis server;
 * - statements per job: every statement this process sent through node-postgres meanwhile
 *   (a counting wrapper, ./count-queries.ts; pg_stat_statements is not needed);
 * - WAL bytes per job: `pg_current_wal_lsn()` delta (server-wide: other work on the server counts).
 * Throughput is printed too, but on a shared machine it follows the load; CPU per job hardly does.
 */
import { loadavg } from "node:os";
import { selectFactories } from "../adapters/index.js";
import { buildBaseline } from "../baseline.js";
import { loadConfig } from "../config.js";
import { runDrain } from "../workloads/drain.js";
import { statementsSent } from "./count-queries.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const jobs = Number(flag("jobs", "20000"));
const caps = flag("inflight", "10,100").split(",").map(Number);
const libs = flag("libs", "soniq-pg,soniq-sqlite");
const repeat = Number(flag("repeat", "1"));
const ref = flag("baseline", "");
const config = loadConfig(["--only", libs, ...(ref ? ["--baseline", ref] : [])]);
const baseline = ref
  ? await buildBaseline(ref, (line) => process.stderr.write(`${line}\n`))
  : undefined;
if (baseline) process.once("exit", baseline.remove);
const factories = selectFactories(config, baseline);
const f1 = (x: number | undefined) => (x === undefined ? "–" : x.toFixed(1));

const lines = [
  `no-op drains of ${jobs.toLocaleString("en-US")} jobs; load average at start ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
  "",
  "| library | in flight | jobs/s | worker µs/job | database µs/job | statements/job | WAL bytes/job |",
  "|---|---:|---:|---:|---:|---:|---:|",
];
// Interleaved (cap → round → library), so the libraries share the machine's drift.
for (const factory of factories) await factory.prepare();
try {
  for (const cap of caps) {
    for (let r = 0; r < repeat; r += 1) {
      for (const factory of factories) {
        let sentBefore = 0;
        let sent = 0;
        const result = await runDrain(
          factory,
          { ...config, timeBoxMs: 600_000 },
          jobs,
          cap,
          "noop",
          {
            before: () => {
              sentBefore = statementsSent();
            },
            after: () => {
              sent = statementsSent() - sentBefore;
            },
          },
        );
        const line = `| ${factory.label} | ${cap} | ${result.sample.value.toFixed(0)} | ${f1(result.workerMicrosPerJob)} | ${f1(result.databaseMicrosPerJob)} | ${factory.database === "postgres" ? (sent / result.jobs).toFixed(3) : "–"} | ${f1(result.walBytesPerJob)} |`;
        process.stderr.write(`${line}\n`);
        lines.push(line);
      }
    }
  }
} finally {
  for (const factory of factories) await factory.cleanup();
}
process.stdout.write(`\n${lines.join("\n")}\n`);
process.exit(0);
