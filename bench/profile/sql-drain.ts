/**
 * A statements-only drain on PostgreSQL: what the database side of a no-op drain costs, without
 * the worker's JavaScript. For before/after comparisons of Soniq's SQL (issue 17):
 *
 *   node --import tsx bench/profile/sql-drain.ts [--jobs 20000] [--batch 200] [--rounds 2]
 *        [--analyze full|empty|none] [--retention 3600] [--history 0] [--reads]
 *
 * Each round: fills a fresh schema with `--jobs` due no-op jobs (enqueue batches of 1,000, ids as
 * `job.enqueue` makes them), takes statistics (`full`: `ANALYZE` while the queue is full — the
 * state a drain usually starts in, after earlier bursts; `empty`: before the fill; `none`), then
 * drains it as the worker does: one connection claims `--batch` rows while another completes the
 * previous batch (`jobCompleteMany`), until nothing is left. Prints per statement kind the count
 * and milliseconds per statement, then jobs/s, this process's CPU per job
 * (`process.cpuUsage()` deltas) and the CPU of the PostgreSQL server processes serving it (from
 * /proc, 10 ms ticks; readable when the server runs on this machine) per job.
 *
 * `--retention S`: the completions' retention in seconds (0: nothing kept). `--history N`: before
 * the fill, N finished no-op jobs are written by one SQL statement as the product stores them
 * (`soniq_finished_jobs` and its counter, or `done` rows of `soniq_jobs` for a build from before
 * the two tables), then `VACUUM ANALYZE`. `--reads`: after the drain, times the operator reads
 * (stats, counts by queue × status, queue metrics, first pages of listings and filters).
 *
 * On a shared machine the throughput moves with the load; CPU per job moves much less. Compare
 * numbers taken in the same minutes. Talks to `BENCH_PG_URL` (default the test database).
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import type { ClaimedJob, NewJob } from "../../src/backends/contract/index.js";
import { PostgresBackend } from "../../src/backends/postgres/postgres-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";

/** The value of `--name`, or `fallback`. */
function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

const jobs = Number(flag("jobs", "20000"));
const batch = Number(flag("batch", "200"));
const rounds = Number(flag("rounds", "2"));
const analyze = flag("analyze", "full");
const retention = Number(flag("retention", "3600"));
const history = Number(flag("history", "0"));
const reads = process.argv.includes("--reads");
const baseUrl = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
if (
  !(jobs >= 1) ||
  !(batch >= 1) ||
  !(rounds >= 1) ||
  !["full", "empty", "none"].includes(analyze)
) {
  throw new Error(
    "usage: sql-drain.ts [--jobs N] [--batch K] [--rounds R] [--analyze full|empty|none]",
  );
}

/** utime + stime of `pid` in milliseconds (clock ticks of 10 ms); 0 when it cannot be read. */
function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

/** Time spent per statement kind. */
class Timings {
  readonly kinds = new Map<string, { count: number; ms: number }>();

  /** Runs `work` and books its wall time under `kind`. */
  async time<T>(kind: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      const entry = this.kinds.get(kind) ?? { count: 0, ms: 0 };
      entry.count += 1;
      entry.ms += performance.now() - started;
      this.kinds.set(kind, entry);
    }
  }
}

/** A due no-op job. */
function noopJob(): NewJob {
  return {
    id: newJobId(),
    name: "bench.noop",
    queue: "default",
    args: "{}",
    priority: 0,
    maxAttempts: 3,
    runAt: null,
    delaySeconds: 0,
    dedupKey: null,
  };
}

/** One fill-and-drain round on a fresh schema; prints its line. */
async function round(n: number): Promise<void> {
  const app = `soniq_sql_drain_${process.pid}_${n}`;
  const schema = app;
  const url = new URL(baseUrl);
  url.searchParams.set("application_name", app);
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  const backend = new PostgresBackend({ connectionString: url.toString(), schema, poolSize: 4 });
  const timings = new Timings();
  try {
    await backend.setup();
    if (history > 0) await fillHistory(admin, schema, history);
    if (analyze === "empty") await admin.query(`ANALYZE ${schema}.soniq_jobs`);
    for (let done = 0; done < jobs; done += 1000) {
      const size = Math.min(1000, jobs - done);
      await timings.time("enqueue (1,000 rows)", () =>
        backend.jobEnqueue({ jobs: Array.from({ length: size }, noopJob) }),
      );
    }
    if (analyze === "full") await admin.query(`ANALYZE ${schema}.soniq_jobs`);

    // Warm every pool connection (session set-up, prepared statements) before measuring.
    await Promise.all(
      Array.from({ length: 2 }, () =>
        backend.jobClaim({ workerId: "warm", queues: null, limit: 1 }),
      ),
    ).then((claimed) =>
      backend.jobCompleteMany({
        items: claimed.flat().map((j) => ({ id: j.id, owner: j, result: null })),
        resultRetentionSeconds: retention,
      }),
    );
    const { rows } = await admin.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE application_name = $1",
      [app],
    );
    const pids = rows.map((r) => r.pid);
    const pgBefore = pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();

    let drained = 0;
    let completing: Promise<unknown> = Promise.resolve();
    for (;;) {
      const claimed: ClaimedJob[] = await timings.time(`claim (${batch} rows)`, () =>
        backend.jobClaim({ workerId: "sql-drain", queues: null, limit: batch }),
      );
      await completing;
      if (claimed.length === 0) break;
      drained += claimed.length;
      const items = claimed.map((j) => ({ id: j.id, owner: j, result: null }));
      completing = timings.time(`complete batched (${batch} rows)`, () =>
        backend.jobCompleteMany({ items, resultRetentionSeconds: retention }),
      );
    }

    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const pgMs = pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - pgBefore;
    const nodeUsPerJob = (cpu.user + cpu.system) / drained;
    console.log(
      `round ${n}: ${drained} jobs in ${seconds.toFixed(2)} s = ${Math.round(drained / seconds)} jobs/s; ` +
        `node ${nodeUsPerJob.toFixed(1)} µs/job; PostgreSQL ${((pgMs * 1000) / drained).toFixed(1)} µs/job ` +
        `(${pids.length} server processes, 10 ms ticks)`,
    );
    for (const [kind, { count, ms }] of timings.kinds) {
      console.log(
        `  ${kind.padEnd(32)} ${String(count).padStart(6)} × ${(ms / count).toFixed(2).padStart(7)} ms`,
      );
    }
    if (reads) await timeReads(backend);
  } finally {
    await backend.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/**
 * Writes `n` finished no-op jobs (time-ordered ids over the last day) as the product stores them:
 * `soniq_finished_jobs` plus its counter, or, for a build from before the two tables, `done` rows
 * of `soniq_jobs`. Then `VACUUM ANALYZE`, as a settled table would be.
 */
async function fillHistory(admin: pg.Client, schema: string, n: number): Promise<void> {
  const started = performance.now();
  const split = await admin.query("SELECT to_regclass($1) AS t", [`${schema}.soniq_finished_jobs`]);
  const table = split.rows[0]?.t ? "soniq_finished_jobs" : "soniq_jobs";
  const hex = "lpad(to_hex(ms), 12, '0')";
  const rnd = "md5(i::text)";
  await admin.query(`INSERT INTO ${schema}.${table} (id, name, queue, args, status, priority,
      attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
      finished_at, worker_id, claim_token, result_expires_at, start_known, uncharged_recoveries)
    SELECT (substr(${hex}, 1, 8) || '-' || substr(${hex}, 9, 4) || '-7' || substr(${rnd}, 1, 3)
            || '-8' || substr(${rnd}, 4, 3) || '-' || substr(${rnd}, 7, 12))::uuid,
      'bench.noop', 'default', '{}', 'done', 0, 1, 3, 0, t, t, t, t, t, 'history',
      gen_random_uuid(), t + interval '7 days', true, 0
    FROM generate_series(1, ${n}) AS i,
      LATERAL (SELECT now() - interval '1 day' + i * (interval '1 day' / ${n}) AS t) AS at,
      LATERAL (SELECT (extract(epoch FROM at.t) * 1000)::bigint AS ms) AS m`);
  if (table === "soniq_finished_jobs") {
    await admin.query(`INSERT INTO ${schema}.soniq_job_counts (queue, kind, bucket, writer, n)
      VALUES ('default', 'done', '-infinity', 0, ${n})`);
  }
  // Since migration 011 soniq_finished_jobs is a view over the partitioned soniq_finished_store.
  const store = await admin.query("SELECT to_regclass($1) AS t", [
    `${schema}.soniq_finished_store`,
  ]);
  const settled = store.rows[0]?.t ? "soniq_finished_store" : table;
  await admin.query(`VACUUM ANALYZE ${schema}.${settled}`);
  console.log(
    `  history: ${n} finished jobs in ${table} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
  );
}

/** Times each operator read once (warm: after the drain), in milliseconds. */
async function timeReads(backend: PostgresBackend): Promise<void> {
  const reads: Array<[string, () => Promise<unknown>]> = [
    ["stats()", () => backend.jobStats()],
    ["countByQueueStatus", () => backend.admin.jobCountByQueueStatus()],
    ["queueMetrics", () => backend.jobQueueMetrics()],
    ["queue list", () => backend.admin.queueList()],
    ["list: first page", () => backend.admin.jobList({ filter: {}, limit: 50 })],
    ["list: queued", () => backend.admin.jobList({ filter: { status: ["queued"] }, limit: 50 })],
    ["list: done", () => backend.admin.jobList({ filter: { status: ["done"] }, limit: 50 })],
    ["list: queue", () => backend.admin.jobList({ filter: { queue: ["default"] }, limit: 50 })],
    [
      "list: no match (name)",
      () => backend.admin.jobList({ filter: { name: ["none"] }, limit: 50 }),
    ],
    ["count: done (filter)", () => backend.admin.jobCount({ filter: { status: ["done"] } })],
  ];
  for (const [label, read] of reads) {
    const started = performance.now();
    await read();
    console.log(
      `  read ${label.padEnd(26)} ${(performance.now() - started).toFixed(1).padStart(8)} ms`,
    );
  }
}

const load = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(
  `sql-drain: ${jobs} jobs, batch ${batch}, statistics ${analyze}, retention ${retention} s, history ${history}, load average ${load}`,
);
for (let n = 1; n <= rounds; n += 1) await round(n);
