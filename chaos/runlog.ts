/**
 * The run log: one row per handler run, written by the chaos job itself into the same database
 * as the queue (PostgreSQL: table `runs` in its own schema; SQLite: table `chaos_runs` in the
 * same file). A run row is inserted when the handler starts and gets `ended_at` and `outcome`
 * (`completed`, `failed` or `aborted`) when it ends, so a run killed mid-handler stays open.
 * Times are `Date.now()` milliseconds of the writing process (one machine, one clock).
 *
 * Checkpointed and stepped jobs (docs/checkpoints.md) write three more tables (PostgreSQL `items`,
 * `checkpoints`, `effects`; SQLite `chaos_items`, `chaos_checkpoints`, `chaos_effects`): a walker
 * records every item it processes (the record is the work) and every checkpoint once it resolved;
 * a stepped job's effect step records its effect (one row per run that applied it).
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
  /** A walker processed `item` in run `runId`. */
  item(jobId: string, runId: string, item: number): Promise<void>;
  /** A walker's checkpoint `{ next: upto }` resolved (durable) in run `runId`. */
  checkpointed(jobId: string, runId: string, upto: number): Promise<void>;
  /** A stepped job's effect, applied by run `runId` (idempotent per run). */
  effect(jobId: string, runId: string): Promise<void>;
  /** The run that applied job `jobId`'s effect, or null (what `reconcile` and the operator ask). */
  effectOf(jobId: string): Promise<string | null>;
}

/** A walker's processed item. */
export interface ItemRow {
  jobId: string;
  runId: string;
  item: number;
}

/** A walker's durable checkpoint, as recorded after it resolved. */
export interface CheckpointRow {
  jobId: string;
  runId: string;
  upto: number;
  at: number;
}

/** A stepped job's applied effect. */
export interface EffectRow {
  jobId: string;
  runId: string;
}

/** Everything the walkers and stepped jobs recorded. */
export interface ResumeLog {
  items: ItemRow[];
  checkpoints: CheckpointRow[];
  effects: EffectRow[];
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
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.items (
        job_id uuid NOT NULL, run_id uuid NOT NULL, item integer NOT NULL)`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.checkpoints (
        job_id uuid NOT NULL, run_id uuid NOT NULL, upto integer NOT NULL, at bigint NOT NULL)`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.effects (
        job_id uuid NOT NULL, run_id uuid NOT NULL, PRIMARY KEY (job_id, run_id))`);
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
    db.exec(`CREATE TABLE IF NOT EXISTS chaos_items (
      job_id TEXT NOT NULL, run_id TEXT NOT NULL, item INTEGER NOT NULL)`);
    db.exec(`CREATE TABLE IF NOT EXISTS chaos_checkpoints (
      job_id TEXT NOT NULL, run_id TEXT NOT NULL, upto INTEGER NOT NULL, at INTEGER NOT NULL)`);
    db.exec(`CREATE TABLE IF NOT EXISTS chaos_effects (
      job_id TEXT NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (job_id, run_id))`);
  } finally {
    db.close();
  }
}

/** Reads what the walkers and stepped jobs recorded. */
export async function readResumeLog(target: RunLogTarget): Promise<ResumeLog> {
  const items = "SELECT job_id, run_id, item FROM";
  const checkpoints = "SELECT job_id, run_id, upto, at FROM";
  const effects = "SELECT job_id, run_id FROM";
  type Raw = { job_id: string; run_id: string; item?: number; upto?: number; at?: number | string };
  const shape = (rows: { items: Raw[]; checkpoints: Raw[]; effects: Raw[] }): ResumeLog => ({
    items: rows.items.map((r) => ({ jobId: r.job_id, runId: r.run_id, item: Number(r.item) })),
    checkpoints: rows.checkpoints.map((r) => ({
      jobId: r.job_id,
      runId: r.run_id,
      upto: Number(r.upto),
      at: Number(r.at),
    })),
    effects: rows.effects.map((r) => ({ jobId: r.job_id, runId: r.run_id })),
  });
  if (target.kind === "postgres") {
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      const s = quote(target.schema);
      const cast = (sql: string) =>
        sql.replace("job_id, run_id", "job_id::text AS job_id, run_id::text AS run_id");
      return shape({
        items: (await client.query<Raw>(`${cast(items)} ${s}.items`)).rows,
        checkpoints: (await client.query<Raw>(`${cast(checkpoints)} ${s}.checkpoints`)).rows,
        effects: (await client.query<Raw>(`${cast(effects)} ${s}.effects`)).rows,
      });
    } finally {
      await client.end();
    }
  }
  const db = new Database(target.path, { readonly: true, timeout: 10_000 });
  try {
    return shape({
      items: db.prepare(`${items} chaos_items`).all() as Raw[],
      checkpoints: db.prepare(`${checkpoints} chaos_checkpoints`).all() as Raw[],
      effects: db.prepare(`${effects} chaos_effects`).all() as Raw[],
    });
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
      async item(jobId, runId, item) {
        await pool.query(
          `INSERT INTO ${quote(target.schema)}.items (job_id, run_id, item) VALUES ($1, $2, $3)`,
          [jobId, runId, item],
        );
      },
      async checkpointed(jobId, runId, upto) {
        await pool.query(
          `INSERT INTO ${quote(target.schema)}.checkpoints (job_id, run_id, upto, at)
           VALUES ($1, $2, $3, $4)`,
          [jobId, runId, upto, Date.now()],
        );
      },
      async effect(jobId, runId) {
        await pool.query(
          `INSERT INTO ${quote(target.schema)}.effects (job_id, run_id) VALUES ($1, $2)
           ON CONFLICT DO NOTHING`,
          [jobId, runId],
        );
      },
      async effectOf(jobId) {
        const { rows } = await pool.query<{ run_id: string }>(
          `SELECT run_id::text AS run_id FROM ${quote(target.schema)}.effects WHERE job_id = $1 LIMIT 1`,
          [jobId],
        );
        return rows[0]?.run_id ?? null;
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
  const insertItem = db.prepare(
    "INSERT INTO chaos_items (job_id, run_id, item) VALUES (@jobId, @runId, @item)",
  );
  const insertCheckpoint = db.prepare(
    "INSERT INTO chaos_checkpoints (job_id, run_id, upto, at) VALUES (@jobId, @runId, @upto, @at)",
  );
  const insertEffect = db.prepare(
    "INSERT INTO chaos_effects (job_id, run_id) VALUES (@jobId, @runId) ON CONFLICT DO NOTHING",
  );
  const selectEffect = db.prepare("SELECT run_id FROM chaos_effects WHERE job_id = ? LIMIT 1");
  return {
    async start(run) {
      insert.run(run);
    },
    async end(runId, outcome, endedAt) {
      update.run({ runId, outcome, endedAt });
    },
    async item(jobId, runId, item) {
      insertItem.run({ jobId, runId, item });
    },
    async checkpointed(jobId, runId, upto) {
      insertCheckpoint.run({ jobId, runId, upto, at: Date.now() });
    },
    async effect(jobId, runId) {
      insertEffect.run({ jobId, runId });
    },
    async effectOf(jobId) {
      const row = selectEffect.get(jobId) as { run_id: string } | undefined;
      return row?.run_id ?? null;
    },
  };
}
