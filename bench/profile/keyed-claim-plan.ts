/**
 * The keyed claim's plan and time on PostgreSQL (issue 28, the `flow` workload's keyed drain):
 * fills a scratch schema with `--jobs` jobs over `--keys` keys with a limit of `--limit`, then
 * runs `EXPLAIN (ANALYZE, BUFFERS)` of one keyed claim of `--claim` jobs (rolled back) and times
 * `--repeat` claims (each rolled back).
 *
 *   node --import tsx bench/profile/keyed-claim-plan.ts [--jobs 10000] [--keys 1000] [--limit 2]
 *        [--claim 10] [--repeat 5] [--plan] [--full] [--named] [--cursor tenant-500]
 *
 * `--full`: the full pass (every key's candidates ranked) instead of the rotating pass.
 * `--named`: as a named (prepared) statement, as Soniq sends it: the server plans the first five
 * executions for their values, later ones may use its generic plan. `--cursor`: the rotating
 * pass's start key (default none). `--generic`: with `--named`, the generic plan from the first
 * execution on (`plan_cache_mode = force_generic_plan`), what the server may switch to.
 */
import pg from "pg";
import { keyedClaimStatements } from "../../src/backends/postgres/keyed-claim.js";
import { Soniq } from "../../src/index.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const url = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = "bench_keyed_plan";
const jobs = Number(flag("jobs", "10000"));
const keys = Number(flag("keys", "1000"));
const limit = Number(flag("limit", "2"));
const claim = Number(flag("claim", "10"));
const repeat = Number(flag("repeat", "5"));

const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
const soniq = new Soniq({ databaseUrl: url, schema, logLevel: "warn" });
const job = soniq.job({
  name: "keyed.noop",
  concurrency: { key: (a: { k: number }) => `tenant-${a.k}`, limit },
  handler: async () => undefined,
});
await soniq.setup();
for (let i = 0; i < jobs; i += 1000) {
  await job.enqueueMany(
    Array.from({ length: Math.min(1000, jobs - i) }, (_, j) => ({ args: { k: (i + j) % keys } })),
  );
}
await client.query(`ANALYZE ${schema}.soniq_jobs`);
const sql = keyedClaimStatements(schema);
const full = process.argv.includes("--full");
const statement = full ? sql.claim : sql.rotate;
const cursor = process.argv.includes("--cursor") ? flag("cursor", "") : null;
const params = ["w1", claim, null, true, null, null, true, ...(full ? [] : [cursor])];
const named = process.argv.includes("--named");
if (process.argv.includes("--generic"))
  await client.query("SET plan_cache_mode = force_generic_plan");
if (process.argv.includes("--plan")) {
  await client.query("BEGIN");
  const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS) ${statement}`, params);
  await client.query("ROLLBACK");
  for (const r of rows) console.log(r["QUERY PLAN"]);
}
const times: number[] = [];
for (let r = 0; r < repeat; r++) {
  await client.query("BEGIN");
  const t0 = performance.now();
  const { rowCount } = await client.query(
    named
      ? { name: "keyed_plan", text: statement, values: params }
      : { text: statement, values: params },
  );
  times.push(performance.now() - t0);
  await client.query("ROLLBACK");
  if (r === 0) console.log(`claimed ${rowCount}`);
}
console.log(`each: ${times.map((t) => t.toFixed(1)).join(" ")} ms`);
times.sort((a, b) => a - b);
console.log(
  `${full ? "full" : "rotating"} keyed claim of ${claim} over ${jobs} jobs / ${keys} keys (limit ${limit}): median ${times[times.length >> 1]?.toFixed(1)} ms, min ${times[0]?.toFixed(1)} ms`,
);
await soniq.close();
await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await client.end();
