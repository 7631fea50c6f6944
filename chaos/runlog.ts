/**
 * The run log: one row per handler run, written by the chaos job itself into the same database
 * as the queue (PostgreSQL: table `runs` in its own schema; SQLite: table `chaos_runs` in the
 * same file). A run row is inserted when the handler starts and gets `ended_at` and `outcome`
 * (`completed`, `failed` or `aborted`) when it ends, so a run killed mid-handler stays open.
 * Times are `Date.now()` milliseconds of the writing process (one machine, one clock).
 */
import Database from "better-sqlite3";
import pg from "pg";

/** Where the run log lives. */
export type RunLogTarget =
  | { kind: "postgres"; url: string; schema: string }
  | { kind: "sqlite"; path: string };

export type RunOutcome = "completed" | "failed" | "aborted";

/** One row of the run log. */
export interface RunRow {
  runId: string;
  jobId: string;
  n: number;
  workerId: string;
  pid: number;
  attempt: number;
  startedAt: number;
  endedAt: number | null;
  outcome: RunOutcome | null;
}

export interface RunLogWriter {
  start(run: Omit<RunRow, "endedAt" | "outcome">): Promise<void>;
  end(runId: string, outcome: RunOutcome, endedAt: number): Promise<void>;
}

const quote = (ident: string) => `"${ident.replaceAll('"', '""')}"`;

/** The run log's location from the chaos worker's environment (set by chaos/run.ts). */
export function targetFromEnv(env: NodeJS.ProcessEnv = process.env): RunLogTarget {
  const url = env.SONIQ_DATABASE_URL ?? "";
  if (url.startsWith("postgres")) {
    const schema = env.CHAOS_RUNLOG_SCHEMA;
    if (!schema) throw new Error("CHAOS_RUNLOG_SCHEMA is not set");
    return { kind: "postgres", url, schema };
  }
  if (url.startsWith("sqlite:")) return { kind: "sqlite", path: url.slice("sqlite:".length) };
  throw new Error(
    `the chaos run log needs a postgres:// or sqlite: SONIQ_DATABASE_URL, got ${url}`,
  );
}

/** Creates the run log table (the orchestrator does this before any worker starts). */
export async function createRunLog(target: RunLogTarget): Promise<void> {
  if (target.kind === "postgres") {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      const s = quote(target.schema);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.runs (
        run_id uuid PRIMARY KEY, job_id uuid NOT NULL, n integer NOT NULL, worker_id text NOT NULL,
        pid integer NOT NULL, attempt integer NOT NULL, started_at bigint NOT NULL,
        ended_at bigint, outcome text)`);
    } finally {
      await client.end();
    }
    return;
  }
  const db = new Database(target.path, { timeout: 10_000 });
  try {
    db.pragma("journal_mode = WAL");
    db.exec(`CREATE TABLE IF NOT EXISTS chaos_runs (
      run_id TEXT PRIMARY KEY, job_id TEXT NOT NULL, n INTEGER NOT NULL, worker_id TEXT NOT NULL,
      pid INTEGER NOT NULL, attempt INTEGER NOT NULL, started_at INTEGER NOT NULL,
      ended_at INTEGER, outcome TEXT)`);
  } finally {
    db.close();
  }
}

interface RawRun {
  run_id: string;
  job_id: string;
  n: number;
  worker_id: string;
  pid: number;
  attempt: number;
  started_at: number | string;
  ended_at: number | string | null;
  outcome: string | null;
}

function toRun(r: RawRun): RunRow {
  return {
    runId: r.run_id,
    jobId: r.job_id,
    n: Number(r.n),
    workerId: r.worker_id,
    pid: Number(r.pid),
    attempt: Number(r.attempt),
    startedAt: Number(r.started_at),
    endedAt: r.ended_at === null ? null : Number(r.ended_at),
    outcome: r.outcome as RunOutcome | null,
  };
}

/** Reads every run, oldest first. */
export async function readRunLog(target: RunLogTarget): Promise<RunRow[]> {
  const select = "SELECT run_id::text AS run_id, job_id::text AS job_id, n, worker_id, pid,";
  if (target.kind === "postgres") {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      const { rows } = await client.query<RawRun>(
        `${select} attempt, started_at, ended_at, outcome FROM ${quote(target.schema)}.runs
         ORDER BY started_at, run_id`,
      );
      return rows.map(toRun);
    } finally {
      await client.end();
    }
  }
  const db = new Database(target.path, { readonly: true, timeout: 10_000 });
  try {
    const rows = db
      .prepare(
        `SELECT run_id, job_id, n, worker_id, pid, attempt, started_at, ended_at, outcome
         FROM chaos_runs ORDER BY started_at, run_id`,
      )
      .all() as RawRun[];
    return rows.map(toRun);
  } finally {
    db.close();
  }
}

/** The writer the chaos worker uses (one per process). */
export function openRunLogWriter(target: RunLogTarget): RunLogWriter {
  if (target.kind === "postgres") {
    const pool = new pg.Pool({
      connectionString: target.url,
      max: 3,
      connectionTimeoutMillis: 5000,
    });
    // Connections die during the PostgreSQL restart; the next query opens a new one.
    pool.on("error", () => undefined);
    const table = `${quote(target.schema)}.runs`;
    return {
      async start(run) {
        await pool.query(
          `INSERT INTO ${table} (run_id, job_id, n, worker_id, pid, attempt, started_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (run_id) DO NOTHING`,
          [run.runId, run.jobId, run.n, run.workerId, run.pid, run.attempt, run.startedAt],
        );
      },
      async end(runId, outcome, endedAt) {
        await pool.query(`UPDATE ${table} SET ended_at = $2, outcome = $3 WHERE run_id = $1`, [
          runId,
          endedAt,
          outcome,
        ]);
      },
    };
  }
  const db = new Database(target.path, { timeout: 5000 });
  db.pragma("busy_timeout = 5000");
  const insert = db.prepare(
    `INSERT INTO chaos_runs (run_id, job_id, n, worker_id, pid, attempt, started_at)
     VALUES (@runId, @jobId, @n, @workerId, @pid, @attempt, @startedAt)
     ON CONFLICT (run_id) DO NOTHING`,
  );
  const update = db.prepare(
    "UPDATE chaos_runs SET ended_at = @endedAt, outcome = @outcome WHERE run_id = @runId",
  );
  return {
    async start(run) {
      insert.run(run);
    },
    async end(runId, outcome, endedAt) {
      update.run({ runId, outcome, endedAt });
    },
  };
}
