/**
 * The chaos harness: `npm run chaos` (full) or `npm run chaos:short` (CI). See docs/reliability.md.
 *
 * For each backend (a fresh PostgreSQL schema, a fresh SQLite file) it keeps N real worker
 * processes (`node dist/cli/main.js worker chaos/jobs.ts`) running while a producer process
 * enqueues thousands of jobs, and injects faults from a seeded plan: SIGKILL, SIGTERM,
 * SIGSTOP/SIGCONT (some pauses beyond the stale window, some well inside it) and, on PostgreSQL,
 * one server restart. Killed and terminated workers are replaced. After the chaos phase it stops
 * injecting, waits for the queue to drain, SIGTERMs every worker, runs `soniq recover`, and checks
 * what is left (chaos/report.ts). Exit code 1 when a must-be-zero check fails.
 *
 * Remote jobs (docs/remote-jobs.md) join the workload: the producer enqueues a tenth as many remote
 * jobs (chaos/remote-workload.ts) against the test provider, run as a child process
 * (chaos/provider.ts); after the queue drained, chaos/remote-phase.ts waits for them, performs the
 * operator step for frozen jobs without `reconcile`, and chaos/remote-report.ts adds the remote
 * checks (hand-offs, releases, frozen jobs, duplicate POSTs, orphaned task ids, unexplained ends).
 *
 * Flows and batches (docs/workflows.md) join it too (chaos/flows.ts): the producer enqueues them
 * over the same window; after the queue drained the harness waits for every root and callback to
 * end, and adds the flow checks (jobs lost, stranded, run early; callbacks twice or never).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { type PgBouncer, startPgBouncer } from "../test/helpers/pgbouncer-process.js";
import { analyzeFlow } from "./flow-report.js";
import { analyzeFlows, FLOW_NAME_LIKE, flowCount, settleFlows } from "./flows.js";
import { type FaultKind, faultPlan, jobSpec, type PlannedFault } from "./plan.js";
import { readProviderState, settleRemote } from "./remote-phase.js";
import { analyzeRemote, countRemoteLines, type RemoteLogCounts } from "./remote-report.js";
import { REMOTE_NAME_LIKE, remoteCount } from "./remote-workload.js";
import {
  type Analysis,
  type AnalysisInput,
  analyze,
  type DeadState,
  type FaultRecord,
  type JobState,
  type NackEvent,
  type RecoveryEvent,
  type RunSettings,
  renderTable,
  type WorkerExitRecord,
} from "./report.js";
import { analyzeResume } from "./resume-report.js";
import { createRunLog, type RunLogTarget, readResumeLog, readRunLog } from "./runlog.js";
import { stepsOperator } from "./steps-operator.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(REPO, "dist", "cli", "main.js");
const JOBS_MODULE = join("chaos", "jobs.ts");
const PRODUCER = join(REPO, "chaos", "producer.ts");
const PROVIDER = join(REPO, "chaos", "provider.ts");
/** Remote jobs, flows and batches are kept out of the plain jobs' checks (they have their own). */
const NOT_REMOTE = `name NOT LIKE '${REMOTE_NAME_LIKE}' AND name NOT LIKE '${FLOW_NAME_LIKE}'`;
const execFileP = promisify(execFile);

/** The worker settings of a chaos run: short, so recovery happens within the run. */
const SETTINGS: RunSettings & { concurrency: number; poolSize: number } = {
  heartbeatInterval: 0.5,
  heartbeatTimeout: 3,
  pollInterval: 0.2,
  shutdownTimeout: 3,
  maxInterruptions: 3,
  concurrency: 8,
  poolSize: 4,
};

const USAGE = `usage: node --import tsx chaos/run.ts [options]   (after npm run build)
  --backend postgres|sqlite|both   default both
  --jobs N                         jobs per backend (default 4000; --short 800)
  --remote-jobs N                  remote jobs per backend (default a tenth of --jobs, at least 20)
  --workers N                      worker processes kept running (default 4)
  --duration S                     seconds of fault injection per backend (default 75; --short 30)
  --short                          the CI version: fewer jobs, shorter phase, same fault kinds
  --seed N                         the plan's seed (jobs and fault schedule); default random
  --database-url URL               PostgreSQL (default TEST_DATABASE_URL or postgres://postgres@127.0.0.1:5432/test)
  --no-pg-restart                  do not restart PostgreSQL (reported as skipped)
  --pgbouncer                      PostgreSQL workers through Debian's PgBouncer in transaction mode
                                   (started by the harness; pooler "transaction", LISTEN direct via
                                   listenUrl); setup, the producer and the checks stay direct
  --keep                           keep the run directory, schemas and files
The PostgreSQL restart runs CHAOS_PG_RESTART (a shell command) if set, else
pg_ctlcluster --skip-systemctl-redirect <version> main restart.`;

const { values: flags } = parseArgs({
  options: {
    backend: { type: "string", default: "both" },
    jobs: { type: "string" },
    "remote-jobs": { type: "string" },
    workers: { type: "string", default: "4" },
    duration: { type: "string" },
    short: { type: "boolean", default: false },
    seed: { type: "string" },
    "database-url": { type: "string" },
    "no-pg-restart": { type: "boolean", default: false },
    pgbouncer: { type: "boolean", default: false },
    keep: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  strict: true,
});

if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

function intFlag(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`chaos: --${name} must be an integer >= ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

const short = flags.short === true;
const backends: Array<"postgres" | "sqlite"> =
  flags.backend === "both"
    ? ["postgres", "sqlite"]
    : flags.backend === "postgres" || flags.backend === "sqlite"
      ? [flags.backend]
      : (() => {
          process.stderr.write(`chaos: --backend must be postgres, sqlite or both\n${USAGE}\n`);
          process.exit(2);
        })();
const config = {
  jobs: intFlag("jobs", flags.jobs, short ? 800 : 4000, 1),
  workers: intFlag("workers", flags.workers, 4, 2),
  remoteJobs: 0,
  duration: intFlag("duration", flags.duration, short ? 30 : 75, 10),
  seed: intFlag("seed", flags.seed, randomBytes(4).readUInt32BE() >>> 1, 0),
  meanGap: short ? 6 : 3.5,
  databaseUrl:
    flags["database-url"] ??
    process.env.TEST_DATABASE_URL ??
    "postgres://postgres@127.0.0.1:5432/test",
  pgRestart: !flags["no-pg-restart"],
  pgbouncer: flags.pgbouncer === true,
  keep: flags.keep === true,
};

config.remoteJobs = intFlag("remote-jobs", flags["remote-jobs"], remoteCount(config.jobs), 0);

if (!existsSync(CLI)) {
  process.stderr.write(`chaos: ${CLI} is missing: run npm run build first\n`);
  process.exit(2);
}

const began = Date.now();
function log(message: string): void {
  const s = ((Date.now() - began) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[${s}s] ${message}\n`);
}
function loud(message: string): void {
  const bar = "!".repeat(78);
  process.stderr.write(`\n${bar}\n!!! ${message}\n${bar}\n\n`);
}
/** Every child process started, so that none outlives the harness whatever happens. */
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
});
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Environment for a child: this process's minus SONIQ_* (unknown ones are errors), plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SONIQ_")) env[k] = v;
  return { ...env, ...extra };
}

/** Runs `soniq <args>` to completion. */
function runCli(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: REPO,
      env: childEnv(env),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

// ---- PostgreSQL restart ------------------------------------------------------------------------

function isLocal(url: string): boolean {
  try {
    const host = new URL(url).hostname;
    return host === "127.0.0.1" || host === "localhost" || host === "::1" || host === "[::1]";
  } catch {
    return false;
  }
}

/** The restart command, or why there is none. */
function restartCommand(): { argv: string[] } | { skip: string } {
  const custom = process.env.CHAOS_PG_RESTART;
  if (custom) return { argv: ["sh", "-c", custom] };
  if (!isLocal(config.databaseUrl))
    return { skip: "the PostgreSQL server is not local (set CHAOS_PG_RESTART to restart it)" };
  const versions = existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql") : [];
  if (versions.length !== 1)
    return { skip: "no single cluster under /etc/postgresql (set CHAOS_PG_RESTART)" };
  return {
    argv: ["pg_ctlcluster", "--skip-systemctl-redirect", versions[0] as string, "main", "restart"],
  };
}

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({
    connectionString: config.databaseUrl,
    connectionTimeoutMillis: 1000,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function waitForPostgres(timeoutMs: number): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await postgresAnswers()) return Date.now();
    await sleep(100);
  }
  return undefined;
}

/** Leaves PostgreSQL running whatever happened: starts the cluster if it does not answer. */
async function ensurePostgresRunning(): Promise<void> {
  if (!backends.includes("postgres")) return;
  if (await waitForPostgres(5000)) return;
  loud("PostgreSQL does not answer after the chaos run: starting it");
  const versions = existsSync("/etc/postgresql") ? readdirSync("/etc/postgresql") : [];
  if (versions.length === 1) {
    await execFileP("pg_ctlcluster", [
      "--skip-systemctl-redirect",
      versions[0] as string,
      "main",
      "start",
    ]).catch((err: unknown) => loud(`pg_ctlcluster start failed: ${String(err)}`));
  }
  if (!(await waitForPostgres(30_000))) loud("PostgreSQL is still not answering");
}

async function restartPostgres(record: FaultRecord): Promise<void> {
  const cmd = restartCommand();
  if ("skip" in cmd) {
    record.skipped = cmd.skip;
    loud(`PostgreSQL restart SKIPPED: ${cmd.skip}`);
    return;
  }
  log(`fault: PostgreSQL restart (${cmd.argv.join(" ")})`);
  record.at = Date.now();
  // Probe while the command runs: when did the server stop answering, and when did it answer again?
  let commandDone = false;
  const probe = (async () => {
    for (;;) {
      const ok = await postgresAnswers();
      const now = Date.now();
      if (!ok && record.downAt === undefined) record.downAt = now;
      if (ok && record.downAt !== undefined) {
        record.readyAt = now;
        return;
      }
      if (ok && commandDone) {
        record.readyAt = now; // never saw it down (a very fast restart)
        return;
      }
      if (now - record.at > 90_000) return;
      await sleep(50);
    }
  })();
  try {
    await execFileP(cmd.argv[0] as string, cmd.argv.slice(1), { timeout: 60_000 });
  } catch (err) {
    record.skipped = `the restart command failed: ${String(err).split("\n")[0]}`;
    loud(`PostgreSQL restart FAILED, counted as skipped: ${record.skipped}`);
  }
  record.endAt = Date.now();
  commandDone = true;
  await probe;
  if (record.readyAt === undefined) {
    await ensurePostgresRunning();
    record.readyAt = Date.now();
  }
  log(
    `PostgreSQL: refused connections for ${((record.readyAt - (record.downAt ?? record.at)) / 1000).toFixed(2)} s; the restart command took ${((record.endAt - record.at) / 1000).toFixed(2)} s`,
  );
}

// ---- stores --------------------------------------------------------------------------------------

interface Store {
  kind: "postgres" | "sqlite";
  /** SONIQ_* for every process of this store. */
  env: Record<string, string>;
  runLog: RunLogTarget;
  counts(): Promise<{ queued: number; processing: number }>;
  final(): Promise<{ jobs: JobState[]; dead: DeadState[]; workerPids: Map<string, number> }>;
  cleanup(): Promise<void>;
}

async function pgQuery<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: config.databaseUrl });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function postgresStore(): Store {
  const schema = `chaos_${randomBytes(5).toString("hex")}`;
  const runSchema = `${schema}_runs`;
  const q = (table: string) => `"${schema}".${table}`;
  return {
    kind: "postgres",
    env: { SONIQ_DATABASE_URL: config.databaseUrl, SONIQ_SCHEMA: schema },
    runLog: { kind: "postgres", url: config.databaseUrl, schema: runSchema },
    async counts() {
      const rows = await pgQuery<{ status: string; n: string }>(
        `SELECT status, count(*) AS n FROM ${q("soniq_jobs")} WHERE ${NOT_REMOTE} GROUP BY status`,
      );
      const get = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
      return { queued: get("queued"), processing: get("processing") };
    },
    async final() {
      const jobs = await pgQuery<JobState>(
        `SELECT id::text AS id, status, attempts, interruptions FROM ${q("soniq_jobs")} WHERE ${NOT_REMOTE}
         UNION ALL
         SELECT id::text, status, attempts, interruptions FROM ${q("soniq_finished_jobs")} WHERE ${NOT_REMOTE}`,
      );
      const dead = await pgQuery<DeadState>(
        `SELECT id::text AS id, reason, attempts, interruptions FROM ${q("soniq_dead_letter_jobs")} WHERE ${NOT_REMOTE}`,
      );
      const workers = await pgQuery<{ id: string; pid: number }>(
        `SELECT id, pid FROM ${q("soniq_workers")}`,
      );
      return { jobs, dead, workerPids: new Map(workers.map((w) => [w.id, Number(w.pid)])) };
    },
    async cleanup() {
      await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pgQuery(`DROP SCHEMA IF EXISTS "${runSchema}" CASCADE`);
    },
  };
}

function sqliteStore(dir: string): Store {
  const path = join(dir, "soniq.db");
  const read = <T>(sql: string): T[] => {
    const db = new Database(path, { readonly: true, timeout: 10_000 });
    try {
      return db.prepare(sql).all() as T[];
    } finally {
      db.close();
    }
  };
  return {
    kind: "sqlite",
    env: { SONIQ_DATABASE_URL: `sqlite:${path}` },
    runLog: { kind: "sqlite", path },
    async counts() {
      const rows = read<{ status: string; n: number }>(
        `SELECT status, count(*) AS n FROM soniq_jobs WHERE ${NOT_REMOTE} GROUP BY status`,
      );
      const get = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
      return { queued: get("queued"), processing: get("processing") };
    },
    async final() {
      const jobs = read<JobState>(
        `SELECT id, status, attempts, interruptions FROM soniq_jobs WHERE ${NOT_REMOTE}
         UNION ALL
         SELECT id, status, attempts, interruptions FROM soniq_finished_jobs WHERE ${NOT_REMOTE}`,
      );
      const dead = read<DeadState>(
        `SELECT id, reason, attempts, interruptions FROM soniq_dead_letter_jobs WHERE ${NOT_REMOTE}`,
      );
      const workers = read<{ id: string; pid: number }>("SELECT id, pid FROM soniq_workers");
      return { jobs, dead, workerPids: new Map(workers.map((w) => [w.id, Number(w.pid)])) };
    },
    async cleanup() {
      // The directory (with the file) goes with the run directory.
    },
  };
}

/**
 * Whether a process just stopped holds the SQLite write lock: `BEGIN IMMEDIATE` without waiting,
 * tried 8 times over ~400 ms while it stays stopped. Other workers hold the lock for
 * milliseconds at a time, so the lock never being free means the stopped process holds it.
 */
async function holdsWriteLock(path: string, stillStopped: () => boolean): Promise<boolean> {
  let db: Database.Database;
  try {
    db = new Database(path, { timeout: 0 });
  } catch {
    return false;
  }
  try {
    for (let i = 0; i < 8; i++) {
      if (!stillStopped()) return false;
      try {
        db.exec("BEGIN IMMEDIATE");
        db.exec("ROLLBACK");
        return false;
      } catch {
        // busy: held by someone
      }
      await sleep(50);
    }
    return stillStopped();
  } finally {
    db.close();
  }
}

// ---- the worker pool -------------------------------------------------------------------------------

interface Managed {
  label: string;
  slot: number;
  child: ChildProcess;
  pid: number;
  state: "alive" | "stopped" | "terminating" | "dead";
  cause: string | null;
  logFile: string;
  exited: Promise<void>;
  contTimer?: NodeJS.Timeout;
  contRecord?: FaultRecord;
}

class WorkerPool {
  readonly all: Managed[] = [];
  readonly exits: WorkerExitRecord[] = [];
  respawn = true;
  private generation = 0;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly dir: string,
  ) {}

  spawn(slot: number): Managed {
    this.generation += 1;
    const label = `w${slot}.${this.generation}`;
    const logFile = join(this.dir, `worker-${label}.log`);
    const fd = openSync(logFile, "a");
    // Health endpoints on a free port; after the drain they linger until the harness has scraped
    // the final counters (scrapeStopped), so the NACK counter can be compared with the logs.
    const child = spawn(
      process.execPath,
      [
        CLI,
        "worker",
        JOBS_MODULE,
        "--health-port",
        "0",
        "--health-host",
        "127.0.0.1",
        "--health-linger",
        "60",
      ],
      {
        cwd: REPO,
        env: this.env,
        stdio: ["ignore", fd, fd],
      },
    );
    closeSync(fd);
    children.add(child);
    const managed: Managed = {
      label,
      slot,
      child,
      pid: child.pid as number,
      state: "alive",
      cause: null,
      logFile,
      exited: Promise.resolve(),
    };
    managed.exited = new Promise((resolve) => {
      child.on("exit", (code, signal) => {
        managed.state = "dead";
        clearTimeout(managed.contTimer);
        this.exits.push({
          label,
          pid: managed.pid,
          code,
          signal,
          at: Date.now(),
          cause: managed.cause,
        });
        if (this.respawn) setTimeout(() => this.respawn && this.spawn(slot), 200);
        resolve();
      });
    });
    this.all.push(managed);
    return managed;
  }

  /** Final NACK counters scraped from workers that stopped, by label. */
  readonly scraped = new Map<string, { scraped: number; logged: number }>();

  /**
   * Scrapes `/metrics` of every worker whose log says its health endpoints linger (it stopped,
   * every row durable), records its `soniq_shutdown_nacks_total` sum against the NACK lines of its
   * log, then ends the linger with SIGTERM. Called on a timer and before the final accounting.
   */
  async scrapeStopped(): Promise<void> {
    for (const w of this.all) {
      if (w.state === "dead" || this.scraped.has(w.label)) continue;
      let text: string;
      try {
        text = readFileSync(w.logFile, "utf8");
      } catch {
        continue;
      }
      if (!text.includes("health endpoints linger")) continue;
      const port = /"port":(\d+)/.exec(text)?.[1];
      if (port === undefined) continue;
      try {
        const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        const scraped = [
          ...body.matchAll(/^soniq_shutdown_nacks_total(?:\{[^}]*\})? (\S+)$/gm),
        ].reduce((sum, m) => sum + Number(m[1]), 0);
        const logged = [...text.matchAll(/job NACK'd/g)].length;
        this.scraped.set(w.label, { scraped, logged });
      } catch {
        continue; // not answering yet; next round
      }
      w.child.kill("SIGTERM"); // ends the linger
    }
  }

  /** The scraped totals for the report. */
  scrapedNacks(): NonNullable<AnalysisInput["scrapedNacks"]> {
    let scraped = 0;
    let logged = 0;
    for (const s of this.scraped.values()) {
      scraped += s.scraped;
      logged += s.logged;
    }
    let unscrapedWorkers = 0;
    let unscrapedNacks = 0;
    for (const w of this.all) {
      if (this.scraped.has(w.label)) continue;
      let text = "";
      try {
        text = readFileSync(w.logFile, "utf8");
      } catch {
        // no log: it never started
      }
      const nacks = [...text.matchAll(/job NACK'd/g)].length;
      if (nacks > 0 || text.includes("draining")) {
        unscrapedWorkers += 1;
        unscrapedNacks += nacks;
      }
    }
    return {
      scraped,
      logged,
      workers: this.scraped.size,
      unscraped: { workers: unscrapedWorkers, loggedNacks: unscrapedNacks },
    };
  }

  running(): Managed[] {
    return this.all.filter((w) => w.state === "alive");
  }

  notDead(): Managed[] {
    return this.all.filter((w) => w.state !== "dead");
  }

  cont(w: Managed): void {
    clearTimeout(w.contTimer);
    if (w.state !== "stopped") return;
    w.child.kill("SIGCONT");
    w.state = "alive";
    if (w.contRecord) w.contRecord.contAt = Date.now();
  }
}

// ---- log parsing ----------------------------------------------------------------------------------

interface ParsedLogs {
  recoveries: RecoveryEvent[];
  nacks: NackEvent[];
  counts: Record<string, number>;
  stray: string[];
}

function parseWorkerLogs(pool: WorkerPool): ParsedLogs {
  const recoveries: RecoveryEvent[] = [];
  const nacks: NackEvent[] = [];
  const counts = {
    "fenced-out writes": 0,
    "outcome writes retried (db away)": 0,
    "outcome writes given up": 0,
    "claim failures": 0,
    "failed ticks (heartbeat/maintenance)": 0,
    "shutdown NACKs": 0,
    "orphaned claims released": 0,
  };
  const stray: string[] = [];
  for (const w of pool.all) {
    const text = existsSync(w.logFile) ? readFileSync(w.logFile, "utf8") : "";
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      let entry: {
        msg?: string;
        time?: string;
        job_id?: string;
        worker_id?: string;
        previous_owner?: string | null;
        charged?: boolean;
      };
      try {
        entry = JSON.parse(line);
      } catch {
        stray.push(`${w.label}: ${line.slice(0, 200)}`);
        continue;
      }
      const msg = entry.msg ?? "";
      const at = entry.time ? Date.parse(entry.time) : 0;
      if (msg.startsWith("recovered a job whose worker is not live")) {
        recoveries.push({
          at,
          jobId: entry.job_id ?? "",
          previousOwner: entry.previous_owner ?? null,
          kind: "requeued",
          charged: entry.charged !== false,
          source: w.label,
        });
      } else if (msg.startsWith("a job keeps losing its worker")) {
        recoveries.push({
          at,
          jobId: entry.job_id ?? "",
          previousOwner: entry.previous_owner ?? null,
          kind: "crash_loop",
          charged: true,
          source: w.label,
        });
      } else if (msg.includes("was fenced out")) counts["fenced-out writes"] += 1;
      else if (msg.startsWith("cannot record the")) counts["outcome writes retried (db away)"] += 1;
      else if (msg.startsWith("could not record the")) counts["outcome writes given up"] += 1;
      else if (msg === "claim failed") counts["claim failures"] += 1;
      else if (msg.includes("tick failed")) counts["failed ticks (heartbeat/maintenance)"] += 1;
      else if (msg.startsWith("released a job claimed by an answer that was lost"))
        counts["orphaned claims released"] += 1;
      else if (msg.startsWith("job NACK'd")) {
        counts["shutdown NACKs"] += 1;
        nacks.push({ at, jobId: entry.job_id ?? "", workerId: entry.worker_id ?? "" });
      }
    }
  }
  return { recoveries, nacks, counts, stray };
}

// ---- the remote test provider ---------------------------------------------------------------------

/** Starts chaos/provider.ts; resolves once it printed its URL. */
async function startProvider(
  stateFile: string,
  dir: string,
): Promise<{ url: string; stop(): Promise<void> }> {
  const out = openSync(join(dir, "provider.log"), "a");
  const child = spawn(process.execPath, ["--import", "tsx", PROVIDER], {
    cwd: REPO,
    env: childEnv({ CHAOS_PROVIDER_STATE: stateFile }),
    stdio: ["ignore", "pipe", out],
  });
  closeSync(out);
  children.add(child);
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout?.on("data", (d: Buffer) => {
      text += d.toString();
      const line = text.split("\n")[0] ?? "";
      if (text.includes("\n")) resolve(line.trim());
    });
    child.on("exit", (code) => reject(new Error(`the test provider exited ${code}`)));
  });
  return {
    url,
    async stop() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await Promise.race([exited, sleep(5000)]);
    },
  };
}

// ---- one backend ------------------------------------------------------------------------------------

interface BackendResult {
  analysis: Analysis;
  dir: string;
}

async function runBackend(kind: "postgres" | "sqlite"): Promise<BackendResult> {
  const t0 = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `soniq-chaos-${kind}-`));
  const store = kind === "postgres" ? postgresStore() : sqliteStore(dir);
  const restart = kind === "postgres" && config.pgRestart ? restartCommand() : null;
  const plan = faultPlan({
    seed: config.seed,
    duration: config.duration,
    pgRestart: kind === "postgres",
    heartbeatTimeout: SETTINGS.heartbeatTimeout,
    heartbeatInterval: SETTINGS.heartbeatInterval,
    meanGap: config.meanGap,
  });
  log(
    `${kind}: run directory ${dir}; ${store.env.SONIQ_SCHEMA ? `schema ${store.env.SONIQ_SCHEMA}` : store.env.SONIQ_DATABASE_URL}`,
  );
  const faults: FaultRecord[] = [];
  if (kind === "postgres" && (!config.pgRestart || (restart && "skip" in restart))) {
    const why = !config.pgRestart ? "--no-pg-restart" : (restart as { skip: string }).skip;
    loud(`PostgreSQL restart SKIPPED: ${why}`);
  }

  const setup = await runCli(["setup"], store.env);
  if (setup.code !== 0) throw new Error(`soniq setup failed: ${setup.stderr}`);
  await createRunLog(store.runLog);
  const providerStateFile = join(dir, "provider.json");
  const provider = await startProvider(providerStateFile, dir);
  // --pgbouncer: the workers' pools go through a transaction-mode PgBouncer, LISTEN straight to
  // PostgreSQL (docs/backends.md, "Behind PgBouncer in transaction mode").
  let bouncer: PgBouncer | undefined;
  if (kind === "postgres" && config.pgbouncer) {
    // Room for every worker's pool (workers x poolSize) and the replacements' overlap.
    bouncer = await startPgBouncer({
      target: config.databaseUrl,
      dir,
      poolSize: (config.workers + 2) * SETTINGS.poolSize,
    });
    const started = bouncer;
    process.once("exit", () => started.kill("SIGKILL"));
    log(`${kind}: workers through PgBouncer (transaction mode) at ${bouncer.url}`);
  }
  const pooled: Record<string, string> = bouncer
    ? {
        SONIQ_DATABASE_URL: bouncer.url,
        SONIQ_POOLER: "transaction",
        SONIQ_LISTEN_URL: config.databaseUrl,
      }
    : {};
  const flowsFile = join(dir, "flows.jsonl");
  const flowLog = join(dir, "flow-runs.log");

  const workerEnv = childEnv({
    ...store.env,
    ...pooled,
    SONIQ_HEARTBEAT_INTERVAL: String(SETTINGS.heartbeatInterval),
    SONIQ_HEARTBEAT_TIMEOUT: String(SETTINGS.heartbeatTimeout),
    SONIQ_SHUTDOWN_TIMEOUT: String(SETTINGS.shutdownTimeout),
    SONIQ_POLL_INTERVAL: String(SETTINGS.pollInterval),
    SONIQ_MAX_INTERRUPTIONS: String(SETTINGS.maxInterruptions),
    SONIQ_CONCURRENCY: String(SETTINGS.concurrency),
    SONIQ_POOL_SIZE: String(SETTINGS.poolSize),
    SONIQ_LOG_LEVEL: "info",
    CHAOS_PROVIDER_URL: provider.url,
    CHAOS_FLOW_LOG: flowLog,
    ...(store.runLog.kind === "postgres" ? { CHAOS_RUNLOG_SCHEMA: store.runLog.schema } : {}),
  });
  const pool = new WorkerPool(workerEnv, dir);
  for (let slot = 0; slot < config.workers; slot++) pool.spawn(slot);
  const scraper = setInterval(() => void pool.scrapeStopped(), 250);
  const readyBy = Date.now() + 30_000;
  while (
    pool.all.some((w) => !readFileSync(w.logFile, "utf8").includes("worker started")) &&
    Date.now() < readyBy
  ) {
    await sleep(100);
  }
  log(`${kind}: ${config.workers} workers started; chaos phase of ${config.duration} s begins`);

  // The producer, paced over 80 % of the chaos phase.
  const idsFile = join(dir, "enqueued.txt");
  writeFileSync(idsFile, "");
  const remoteIdsFile = join(dir, "remote-enqueued.txt");
  writeFileSync(remoteIdsFile, "");
  const producerLog = openSync(join(dir, "producer.log"), "a");
  const producer = spawn(process.execPath, ["--import", "tsx", PRODUCER], {
    cwd: REPO,
    env: childEnv({
      ...store.env,
      CHAOS_JOBS: String(config.jobs),
      CHAOS_SEED: String(config.seed),
      CHAOS_ENQUEUE_SECONDS: String(config.duration * 0.8),
      CHAOS_IDS_FILE: idsFile,
      CHAOS_REMOTE_JOBS: String(config.remoteJobs),
      CHAOS_REMOTE_IDS_FILE: remoteIdsFile,
      CHAOS_FLOWS: String(flowCount(config.jobs)),
      CHAOS_FLOWS_FILE: flowsFile,
    }),
    stdio: ["ignore", producerLog, producerLog],
  });
  closeSync(producerLog);
  children.add(producer);
  const producerDone = new Promise<number | null>((resolve) =>
    producer.on("exit", (code) => resolve(code)),
  );

  // ---- chaos phase ----
  const chaosStart = Date.now();
  const restarts: Promise<void>[] = [];
  for (const f of plan) {
    await sleep(chaosStart + f.at * 1000 - Date.now());
    // With too few running workers, try again for up to 3 s before giving the fault up.
    const giveUpAt = Date.now() + 3000;
    while (!inject(f, Date.now() >= giveUpAt)) await sleep(250);
  }
  await sleep(chaosStart + config.duration * 1000 - Date.now());
  const chaosEnd = Date.now();
  for (const w of pool.all) pool.cont(w);
  await Promise.all(restarts);
  log(`${kind}: chaos phase over (${faults.filter((f) => !f.skipped).length} faults); draining`);

  /** Injects `f`; false (nothing recorded) when no worker can take it now, unless `last`. */
  function inject(f: PlannedFault, last: boolean): boolean {
    const record: FaultRecord = { kind: f.kind, planned: f.at, at: Date.now() };
    if (f.kind === "pg_restart") {
      faults.push(record);
      if (!config.pgRestart) record.skipped = "--no-pg-restart";
      else restarts.push(restartPostgres(record));
      return true;
    }
    const candidates = pool.running();
    // Never stop or kill the last worker that is not stopped: something must run recovery.
    if (candidates.length <= 1 && f.kind !== "sigterm") {
      if (!last) return false;
      record.skipped = "fewer than two running workers";
      faults.push(record);
      log(`fault: ${f.kind} skipped (fewer than two running workers)`);
      return true;
    }
    faults.push(record);
    const w = candidates[Math.floor(f.pick * candidates.length)] as Managed;
    record.pid = w.pid;
    record.label = w.label;
    const signal: Record<FaultKind, NodeJS.Signals | null> = {
      sigkill: "SIGKILL",
      sigterm: "SIGTERM",
      sigstop_long: "SIGSTOP",
      sigstop_short: "SIGSTOP",
      pg_restart: null,
    };
    const name = signal[f.kind] as NodeJS.Signals;
    if (f.kind === "sigkill" || f.kind === "sigterm") {
      w.cause = f.kind;
      if (f.kind === "sigterm") w.state = "terminating";
    } else {
      w.state = "stopped";
      w.contRecord = record;
      w.contTimer = setTimeout(() => pool.cont(w), (f.pause ?? 1) * 1000);
    }
    w.child.kill(name);
    if (name === "SIGSTOP" && store.runLog.kind === "sqlite") {
      const path = store.runLog.path;
      void sleep(20).then(async () => {
        record.heldLock = await holdsWriteLock(path, () => w.state === "stopped").catch(
          () => false,
        );
        if (record.heldLock) log(`  ${w.label} was stopped holding the SQLite write lock`);
      });
    }
    log(
      `fault: ${name} → ${w.label} (pid ${w.pid})${f.pause ? `, SIGCONT in ${f.pause.toFixed(1)} s` : ""}`,
    );
    return true;
  }

  // ---- final drain ----
  const producerCode = await Promise.race([producerDone, sleep(120_000).then(() => "timeout")]);
  if (producerCode !== 0) log(`${kind}: producer ended with ${String(producerCode)}`);
  const drainBy = Date.now() + 90_000;
  let counts = { queued: -1, processing: -1 };
  // Stepped jobs frozen on their effect wait for an operator: answered from the run log.
  const operator = stepsOperator(store.env, store.runLog);
  while (Date.now() < drainBy) {
    await operator.pass().catch(() => undefined);
    try {
      counts = await store.counts();
      if (counts.queued === 0 && counts.processing === 0) break;
    } catch {
      // the database may be busy; try again
    }
    await sleep(250);
  }
  const drained = Date.now();
  await operator.close();
  if (operator.done.length + operator.rerun.length > 0) {
    log(
      `${kind}: operator answered ${operator.done.length + operator.rerun.length} frozen step(s) (done ${operator.done.length}, rerun ${operator.rerun.length})`,
    );
  }
  log(
    `${kind}: queue ${counts.queued === 0 && counts.processing === 0 ? "empty" : `NOT empty (queued ${counts.queued}, processing ${counts.processing})`} ${((drained - chaosEnd) / 1000).toFixed(1)} s after the chaos phase; SIGTERM to every worker`,
  );
  // Remote jobs: wait for them, the operator step for frozen ones, wait again (workers running).
  const remoteIds = new Map<string, number>();
  for (const line of readFileSync(remoteIdsFile, "utf8").split("\n")) {
    const [n, id] = line.split(" ");
    if (n !== undefined && id) remoteIds.set(id, Number(n));
  }
  const remote = await settleRemote(
    store.env,
    remoteIds,
    () => readProviderState(providerStateFile),
    60_000,
  );
  log(
    `${kind}: ${remoteIds.size} remote jobs settled in ${(remote.operator.settleMs / 1000).toFixed(1)} s (operator resolved ${remote.operator.accepted.length + remote.operator.notSubmitted.length} frozen)`,
  );
  const flowsSettled = await settleFlows(store.env, flowsFile, 90_000);
  log(
    `${kind}: flows and batches ${flowsSettled.unsettled === 0 ? "settled" : `NOT settled (${flowsSettled.unsettled} roots or callbacks not ended)`} in ${(flowsSettled.settleMs / 1000).toFixed(1)} s`,
  );
  pool.respawn = false;
  await pool.scrapeStopped(); // a worker lingering now must be read before the final SIGTERM
  for (const w of pool.notDead()) {
    pool.cont(w);
    w.cause = "final_sigterm";
    w.child.kill("SIGTERM");
  }
  const stopBudget = (SETTINGS.shutdownTimeout + 2 + 10) * 1000;
  await Promise.race([Promise.all(pool.all.map((w) => w.exited)), sleep(stopBudget)]);
  for (const w of pool.notDead()) {
    w.cause = "final_sigkill";
    w.child.kill("SIGKILL");
  }
  await Promise.all(pool.all.map((w) => w.exited));
  clearInterval(scraper);
  if (producer.exitCode === null) producer.kill("SIGKILL");
  const stopped = Date.now();

  // ---- soniq recover, then read everything ----
  const recover = await runCli(["recover", "--json"], {
    ...store.env,
    SONIQ_HEARTBEAT_INTERVAL: String(SETTINGS.heartbeatInterval),
    SONIQ_HEARTBEAT_TIMEOUT: String(SETTINGS.heartbeatTimeout),
    SONIQ_MAX_INTERRUPTIONS: String(SETTINGS.maxInterruptions),
  });
  let finalRecover: { requeued: number; deadLettered: number } | null = null;
  const recoverEvents: RecoveryEvent[] = [];
  try {
    const parsed = JSON.parse(recover.stdout) as {
      requeued: Array<{ id: string; previousOwner: string | null; charged?: boolean }>;
      deadLettered: Array<{ id: string; previousOwner: string | null }>;
    };
    finalRecover = { requeued: parsed.requeued.length, deadLettered: parsed.deadLettered.length };
    const at = Date.now();
    for (const j of parsed.requeued)
      recoverEvents.push({
        at,
        jobId: j.id,
        previousOwner: j.previousOwner,
        kind: "requeued",
        charged: j.charged !== false,
        source: "soniq recover",
      });
    for (const j of parsed.deadLettered)
      recoverEvents.push({
        at,
        jobId: j.id,
        previousOwner: j.previousOwner,
        kind: "crash_loop",
        charged: true,
        source: "soniq recover",
      });
  } catch {
    loud(`${kind}: soniq recover failed (code ${recover.code}): ${recover.stderr.slice(0, 500)}`);
  }

  const enqueued = new Map<string, number>();
  for (const line of readFileSync(idsFile, "utf8").split("\n")) {
    const [n, id] = line.split(" ");
    if (n !== undefined && id) enqueued.set(id, Number(n));
  }
  const flaky = new Set<number>();
  const poison = new Set<number>();
  for (let n = 0; n < config.jobs; n++) {
    const spec = jobSpec(config.seed, n);
    if (spec.flaky) flaky.add(n);
    if (spec.poison) poison.add(n);
  }
  for (const e of pool.exits) {
    const w = pool.all.find((x) => x.pid === e.pid);
    e.started = w !== undefined && readFileSync(w.logFile, "utf8").includes("worker started");
  }
  const state = await store.final();
  const runs = await readRunLog(store.runLog);
  const logs = parseWorkerLogs(pool);
  const analysis = analyze({
    backend: kind,
    settings: SETTINGS,
    enqueued,
    flaky,
    poison,
    jobs: state.jobs.map((j) => ({
      ...j,
      attempts: Number(j.attempts),
      interruptions: Number(j.interruptions),
    })),
    dead: state.dead.map((d) => ({
      ...d,
      attempts: Number(d.attempts),
      interruptions: Number(d.interruptions),
    })),
    workerPids: state.workerPids,
    runs,
    faults,
    recoveries: [...logs.recoveries, ...recoverEvents],
    nacks: logs.nacks,
    exits: pool.exits,
    finalRecover,
    logCounts: logs.counts,
    strayLines: logs.stray,
    scrapedNacks: pool.scrapedNacks(),
    timings: {
      "time: chaos phase": chaosEnd - chaosStart,
      "time: queue empty after the phase": drained - chaosEnd,
      "time: final SIGTERM → all exited": stopped - drained,
      "time: total for this backend": Date.now() - t0,
    },
  });
  const remoteLogs: RemoteLogCounts = {
    handoffs: {},
    frozen: new Map(),
    reconcileNotSubmitted: new Map(),
    reconcileAccepted: 0,
  };
  for (const w of pool.all)
    if (existsSync(w.logFile))
      countRemoteLines(readFileSync(w.logFile, "utf8").split("\n"), remoteLogs);
  await provider.stop();
  await bouncer?.stop();
  const remoteAnalysis = analyzeRemote({
    seed: config.seed,
    jobs: remote.jobs,
    provider: readProviderState(providerStateFile),
    logs: remoteLogs,
    operator: remote.operator,
  });
  analysis.checks.push(...remoteAnalysis.checks);
  analysis.details.push(...remoteAnalysis.details);
  analysis.failed.push(...remoteAnalysis.failed);
  const walkers = new Map<number, number>();
  const stepped = new Set<number>();
  for (let n = 0; n < config.jobs; n++) {
    const spec = jobSpec(config.seed, n);
    if (spec.walk) walkers.set(n, spec.walk.items);
    if (spec.steps) stepped.add(n);
  }
  const limited = new Map<number, string>();
  for (let n = 0; n < config.jobs; n++) {
    const spec = jobSpec(config.seed, n);
    if (spec.flow) limited.set(n, spec.flow.key);
  }
  const limitAnalysis = analyzeFlow({
    enqueued,
    limited,
    runs,
    faults,
    recoveries: [...logs.recoveries, ...recoverEvents],
    exits: pool.exits,
  });
  analysis.checks.push(...limitAnalysis.checks);
  analysis.details.push(...limitAnalysis.details);
  analysis.failed.push(...limitAnalysis.failed);
  const resumeAnalysis = analyzeResume({
    enqueued,
    walkers,
    stepped,
    jobs: state.jobs,
    runs,
    log: await readResumeLog(store.runLog),
    operator,
  });
  analysis.checks.push(...resumeAnalysis.checks);
  analysis.details.push(...resumeAnalysis.details);
  analysis.failed.push(...resumeAnalysis.failed);
  const flowAnalysis = await analyzeFlows({
    env: store.env,
    recordsFile: flowsFile,
    logFile: flowLog,
    faults,
    exits: pool.exits,
  });
  analysis.checks.push(...flowAnalysis.checks);
  analysis.details.push(...flowAnalysis.details);
  analysis.failed.push(...flowAnalysis.failed);
  writeFileSync(
    join(dir, "faults.json"),
    `${JSON.stringify({ seed: config.seed, plan, faults, exits: pool.exits }, null, 2)}\n`,
  );
  writeFileSync(join(dir, "report.json"), `${JSON.stringify(analysis, null, 2)}\n`);
  if (analysis.failed.length === 0 && !config.keep) {
    await store.cleanup();
    rmSync(dir, { recursive: true, force: true });
  } else {
    log(
      `${kind}: keeping ${dir}${store.env.SONIQ_SCHEMA ? ` and schema ${store.env.SONIQ_SCHEMA}` : ""}`,
    );
  }
  return { analysis, dir };
}

// ---- main --------------------------------------------------------------------------------------------

log(
  `chaos ${short ? "(short)" : "(full)"}: backends ${backends.join(", ")}, ${config.jobs} jobs, ${config.workers} workers, ${config.duration} s of faults, seed ${config.seed}`,
);
const results: BackendResult[] = [];
let exitCode = 0;
try {
  for (const kind of backends) {
    if (kind === "postgres" && !(await postgresAnswers())) {
      loud(`PostgreSQL at ${config.databaseUrl} does not answer: the PostgreSQL run FAILS`);
      exitCode = 1;
      continue;
    }
    results.push(await runBackend(kind));
  }
} finally {
  await ensurePostgresRunning();
}

const analyses = results.map((r) => r.analysis);
process.stdout.write(
  `\nSoniq chaos report — seed ${config.seed}, ${config.jobs} jobs and ${config.remoteJobs} remote jobs per backend, ${config.workers} workers (concurrency ${SETTINGS.concurrency}), ${config.duration} s of faults\n` +
    `worker settings: heartbeatInterval ${SETTINGS.heartbeatInterval} s, heartbeatTimeout ${SETTINGS.heartbeatTimeout} s, pollInterval ${SETTINGS.pollInterval} s, shutdownTimeout ${SETTINGS.shutdownTimeout} s, maxInterruptions ${SETTINGS.maxInterruptions}\n\n`,
);
process.stdout.write(`${renderTable(analyses)}\n`);
for (const a of analyses) {
  if (a.details.length === 0) continue;
  process.stdout.write(`\n${a.backend === "postgres" ? "PostgreSQL" : "SQLite"}:\n`);
  for (const d of a.details.slice(0, 60)) process.stdout.write(`  - ${d}\n`);
  if (a.details.length > 60)
    process.stdout.write(`  … ${a.details.length - 60} more in report.json\n`);
}
const failed = analyses.flatMap((a) => a.failed.map((f) => `${a.backend}: ${f}`));
if (failed.length > 0 || exitCode !== 0) {
  process.stdout.write(`\nFAILED: ${failed.join("; ") || "a backend could not run"}\n`);
  exitCode = 1;
} else {
  process.stdout.write("\nPASSED: every must-be-zero check is zero.\n");
}
process.stdout.write(
  `reproduce: npm run build && node --import tsx chaos/run.ts${short ? " --short" : ""} --backend ${flags.backend} --jobs ${config.jobs} --remote-jobs ${config.remoteJobs} --workers ${config.workers} --duration ${config.duration} --seed ${config.seed}${config.pgbouncer ? " --pgbouncer" : ""}\n`,
);
process.exit(exitCode);
