/**
 * Schedule churn (the "Done when" of issue 13): N real worker processes on a fresh PostgreSQL
 * schema and M on a fresh SQLite file run `test/fixtures/schedule-jobs.ts` (an `every: 1`
 * schedule) while random SIGKILLs, SIGTERMs and restarts hit them; then every worker is stopped
 * and the store is checked: every occurrence from the first taken to the cursor has exactly one
 * history row, every `enqueued`/`late` row exactly one job with that occurrence's dedup key, no
 * dedup key or occurrence twice, and no job for a `missed` occurrence. Never touches the
 * PostgreSQL server itself. Used by `npm run chaos:schedules` and the short in-suite test.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(REPO, "dist", "cli", "main.js");
const MODULE = join("test", "fixtures", "schedule-jobs.ts");
const SCHEDULE = "chaos.every_second";

/** Options of one churn run. */
export interface ChurnOptions {
  /** Worker processes on PostgreSQL (0 to skip PostgreSQL). */
  postgresWorkers: number;
  /** Worker processes on the SQLite file (0 to skip SQLite). */
  sqliteWorkers: number;
  /** Milliseconds of churn. */
  durationMs: number;
  /** Mean milliseconds between two faults (per store). */
  faultEveryMs: number;
  /**
   * Faults (SIGKILL, SIGTERM, restart) the churn injects at the least, per store: it goes on past
   * `durationMs` until it has (for at most another `durationMs`). A loaded machine drains and
   * restarts workers slowly, and a draw that lands on a worker still restarting injects nothing,
   * so the duration alone does not say how many faults there were. Default 0.
   */
  minFaults?: number;
  /** PostgreSQL URL (a fresh schema is made in it and dropped after). */
  postgresUrl: string;
  /** Progress lines go here (default: nowhere). */
  log?: (line: string) => void;
  /** Seed of the fault plan (default: random). */
  seed?: number;
}

/** What one store's check found. */
export interface ChurnReport {
  store: "postgres" | "sqlite";
  workers: number;
  faults: { sigkill: number; sigterm: number; restart: number };
  /** Occurrences from the first taken to the last, inclusive. */
  occurrences: number;
  /** History rows by outcome. */
  outcomes: Record<string, number>;
  /** Jobs the schedule inserted. */
  jobs: number;
  /** Every violation found (empty = exactly once held). */
  violations: string[];
  firstOccurrence: string | null;
  lastOccurrence: string | null;
}

interface Store {
  label: "postgres" | "sqlite";
  env: Record<string, string>;
  read(): Promise<{
    runs: Array<{ occurrence: number; outcome: string; job_id: string | null }>;
    jobs: Array<{ id: string; dedup_key: string; meta: string | null }>;
  }>;
  cleanup(): Promise<void>;
}

/** Worker settings: short heartbeats so a dead leader is replaced within the run. */
const FAST = {
  SONIQ_HEARTBEAT_INTERVAL: "0.5",
  SONIQ_HEARTBEAT_TIMEOUT: "3",
  SONIQ_POLL_INTERVAL: "0.2",
  SONIQ_SHUTDOWN_TIMEOUT: "3",
  SONIQ_POOL_SIZE: "3",
  SONIQ_LOG_LEVEL: "warn",
};

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SONIQ_")) env[k] = v;
  return { ...env, ...FAST, ...extra };
}

function run(args: string[], env: Record<string, string>): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO,
      env: childEnv(env),
      stdio: "ignore",
    });
    child.on("exit", (code) => resolve(code));
  });
}

/** A seeded PRNG (mulberry32), so a failing run can be repeated. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function postgresStore(url: string): Promise<Store> {
  const schema = `soniq_churn_${randomBytes(5).toString("hex")}`;
  const query = async <R>(text: string): Promise<R[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text)).rows as R[];
    } finally {
      await client.end();
    }
  };
  return {
    label: "postgres",
    env: { SONIQ_DATABASE_URL: url, SONIQ_SCHEMA: schema },
    read: async () => ({
      runs: (
        await query<{ occurrence: Date; outcome: string; job_id: string | null }>(
          `SELECT occurrence, outcome, job_id::text AS job_id FROM "${schema}".soniq_schedule_runs
           WHERE schedule_id = '${SCHEDULE}' ORDER BY id`,
        )
      ).map((r) => ({ ...r, occurrence: r.occurrence.getTime() })),
      jobs: await query(
        `SELECT id::text AS id, dedup_key, meta::text AS meta FROM "${schema}".soniq_jobs
         WHERE dedup_key LIKE 'schedule:${SCHEDULE}:%'
         UNION ALL
         SELECT id::text AS id, dedup_key, meta::text AS meta FROM "${schema}".soniq_finished_jobs
         WHERE dedup_key LIKE 'schedule:${SCHEDULE}:%'
         UNION ALL
         SELECT id::text, dedup_key, NULL FROM "${schema}".soniq_dead_letter_jobs
         WHERE dedup_key LIKE 'schedule:${SCHEDULE}:%'`,
      ),
    }),
    cleanup: async () => {
      await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

function sqliteStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), "soniq-churn-"));
  const path = join(dir, "soniq.db");
  return {
    label: "sqlite",
    env: { SONIQ_DATABASE_URL: `sqlite:${path}` },
    read: async () => {
      const db = new Database(path, { readonly: true });
      try {
        return {
          runs: db
            .prepare(
              "SELECT occurrence, outcome, job_id FROM soniq_schedule_runs WHERE schedule_id = ? ORDER BY id",
            )
            .all(SCHEDULE) as Array<{ occurrence: number; outcome: string; job_id: string | null }>,
          jobs: db
            .prepare(
              `SELECT id, dedup_key, meta FROM soniq_jobs WHERE dedup_key LIKE @p
               UNION ALL SELECT id, dedup_key, meta FROM soniq_finished_jobs WHERE dedup_key LIKE @p
               UNION ALL SELECT id, dedup_key, NULL FROM soniq_dead_letter_jobs WHERE dedup_key LIKE @p`,
            )
            .all({ p: `schedule:${SCHEDULE}:%` }) as Array<{
            id: string;
            dedup_key: string;
            meta: string | null;
          }>,
        };
      } finally {
        db.close();
      }
    },
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Checks one store's rows; see the module comment. */
export function check(
  runs: Array<{ occurrence: number; outcome: string; job_id: string | null }>,
  jobs: Array<{ id: string; dedup_key: string; meta: string | null }>,
): Omit<ChurnReport, "store" | "workers" | "faults"> {
  const violations: string[] = [];
  const outcomes: Record<string, number> = {};
  const byOccurrence = new Map<number, number>();
  for (const r of runs) {
    outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    byOccurrence.set(r.occurrence, (byOccurrence.get(r.occurrence) ?? 0) + 1);
  }
  for (const [at, n] of byOccurrence) {
    if (n > 1) violations.push(`occurrence ${new Date(at).toISOString()} has ${n} history rows`);
  }
  const sorted = [...byOccurrence.keys()].sort((a, b) => a - b);
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  if (first !== undefined && last !== undefined) {
    for (let at = first; at <= last; at += 1000) {
      if (!byOccurrence.has(at)) {
        violations.push(`occurrence ${new Date(at).toISOString()} has no history row`);
      }
    }
  }
  const keys = new Map<string, number>();
  for (const j of jobs) keys.set(j.dedup_key, (keys.get(j.dedup_key) ?? 0) + 1);
  for (const [key, n] of keys) if (n > 1) violations.push(`dedup key ${key} appears ${n} times`);
  const jobById = new Map(jobs.map((j) => [j.id, j]));
  const expected = new Set<string>();
  for (const r of runs) {
    const key = `schedule:${SCHEDULE}:${new Date(r.occurrence).toISOString()}`;
    const makesJob = r.outcome === "enqueued" || r.outcome === "late";
    if (makesJob) {
      expected.add(key);
      const job = r.job_id === null ? undefined : jobById.get(r.job_id);
      if (!job) violations.push(`${r.outcome} occurrence ${key} has no job`);
      else if (job.dedup_key !== key)
        violations.push(`job ${job.id} has key ${job.dedup_key}, expected ${key}`);
    } else if (r.job_id !== null || keys.has(key)) {
      violations.push(`${r.outcome} occurrence ${key} has a job`);
    }
  }
  for (const key of keys.keys()) {
    if (!expected.has(key)) violations.push(`job with key ${key} has no enqueued/late history row`);
  }
  return {
    occurrences: first === undefined || last === undefined ? 0 : (last - first) / 1000 + 1,
    outcomes,
    jobs: jobs.length,
    violations,
    firstOccurrence: first === undefined ? null : new Date(first).toISOString(),
    lastOccurrence: last === undefined ? null : new Date(last).toISOString(),
  };
}

/** Runs the churn on one store. */
async function churn(
  store: Store,
  workers: number,
  options: ChurnOptions,
  rand: () => number,
): Promise<ChurnReport> {
  const log = options.log ?? (() => undefined);
  if ((await run(["setup"], store.env)) !== 0)
    throw new Error(`${store.label}: soniq setup failed`);
  const slots: Array<ChildProcess | undefined> = [];
  const exits = new Set<Promise<void>>();
  const start = (i: number) => {
    const child = spawn(process.execPath, [CLI, "worker", MODULE], {
      cwd: REPO,
      env: childEnv(store.env),
      stdio: "ignore",
    });
    const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
    exits.add(exited);
    void exited.then(() => exits.delete(exited));
    slots[i] = child;
  };
  for (let i = 0; i < workers; i += 1) start(i);
  const faults = { sigkill: 0, sigterm: 0, restart: 0 };
  const end = Date.now() + options.durationMs;
  const hardEnd = end + options.durationMs;
  const minFaults = options.minFaults ?? 0;
  const injected = () => faults.sigkill + faults.sigterm + faults.restart;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  while (Date.now() < end || (injected() < minFaults && Date.now() < hardEnd)) {
    await sleep(options.faultEveryMs * (0.5 + rand()));
    const i = Math.floor(rand() * workers);
    const child = slots[i];
    if (!child || child.exitCode !== null || child.signalCode !== null) {
      start(i);
      continue;
    }
    const kind = rand();
    const gone = new Promise((r) => child.once("exit", r));
    if (kind < 0.4) {
      faults.sigkill += 1;
      child.kill("SIGKILL");
      log(`${store.label}: SIGKILL worker ${i}`);
      await gone;
      void sleep(rand() * 1000).then(() => start(i));
    } else if (kind < 0.7) {
      faults.sigterm += 1;
      child.kill("SIGTERM");
      log(`${store.label}: SIGTERM worker ${i}`);
      await gone;
      void sleep(rand() * 1000).then(() => start(i));
    } else {
      faults.restart += 1;
      child.kill("SIGTERM");
      log(`${store.label}: restart worker ${i}`);
      await gone;
      start(i);
    }
  }
  await sleep(1_500); // the restarts still pending
  for (const child of slots) child?.kill("SIGTERM");
  await Promise.all([...exits]);
  const { runs, jobs } = await store.read();
  const result = check(runs, jobs);
  log(
    `${store.label}: ${result.occurrences} occurrences, outcomes ${JSON.stringify(result.outcomes)}, ${result.jobs} jobs, ${result.violations.length} violations`,
  );
  return { store: store.label, workers, faults, ...result };
}

/** Runs the churn on both stores at once; see the module comment. */
export async function scheduleChurn(options: ChurnOptions): Promise<ChurnReport[]> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  options.log?.(`seed ${seed}`);
  const rand = random(seed);
  const stores: Array<{ store: Store; workers: number }> = [];
  if (options.postgresWorkers > 0) {
    stores.push({
      store: await postgresStore(options.postgresUrl),
      workers: options.postgresWorkers,
    });
  }
  if (options.sqliteWorkers > 0)
    stores.push({ store: sqliteStore(), workers: options.sqliteWorkers });
  try {
    return await Promise.all(
      stores.map(({ store, workers }) => churn(store, workers, options, rand)),
    );
  } finally {
    for (const { store } of stores) await store.cleanup().catch(() => undefined);
  }
}
