/**
 * History for the benchmarks (issue 24): finished jobs written by SQL the way Soniq stores them,
 * and the operator reads timed against them. Shared by the bench's `history` workload
 * (./workloads/history.ts) and `bench/profile/sql-drain.ts --history N --reads`.
 *
 * The fill is one `INSERT … SELECT generate_series(…)` into `soniq_finished_jobs` (whatever that
 * table is made of: plain or partitioned, the insert routes the rows), plus the matching counter
 * rows in `soniq_job_counts`, then `VACUUM ANALYZE` so the planner sees the statistics a settled
 * production table has, and a `CHECKPOINT` so the fill's writes are not flushed during the drain
 * that follows. The rows look like the product's:
 *
 * - ids are time-ordered UUIDv7 (48-bit millisecond prefix, version 7, variant 8, random rest),
 *   created evenly over the day before now, so listings (ordered by id) behave as in production;
 * - 95 % `done` (claimed, started, finished, one attempt), 5 % `cancelled` while queued (never
 *   started, no worker);
 * - four queues of different sizes (`default` 50 %, `mail` 30 %, `reports` 10 %, `webhooks` 10 %),
 *   each with its own job name;
 * - `result_expires_at` = finish + 7 days (the default `resultRetention`): in the future.
 *
 * On SQLite ({@link fillSqliteHistory}) the same rows (a recursive CTE instead of
 * `generate_series`, instants in milliseconds, random bits from `randomblob`), then `ANALYZE`.
 *
 * Nothing here issues DDL on the finished-jobs table.
 */
import type Database from "better-sqlite3";
import type pg from "pg";

/** The queues of the history and the job name each carries (`default` is the bench's own). */
export const HISTORY_QUEUES: ReadonlyArray<{ queue: string; name: string; share: number }> = [
  { queue: "default", name: "bench.history", share: 5 },
  { queue: "mail", name: "mail.send", share: 3 },
  { queue: "reports", name: "reports.build", share: 1 },
  { queue: "webhooks", name: "webhooks.deliver", share: 1 },
];

/** A job name that no job of the bench or of the history carries. */
export const NO_SUCH_NAME = "bench.nothing-has-this-name";

/** What {@link fillHistory} wrote. */
export interface HistoryFill {
  /** `soniq_finished_jobs`, or `soniq_jobs` for a build from before the two tables. */
  table: string;
  rows: number;
  /** The INSERT (and the counters). */
  insertSeconds: number;
  /** `VACUUM ANALYZE` of the table and a `CHECKPOINT` (SQLite: `ANALYZE`). */
  vacuumSeconds: number;
}

/** SQL: `CASE` over `i % 10` giving the queue's column `field` (queue or name). */
function byQueue(field: "queue" | "name"): string {
  const branches: string[] = [];
  let upTo = 0;
  for (const q of HISTORY_QUEUES) {
    upTo += q.share;
    branches.push(`WHEN i % 10 < ${upTo} THEN '${q[field]}'`);
  }
  return `CASE ${branches.join(" ")} END`;
}

/**
 * The rows of the history: one per `i` in 1..n, columns `i, t` (creation time), `queue`, `name`,
 * `status`. Used by the insert and, grouped, by the counters (the same expressions, so the counts
 * match the rows exactly without reading them back).
 */
function historyRows(n: number): string {
  return `SELECT i, t, ${byQueue("queue")} AS queue, ${byQueue("name")} AS name,
      CASE WHEN i % 20 = 7 THEN 'cancelled' ELSE 'done' END AS status
    FROM generate_series(1, ${n}) AS i,
      LATERAL (SELECT now() - interval '1 day' + i * (interval '1 day' / ${n}) AS t) AS at`;
}

/**
 * Writes `n` finished jobs into `schema` as the product stores them (see the module comment):
 * `soniq_finished_jobs` plus its counters, or, for a build from before the two tables, finished
 * rows of `soniq_jobs`. Then `VACUUM ANALYZE` of that table.
 */
export async function fillHistory(
  client: pg.Client,
  schema: string,
  n: number,
): Promise<HistoryFill> {
  if (!Number.isInteger(n) || n < 1) throw new Error(`history size must be a positive integer`);
  const started = performance.now();
  const split = await client.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [
    `${schema}.soniq_finished_jobs`,
  ]);
  const table = split.rows[0]?.t ? "soniq_finished_jobs" : "soniq_jobs";
  const done = "status = 'done'";
  await client.query(`INSERT INTO ${schema}.${table} (id, name, queue, args, status, priority,
      attempts, max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
      finished_at, worker_id, claim_token, result_expires_at, start_known, uncharged_recoveries)
    SELECT (ms_hex || '7' || substr(r, 1, 3) || '8' || substr(r, 4, 15))::uuid,
      name, queue, json_build_object('i', i), status, 0,
      CASE WHEN ${done} THEN 1 ELSE 0 END, 5, 0, t, t,
      t + interval '40 milliseconds',
      CASE WHEN ${done} THEN t + interval '20 milliseconds' END,
      t + interval '40 milliseconds',
      CASE WHEN ${done} THEN 'history-worker-' || (i % 4)::text END,
      CASE WHEN ${done} THEN r::uuid END,
      t + interval '40 milliseconds' + interval '7 days',
      ${done}, 0
    FROM (${historyRows(n)}) AS h,
      -- The id: 48 bits of milliseconds, version 7, 12 random bits, variant 8, 60 random bits;
      -- one md5 a row gives the random bits (and the claim token).
      LATERAL (SELECT lpad(to_hex((extract(epoch FROM t) * 1000)::bigint), 12, '0') AS ms_hex,
                      md5(i::text) AS r) AS bits`);
  if (table === "soniq_finished_jobs") {
    // A done job waited 20 ms from due to start (the counters sum the wait of done jobs).
    await client.query(`INSERT INTO ${schema}.soniq_job_counts (queue, kind, bucket, writer, n,
        wait_s)
      SELECT queue, status, '-infinity', 0, count(*),
        sum(CASE WHEN status = 'done' THEN 0.02 ELSE 0 END)
      FROM (${historyRows(n)}) AS h
      GROUP BY queue, status
      ON CONFLICT (queue, kind, bucket, writer)
        DO UPDATE SET n = ${schema}.soniq_job_counts.n + EXCLUDED.n,
          wait_s = ${schema}.soniq_job_counts.wait_s + EXCLUDED.wait_s`);
  }
  const inserted = performance.now();
  // Since migration 011 soniq_finished_jobs is a view over the partitioned soniq_finished_store.
  const store = await client.query("SELECT to_regclass($1) AS t", [
    `${schema}.soniq_finished_store`,
  ]);
  const settled = store.rows[0]?.t ? "soniq_finished_store" : table;
  await client.query(`VACUUM ANALYZE ${schema}.${settled}`);
  // The fill wrote ~400 bytes of WAL a row: without a checkpoint now, the next one (by
  // max_wal_size) would write those pages out during the drain that follows, and bill it.
  await client.query("CHECKPOINT").catch(() => undefined);
  return {
    table,
    rows: n,
    insertSeconds: (inserted - started) / 1000,
    vacuumSeconds: (performance.now() - inserted) / 1000,
  };
}

/**
 * {@link fillHistory} on SQLite: `n` finished jobs in `soniq_finished_jobs` of the open database
 * `db` plus their counters (bucket 0, the folded one), in one transaction, then `ANALYZE`.
 */
export function fillSqliteHistory(db: Database.Database, n: number): HistoryFill {
  if (!Number.isInteger(n) || n < 1) throw new Error(`history size must be a positive integer`);
  const started = performance.now();
  const day = 86_400_000;
  const rows = `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n})
    SELECT i, CAST(unixepoch('subsec') * 1000 AS INTEGER) - ${day} + i * ${day} / ${n} AS t,
      ${byQueue("queue")} AS queue, ${byQueue("name")} AS name,
      CASE WHEN i % 20 = 7 THEN 'cancelled' ELSE 'done' END AS status
    FROM s`;
  const done = "status = 'done'";
  db.transaction(() => {
    db.exec(`INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
        max_attempts, interruptions, scheduled_at, created_at, updated_at, started_at,
        finished_at, worker_id, claim_token, result_expires_at, start_known, uncharged_recoveries)
      SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8'
          || substr(r, 4, 3) || '-' || substr(r, 7, 12),
        name, queue, '{"i":' || i || '}', status, 0, CASE WHEN ${done} THEN 1 ELSE 0 END, 5, 0,
        t, t, t + 40, CASE WHEN ${done} THEN t + 20 END, t + 40,
        CASE WHEN ${done} THEN 'history-worker-' || (i % 4) END,
        CASE WHEN ${done} THEN lower(hex(randomblob(16))) END,
        t + 40 + 7 * ${day}, CASE WHEN ${done} THEN 1 ELSE 0 END, 0
      FROM (SELECT *, printf('%012x', t) AS h, lower(hex(randomblob(9))) AS r FROM (${rows}))`);
    db.exec(`INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
      SELECT queue, status, 0, 0, count(*), sum(CASE WHEN ${done} THEN 0.02 ELSE 0 END)
      FROM (${rows}) GROUP BY queue, status
      ON CONFLICT (queue, kind, bucket, writer)
        DO UPDATE SET n = n + excluded.n, wait_s = wait_s + excluded.wait_s`);
  })();
  const inserted = performance.now();
  db.exec("ANALYZE");
  return {
    table: "soniq_finished_jobs",
    rows: n,
    insertSeconds: (inserted - started) / 1000,
    vacuumSeconds: (performance.now() - inserted) / 1000,
  };
}

/** The part of a Soniq instance the operator reads use (this checkout's or a build's). */
export interface OperatorApi {
  stats(): Promise<unknown>;
  jobs: {
    list(query?: object, page?: { limit?: number }): Promise<unknown>;
    count(query?: object): Promise<number>;
    countByQueueStatus(): Promise<unknown>;
  };
  queues: { list(): Promise<unknown> };
  workers(): Promise<unknown>;
  remote: { counts(): Promise<unknown> };
}

/** One operator read: a stable key, a label and the call. */
export interface OperatorRead {
  key: string;
  label: string;
  run(soniq: OperatorApi): Promise<unknown>;
}

const PAGE = { limit: 50 };

/**
 * The operator reads of issue 24 item 7, through the public API: `soniq.stats()`, the counts by
 * queue × status, the queue list (per-queue configuration and counts), what `soniq status` reads
 * (its five calls at once, as the command makes them; no process start), first pages (50 rows, the
 * default) of `jobs.list` unfiltered and filtered, and `jobs.count` with filters.
 */
export const OPERATOR_READS: readonly OperatorRead[] = [
  { key: "stats", label: "soniq.stats()", run: (s) => s.stats() },
  {
    key: "countByQueueStatus",
    label: "soniq.jobs.countByQueueStatus()",
    run: (s) => s.jobs.countByQueueStatus(),
  },
  { key: "queues", label: "soniq.queues.list()", run: (s) => s.queues.list() },
  {
    key: "status",
    label: "soniq status (its 5 reads at once, in process)",
    run: (s) =>
      Promise.all([
        s.stats(),
        s.workers(),
        s.remote.counts(),
        s.jobs.countByQueueStatus(),
        s.queues.list(),
      ]),
  },
  { key: "list", label: "jobs.list() first page", run: (s) => s.jobs.list({}, PAGE) },
  {
    key: "list.queued",
    label: 'jobs.list({ status: "queued" })',
    run: (s) => s.jobs.list({ status: "queued" }, PAGE),
  },
  {
    key: "list.done",
    label: 'jobs.list({ status: "done" })',
    run: (s) => s.jobs.list({ status: "done" }, PAGE),
  },
  {
    key: "list.queue",
    label: 'jobs.list({ queue: "mail" })',
    run: (s) => s.jobs.list({ queue: "mail" }, PAGE),
  },
  {
    key: "list.noName",
    label: "jobs.list({ name: <one nothing has> })",
    run: (s) => s.jobs.list({ name: NO_SUCH_NAME }, PAGE),
  },
  {
    key: "count.done",
    label: 'jobs.count({ status: "done" })',
    run: (s) => s.jobs.count({ status: "done" }),
  },
  {
    key: "count.queueName",
    label: 'jobs.count({ queue: "mail", name: "mail.send" })',
    run: (s) => s.jobs.count({ queue: "mail", name: "mail.send" }),
  },
];

/**
 * Each read `times` times in a row on `soniq`, in milliseconds per call. No untimed warm-up: the
 * first call (a statement not yet prepared on its connection, pages not yet cached) is what an
 * operator opening the dashboard gets, and it shows in the maximum.
 */
export async function timeReads(
  soniq: OperatorApi,
  times: number,
): Promise<Array<{ read: OperatorRead; ms: number[] }>> {
  const out: Array<{ read: OperatorRead; ms: number[] }> = [];
  for (const read of OPERATOR_READS) {
    const ms: number[] = [];
    for (let k = 0; k < times; k += 1) {
      const started = performance.now();
      await read.run(soniq);
      ms.push(performance.now() - started);
    }
    out.push({ read, ms });
  }
  return out;
}
