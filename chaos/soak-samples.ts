/**
 * What the soak (chaos/soak.ts) samples and how it judges them: the steady worker's memory (from
 * its /metrics, RSS also from /proc), each Soniq table's size with its indexes (PostgreSQL:
 * `pg_total_relation_size` over every partition; SQLite: `dbstat` pages by table), and whether a
 * series is flat after the warm-up.
 */
import { readFileSync } from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";

/** One sample of a soak run. Sizes in bytes; `atSeconds` since the soak started. */
export interface Sample {
  atSeconds: number;
  enqueued: number;
  /** Runs begun since the previous sample. */
  starts: number;
  /** p99 of those runs' wait from due to start, in milliseconds. */
  p99WaitMs: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** Bytes per table, its indexes (and on PostgreSQL its TOAST and partitions) included. */
  tables: Record<string, number>;
}

/**
 * Tables that grow during a soak by design, reported but not judged: PostgreSQL keeps a finished
 * job's row until its day's partition is dropped (docs/backends.md), dead letters are kept 30
 * days, job counters per minute for 25 hours, and a schedule's run history is kept.
 */
export const GROWS_BY_DESIGN: Readonly<Record<"pg" | "sqlite", readonly string[]>> = {
  pg: ["soniq_finished_store", "soniq_dead_letter_jobs", "soniq_job_counts", "soniq_schedule_runs"],
  sqlite: ["soniq_dead_letter_jobs", "soniq_job_counts", "soniq_schedule_runs"],
};

/** The steady worker's RSS and used heap, in bytes (RSS from /proc when /metrics fails). */
export async function workerMemory(
  healthPort: number,
  pid: number,
): Promise<{ rssBytes: number; heapUsedBytes: number }> {
  let text = "";
  try {
    text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  } catch {
    // the worker may be between answers; fall back below
  }
  const metric = (name: string) => {
    const m = new RegExp(`^${name} ([0-9.e+]+)`, "m").exec(text);
    return m?.[1] ? Number(m[1]) : 0;
  };
  let rssBytes = metric("process_resident_memory_bytes");
  if (rssBytes === 0) {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    rssBytes = m?.[1] ? Number(m[1]) * 1024 : 0;
  }
  return { rssBytes, heapUsedBytes: metric("nodejs_heap_size_used_bytes") };
}

/** Where the soak's tables live. */
export type SoakStore =
  | { kind: "pg"; url: string; schema: string }
  | { kind: "sqlite"; file: string };

/** Bytes per Soniq table of `store`, indexes included. */
export async function tableSizes(store: SoakStore): Promise<Record<string, number>> {
  const sizes: Record<string, number> = {};
  if (store.kind === "pg") {
    const client = new pg.Client({ connectionString: store.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ name: string; bytes: string }>(
        `SELECT c.relname AS name,
                CASE WHEN c.relkind = 'p'
                     THEN (SELECT coalesce(sum(pg_total_relation_size(t.relid)), 0)
                             FROM pg_partition_tree(c.oid) t)
                     ELSE pg_total_relation_size(c.oid) END AS bytes
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
        [store.schema],
      );
      for (const r of rows) sizes[r.name] = Number(r.bytes);
    } finally {
      await client.end();
    }
    return sizes;
  }
  const db = new Database(store.file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        `SELECT coalesce(s.tbl_name, d.name) AS name, sum(d.pgsize) AS bytes
           FROM dbstat d LEFT JOIN sqlite_schema s ON s.name = d.name
          GROUP BY 1`,
      )
      .all() as Array<{ name: string; bytes: number }>;
    for (const r of rows) if (r.name.startsWith("soniq_")) sizes[r.name] = r.bytes;
  } finally {
    db.close();
  }
  return sizes;
}

/** The verdict on one series: the last third's median against the first third's (after warm-up). */
export interface FlatVerdict {
  what: string;
  /** Last third's median ÷ first third's, rounded to two places. */
  ratio: number;
  ok: boolean;
  detail: string;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

/**
 * Judges the steady worker's RSS and heap and every table not in `GROWS_BY_DESIGN`: after
 * `warmupSeconds`, the median of the last third of the samples must be at most 1.2× the median
 * of the first third plus a slack (16 MiB for RSS, 8 MiB for the heap, 256 KiB for a table — a
 * vacuum's timing moves a small table by more than 20%). Fewer than six samples after the
 * warm-up: one verdict saying the run was too short to judge.
 */
export function judgeFlat(
  samples: readonly Sample[],
  warmupSeconds: number,
  kind: "pg" | "sqlite",
): FlatVerdict[] {
  const after = samples.slice(0, -1).filter((s) => s.atSeconds >= warmupSeconds);
  if (after.length < 6) {
    return [
      {
        what: "memory and tables",
        ratio: 0,
        ok: false,
        detail: `${after.length} samples after a ${warmupSeconds} s warm-up; 6 needed`,
      },
    ];
  }
  const third = Math.floor(after.length / 3);
  const first = after.slice(0, third);
  const last = after.slice(after.length - third);
  const judge = (what: string, pick: (s: Sample) => number, slack: number): FlatVerdict => {
    const a = median(first.map(pick));
    const b = median(last.map(pick));
    const ratio = a > 0 ? Math.round((b / a) * 100) / 100 : b > 0 ? Number.POSITIVE_INFINITY : 1;
    return {
      what,
      ratio,
      ok: b <= a * 1.2 + slack,
      detail: `median ${(a / 2 ** 20).toFixed(2)} → ${(b / 2 ** 20).toFixed(2)} MiB`,
    };
  };
  const verdicts = [
    judge("steady worker RSS", (s) => s.rssBytes, 16 * 2 ** 20),
    judge("steady worker heap", (s) => s.heapUsedBytes, 8 * 2 ** 20),
  ];
  const names = new Set(after.flatMap((s) => Object.keys(s.tables)));
  for (const name of [...names].sort()) {
    if (GROWS_BY_DESIGN[kind].includes(name)) continue;
    verdicts.push(judge(`table ${name}`, (s) => s.tables[name] ?? 0, 256 * 1024));
  }
  return verdicts;
}
