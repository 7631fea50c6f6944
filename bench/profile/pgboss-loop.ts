/**
 * Why pg-boss drains at about (jobs in flight) ÷ 0.5 s: its work() loop, timed from the outside.
 *
 *   node --import tsx bench/profile/pgboss-loop.ts [--jobs 10000] [--seconds 5]
 *        [--plans 10x1,1x10,10x10,1x100] [--wake]
 *
 * For each plan (`loops`x`batchSize`, so the in-flight cap is loops × batchSize) it fills a fresh
 * queue with `--jobs` no-op jobs (`insert()`, untimed), starts the loops through the bench's own
 * `startPgBossWorkers` (../adapters/pgboss-config.ts) and lets them run for `--seconds`. Printed
 * per plan: jobs/s (first handler start → last handler end), the most handlers ever running at
 * once (must not exceed the cap), and the fetch statement (`… FOR UPDATE SKIP LOCKED`) as pg-boss
 * sends it: fetches per loop per second over the window, jobs per fetch, and the time to its
 * answer (p50, p90). A loop that fetched once per polling interval shows 2 fetches per second.
 *
 * `--wake` adds, per plan, the same loops with one change that pg-boss does not make by itself:
 * a handler whose batch was full calls `boss.notifyWorker(ownId)` (documented: "bypass the job
 * polling interval for this iteration in the loop"), so the loop fetches again at once instead of
 * waiting out the rest of the 0.5 s. That shows what the database and the fetch statement would
 * allow within the same cap; it is not what the bench column runs.
 *
 * At the end it prints `EXPLAIN ANALYZE` of one fetch (batchSize 10) on a queue of `--jobs` jobs.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import type PgBoss from "pg-boss";
import {
  newBoss,
  PGBOSS_POLLING_SECONDS,
  PGBOSS_QUEUE,
  type PgBossPlan,
  startPgBossWorkers,
} from "../adapters/pgboss-config.js";
import { REPO_ROOT, sql } from "../adapters/support.js";
import { type BenchPayload, payloads, sleep } from "../payload.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const jobs = Number(flag("jobs", "10000"));
const seconds = Number(flag("seconds", "5"));
const plans: PgBossPlan[] = flag("plans", "10x1,1x10,10x10,1x100")
  .split(",")
  .map((p) => {
    const [loops, batchSize] = p.split("x").map(Number) as [number, number];
    return { loops, batchSize };
  });
const wake = process.argv.includes("--wake");
const url = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const schema = "bench_pgboss_loop";

// Times pg-boss's fetch statements: node-postgres's pool calls Client#query with a callback.
type QueryFn = (this: unknown, ...args: unknown[]) => unknown;
const require = createRequire(join(REPO_ROOT, "package.json"));
const pg = require("pg") as { Client: { prototype: { query: QueryFn } } };
const original = pg.Client.prototype.query;
let fetchTimes: number[] = [];
let lastFetch: { text: string; values: unknown[] } | undefined;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  const text = typeof args[0] === "string" ? args[0] : "";
  const callback = args[args.length - 1];
  if (text.includes("FOR UPDATE SKIP LOCKED") && typeof callback === "function") {
    lastFetch = { text, values: args[1] as unknown[] };
    const t0 = performance.now();
    args[args.length - 1] = (...r: unknown[]) => {
      fetchTimes.push(performance.now() - t0);
      return (callback as (...a: unknown[]) => unknown)(...r);
    };
  }
  return original.apply(this, args);
};

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0) : Number.NaN;
};
const median = (xs: number[]): number => percentile(xs, 0.5);
const f1 = (x: number) => (Number.isNaN(x) ? "–" : x.toFixed(1));

async function fill(boss: PgBoss): Promise<void> {
  for (let start = 0; start < jobs; start += 1000) {
    const batch = payloads(Math.min(1000, jobs - start), start);
    await boss.insert(batch.map((data) => ({ name: PGBOSS_QUEUE, data })));
  }
}

async function measure(plan: PgBossPlan, wakeOnFullBatch: boolean): Promise<string> {
  await sql(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  const boss = newBoss(url, schema);
  await boss.start();
  await boss.createQueue(PGBOSS_QUEUE);
  await fill(boss);
  fetchTimes = [];
  let handled = 0;
  let running = 0;
  let maxRunning = 0;
  let first = 0;
  let last = 0;
  const handler = async (_: BenchPayload) => {
    if (first === 0) first = performance.now();
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    await new Promise((resolve) => setImmediate(resolve)); // lets a batch's handlers overlap
    running -= 1;
    handled += 1;
    last = performance.now();
  };
  const started = performance.now();
  if (wakeOnFullBatch) {
    for (let n = 0; n < plan.loops; n += 1) {
      const self = { id: "" };
      self.id = await boss.work<BenchPayload>(
        PGBOSS_QUEUE,
        { batchSize: plan.batchSize, pollingIntervalSeconds: PGBOSS_POLLING_SECONDS },
        async (batch) => {
          await Promise.allSettled(batch.map(async (job) => handler(job.data)));
          if (batch.length === plan.batchSize) boss.notifyWorker(self.id);
        },
      );
    }
  } else {
    await startPgBossWorkers(boss, plan.loops * plan.batchSize, handler, plan);
  }
  await sleep(seconds * 1000);
  const window = (performance.now() - started) / 1000;
  const fetches = fetchTimes.slice();
  await boss.offWork(PGBOSS_QUEUE);
  await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
  const span = (last - first) / 1000;
  return `| ${plan.loops} × ${plan.batchSize}${wakeOnFullBatch ? " + notifyWorker" : ""} | ${plan.loops * plan.batchSize} | ${(handled / span).toFixed(0)} | ${maxRunning} | ${(fetches.length / plan.loops / window).toFixed(2)} | ${(handled / fetches.length).toFixed(2)} | ${f1(median(fetches))} | ${f1(percentile(fetches, 0.9))} |`;
}

const lines = [
  `pg-boss work() loops, pollingIntervalSeconds ${PGBOSS_POLLING_SECONDS}, ${jobs.toLocaleString("en-US")} no-op jobs queued, ${seconds} s per plan`,
  "",
  "| loops × batchSize | cap | jobs/s | most running | fetches per loop per s | jobs per fetch | fetch p50 (ms) | fetch p90 (ms) |",
  "|---|---:|---:|---:|---:|---:|---:|---:|",
];
for (const plan of plans) {
  for (const mode of wake ? [false, true] : [false]) {
    const line = await measure(plan, mode);
    process.stderr.write(`${line}\n`);
    lines.push(line);
  }
}

// One fetch of 10 on a full queue, as pg-boss sends it, explained (rolled back).
await sql(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
const boss = newBoss(url, schema);
await boss.start();
await boss.createQueue(PGBOSS_QUEUE);
await fill(boss);
await boss.fetch(PGBOSS_QUEUE, { batchSize: 10 });
await boss.stop({ graceful: false });
if (lastFetch) {
  const client = new (require("pg") as typeof import("pg")).Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
  const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF) ${lastFetch.text}`, [
    PGBOSS_QUEUE,
    10,
  ]);
  await client.query("ROLLBACK");
  await client.end();
  lines.push("", "EXPLAIN ANALYZE of one fetch of 10:", "```");
  for (const row of plan.rows as Array<Record<string, string>>) {
    lines.push(Object.values(row)[0] ?? "");
  }
  lines.push("```");
}
await sql(url, `DROP SCHEMA IF EXISTS ${schema} CASCADE`);
process.stdout.write(`${lines.join("\n")}\n`);
// After these stop() calls a timer was once seen keeping the process alive for minutes (not
// tracked down; the measurements were complete), so the script ends itself.
process.exit(0);
