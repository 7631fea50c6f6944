/**
 * Every statement the database runs for a no-op drain, per job, through the bench's real adapters
 * (in process, as the drain rows of the bench run them), from `pg_stat_statements`: `npm run build`
 * first, then, against a PostgreSQL server with `shared_preload_libraries = 'pg_stat_statements'`,
 * `pg_stat_statements.track = all` (statements inside functions and triggers too) and
 * `pg_stat_statements.track_planning = on` (plans per call):
 *
 *   BENCH_PG_URL=postgres://…/db node --import tsx bench/profile/db-statements.ts
 *        [--jobs 10000] [--inflight 10,100] [--libs soniq-pg,soniq-pg-retention0,graphile-worker]
 *        [--repeat 1] [--top 25] [--keep] [--warm]
 *
 * For each library and in-flight cap it fills the queue (untimed), resets `pg_stat_statements`
 * right before the worker starts, drains, and prints the database CPU per job (as the bench's
 * row), then each statement of the window: calls per job, rows per call, execution and planning
 * time per job (µs, server-side wall time of the statement: with a nested statement, its time is
 * also in the calling one's), plans per call (below 1: a prepared or cached plan), and whether it
 * was sent by the client (top level) or ran inside a function or trigger (nested).
 * Statements of this script's own connection (the reset and the read) are left out.
 */
import { createRequire } from "node:module";
import { loadavg } from "node:os";
import { join } from "node:path";
import { selectFactories } from "../adapters/index.js";
import { REPO_ROOT } from "../adapters/support.js";
import { loadConfig } from "../config.js";
import { withAdapter } from "../workloads/common.js";
import { drainOn, runDrain } from "../workloads/drain.js";

interface Row {
  toplevel: boolean;
  calls: string;
  rows: string;
  plans: string;
  exec_ms: number;
  plan_ms: number;
  query: string;
}
interface PgClient {
  connect(): Promise<void>;
  query(text: string): Promise<{ rows: Row[] }>;
  end(): Promise<void>;
}

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const jobs = Number(flag("jobs", "10000"));
const caps = flag("inflight", "10,100").split(",").map(Number);
const libs = flag("libs", "soniq-pg,soniq-pg-retention0,graphile-worker");
const repeat = Number(flag("repeat", "1"));
const top = Number(flag("top", "25"));
// An experiment: `--variant-sql` (statements; `{schema}` is each library's schema) is applied after
// each measurement of the library as it is and the same drain measured again, then
// `--revert-sql` undoes it (e.g. a trigger disabled, then enabled): base and variant interleaved.
const variantSql = flag("variant-sql", "");
const revertSql = flag("revert-sql", "");
const schemaOf: Record<string, string> = {
  "soniq-pg": "bench_soniq",
  "soniq-pg-retention0": "bench_soniq_retention0",
  "graphile-worker": "bench_graphile_worker",
};
const config = loadConfig(["--only", libs]);
const factories = selectFactories(config);
const require = createRequire(join(REPO_ROOT, "package.json"));
const pg = require("pg") as { Client: new (o: { connectionString: string }) => PgClient };
const admin = new pg.Client({ connectionString: config.pgUrl });
await admin.connect();
const MARK = "/* db-statements */";

/** A statement's text on one line, shortened, for the table. */
function short(query: string, width = 110): string {
  const t = query.replace(/\s+/g, " ").trim();
  return t.length > width ? `${t.slice(0, width)}…` : t;
}

process.stdout.write(
  `no-op drains of ${jobs} jobs; load average at start ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}\n`,
);
for (const factory of factories) await factory.prepare();
try {
  for (const cap of caps) {
    for (let r = 0; r < repeat; r += 1) {
      for (const factory of factories) {
        for (const variant of variantSql ? [false, true] : [false]) {
          const schema = schemaOf[factory.name] ?? "";
          if (variant) await admin.query(variantSql.replaceAll("{schema}", schema));
          let rows: Row[] = [];
          const boxed = { ...config, timeBoxMs: 600_000 };
          const around = {
            before: async () => {
              await admin.query(`${MARK} SELECT pg_stat_statements_reset()`);
            },
            after: async () => {
              rows = (
                await admin.query(`${MARK} SELECT toplevel, calls, rows, plans,
                  total_exec_time AS exec_ms, total_plan_time AS plan_ms, query
                  FROM pg_stat_statements WHERE query NOT LIKE '%db-statements%'
                  ORDER BY total_exec_time DESC`)
              ).rows;
            },
          };
          // `--warm`: an untimed drain first on the same instance, so that the measured one runs
          // on connections that have already prepared and planned its statements.
          const result = process.argv.includes("--warm")
            ? await withAdapter(factory, async (adapter) => {
                await drainOn(adapter, factory, boxed, jobs, cap, "noop");
                return drainOn(adapter, factory, boxed, jobs, cap, "noop", around);
              })
            : await runDrain(factory, boxed, jobs, cap, "noop", around);
          const n = result.jobs;
          let calls = 0;
          let topCalls = 0;
          let execMs = 0;
          for (const row of rows) {
            calls += Number(row.calls);
            if (row.toplevel) {
              topCalls += Number(row.calls);
              execMs += row.exec_ms;
            }
          }
          process.stdout.write(
            `\n## ${factory.label}${variant ? " (variant)" : ""}, ${cap} in flight: ${result.sample.value.toFixed(0)} jobs/s, ` +
              `database CPU ${result.databaseMicrosPerJob?.toFixed(1)} µs/job, worker CPU ${result.workerMicrosPerJob.toFixed(1)} µs/job; ` +
              `statements per job: ${(topCalls / n).toFixed(3)} sent, ${((calls - topCalls) / n).toFixed(3)} nested; ` +
              `top-level execution ${((execMs * 1000) / n).toFixed(1)} µs/job\n\n`,
          );
          process.stdout.write(
            "| calls/job | rows/call | exec µs/job | plan µs/job | plans/call | level | statement |\n|---:|---:|---:|---:|---:|---|---|\n",
          );
          for (const row of rows.slice(0, top)) {
            const c = Number(row.calls);
            process.stdout.write(
              `| ${(c / n).toFixed(4)} | ${(Number(row.rows) / c).toFixed(1)} | ${((row.exec_ms * 1000) / n).toFixed(2)} | ${((row.plan_ms * 1000) / n).toFixed(2)} | ${(Number(row.plans) / c).toFixed(2)} | ${row.toplevel ? "sent" : "nested"} | \`${short(row.query)}\` |\n`,
            );
          }
          if (variant) await admin.query(revertSql.replaceAll("{schema}", schema));
        }
      }
    }
  }
} finally {
  // `--keep`: the schemas stay (to plan their statements by hand afterwards).
  if (!process.argv.includes("--keep")) for (const factory of factories) await factory.cleanup();
  await admin.end();
}
process.exit(0);
