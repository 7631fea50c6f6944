/**
 * The keyed claim's plan and time on PostgreSQL (issue 28, the `flow` workload's keyed drain):
 * fills a scratch schema with `--jobs` jobs over `--keys` keys with a limit of `--limit`, then
 * prints the plans of one keyed claim of `--claim` jobs (the statement Soniq sends, migration
 * 028's `soniq_keyed_claim`, rolled back) and times `--repeat` claims (each rolled back).
 *
 *   node --import tsx bench/profile/keyed-claim-plan.ts [--jobs 10000] [--keys 1000] [--limit 2]
 *        [--claim 10] [--repeat 5] [--plan] [--named] [--cursor tenant-500] [--generic]
 *
 * `--plan`: `EXPLAIN (ANALYZE, BUFFERS)` of each statement the function runs (through
 * `auto_explain` with nested statements, as notices; needs a superuser), after the timed runs,
 * so with the plans the function's connection has settled on. A claim larger than the keys with
 * room (`--claim 1500` over 1,000 keys) runs the full pass after the rotating one. `--named`: as
 * a named (prepared) statement, as Soniq sends it. `--cursor`: the rotating pass's start key
 * (default none). `--generic`: the generic plans from the first execution on
 * (`plan_cache_mode = force_generic_plan`), what the server may switch to after five.
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
const statement = keyedClaimStatements(schema).claimFunction;
const cursor = process.argv.includes("--cursor") ? flag("cursor", "") : null;
const params = ["w1", claim, null, true, null, null, cursor, "keyed-plan", true, false, false];
const named = process.argv.includes("--named");
if (process.argv.includes("--generic"))
  await client.query("SET plan_cache_mode = force_generic_plan");
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
if (process.argv.includes("--plan")) {
  await client.query(`LOAD 'auto_explain'`);
  await client.query(
    "SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice",
  );
  client.on("notice", (notice) => console.log(notice.message));
  await client.query("BEGIN");
  await client.query(
    named
      ? { name: "keyed_plan", text: statement, values: params }
      : { text: statement, values: params },
  );
  await client.query("ROLLBACK");
  await client.query("RESET auto_explain.log_min_duration");
}
console.log(`each: ${times.map((t) => t.toFixed(1)).join(" ")} ms`);
times.sort((a, b) => a - b);
console.log(
  `keyed claim of ${claim} over ${jobs} jobs / ${keys} keys (limit ${limit}): median ${times[times.length >> 1]?.toFixed(1)} ms, min ${times[0]?.toFixed(1)} ms`,
);
await soniq.close();
await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
await client.end();
