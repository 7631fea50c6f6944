/**
 * Seeded history for the chart and fold tests: counter rows of `soniq_job_counts` written by SQL
 * the way the product writes them (docs/backends.md, "Counting without scanning") — one row per
 * queue, kind, minute and writer, PostgreSQL buckets as `date_trunc('minute', now() − k min)` and
 * per-process writers for recent minutes, SQLite buckets as whole-minute milliseconds by the
 * database clock and writer 0 — plus the totals a 24 h read must show.
 */
import Database from "better-sqlite3";
import pg from "pg";

/** One counter row: `minutesAgo` minutes before the database's current minute. */
export interface SeedCount {
  queue: string;
  kind: "done" | "failed" | "dead" | "cancelled" | "done_gone" | "cancelled_gone";
  minutesAgo: number;
  /** PostgreSQL: the server process that wrote it (0 once folded). SQLite: always 0. */
  writer: number;
  n: number;
  /** Seconds from due to start summed (done rows). */
  waitS: number;
}

/** Where the rows go. */
export type SeedStore =
  | { kind: "sqlite"; path: string }
  | { kind: "postgres"; databaseUrl: string; schema: string };

/**
 * A day of history on queues `mail` and `pdf`: minutes 0 to 1 430 ago (inside a 24 h window), one
 * 26 h ago (outside it, not yet folded) — and rows that must never show as a point: `_gone` kinds.
 */
export const DAY_OF_HISTORY: readonly SeedCount[] = [
  { queue: "mail", kind: "done", minutesAgo: 0, writer: 4242, n: 3, waitS: 1.5 },
  { queue: "mail", kind: "done", minutesAgo: 0, writer: 4243, n: 2, waitS: 1 },
  { queue: "mail", kind: "failed", minutesAgo: 0, writer: 4242, n: 1, waitS: 0 },
  { queue: "mail", kind: "done", minutesAgo: 10, writer: 4242, n: 7, waitS: 14 },
  { queue: "mail", kind: "done", minutesAgo: 10, writer: 0, n: 5, waitS: 10 },
  { queue: "mail", kind: "dead", minutesAgo: 10, writer: 4242, n: 2, waitS: 0 },
  { queue: "pdf", kind: "done", minutesAgo: 95, writer: 0, n: 40, waitS: 400 },
  { queue: "pdf", kind: "failed", minutesAgo: 95, writer: 0, n: 6, waitS: 0 },
  { queue: "pdf", kind: "cancelled", minutesAgo: 300, writer: 0, n: 4, waitS: 0 },
  { queue: "pdf", kind: "done_gone", minutesAgo: 300, writer: 0, n: 30, waitS: 0 },
  { queue: "mail", kind: "dead", minutesAgo: 720, writer: 0, n: 1, waitS: 0 },
  { queue: "mail", kind: "done", minutesAgo: 1430, writer: 0, n: 10, waitS: 5 },
  { queue: "mail", kind: "done", minutesAgo: 26 * 60, writer: 0, n: 1000, waitS: 9000 },
  { queue: "pdf", kind: "failed", minutesAgo: 26 * 60, writer: 0, n: 500, waitS: 0 },
];

/** The totals of `rows` a read of the last 24 h shows (for `queue`, or every queue). */
export function expectedTotals(rows: readonly SeedCount[], queue: string | null = null) {
  const t = { done: 0, failed: 0, dead: 0, cancelled: 0, waitS: 0 };
  for (const r of rows) {
    if (r.minutesAgo > 1430 || (queue !== null && r.queue !== queue)) continue;
    if (r.kind === "done") {
      t.done += r.n;
      t.waitS += r.waitS;
    } else if (r.kind === "failed" || r.kind === "dead" || r.kind === "cancelled") {
      t[r.kind] += r.n;
    }
  }
  return { ...t, waitAvg: t.done > 0 ? t.waitS / t.done : null };
}

/** Writes `rows` (added to what is there, as the product's upserts do). */
export async function seedCounts(store: SeedStore, rows: readonly SeedCount[]): Promise<void> {
  if (store.kind === "sqlite") {
    const db = new Database(store.path);
    try {
      db.pragma("busy_timeout = 5000");
      const minute = Math.floor(Date.now() / 60_000) * 60_000;
      const insert =
        db.prepare(`INSERT INTO soniq_job_counts (queue, kind, bucket, writer, n, wait_s)
        VALUES (@queue, @kind, @bucket, 0, @n, @waitS)
        ON CONFLICT (queue, kind, bucket, writer)
          DO UPDATE SET n = n + excluded.n, wait_s = wait_s + excluded.wait_s`);
      db.transaction(() => {
        for (const r of rows) {
          insert.run({
            queue: r.queue,
            kind: r.kind,
            bucket: minute - r.minutesAgo * 60_000,
            n: r.n,
            waitS: r.waitS,
          });
        }
      })();
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: store.databaseUrl });
  await client.connect();
  try {
    const table = `"${store.schema}".soniq_job_counts`;
    for (const r of rows) {
      await client.query(
        `INSERT INTO ${table} AS c (queue, kind, bucket, writer, n, wait_s)
         VALUES ($1, $2, date_trunc('minute', now()) - make_interval(mins => $3::int), $4, $5, $6)
         ON CONFLICT (queue, kind, bucket, writer)
           DO UPDATE SET n = c.n + EXCLUDED.n, wait_s = c.wait_s + EXCLUDED.wait_s`,
        [r.queue, r.kind, r.minutesAgo, r.writer, r.n, r.waitS],
      );
    }
  } finally {
    await client.end();
  }
}
