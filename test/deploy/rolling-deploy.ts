/**
 * The rolling-deploy simulation (README, "Deploying new job code"; `npm run deploy-sim -- --rolling`
 * and test/deploy/rolling-deploy.test.ts): two code versions of one app
 * (test/fixtures/rolling/app-v1.ts, app-v2.ts) under a steady load, on a SQLite file or a
 * PostgreSQL schema. Version 2 changes `mail.send`'s arguments (version 2, with an `upgrade` from
 * version 1) and adds `invoice.create`.
 *
 * The run: N real `soniq worker` processes of version 1 (the built CLI) and an enqueuer process of
 * version 1 (test/fixtures/rolling/enqueuer.ts); the deploy starts a version-2 enqueuer (its jobs
 * wait: no worker knows them yet), then replaces the workers one by one — a version-2 worker
 * starts, both run until it has run jobs, then the old one gets SIGTERM and drains while the
 * next new one starts. The
 * version-1 enqueuer goes on until the last old worker has exited (old web processes outlive old
 * workers), so version-1 `mail.send` jobs are left for the new workers to upgrade. Then both
 * enqueuers stop, the queue drains and the new workers get SIGTERM.
 *
 * Every handler run appends a line to a run log (test/fixtures/rolling/record-run.ts); the report
 * joins it with the job rows and the dead-letter queue.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { Soniq } from "../../src/index.js";
import type { RunRecord } from "../fixtures/rolling/record-run.js";
import { REPO, type Running, startCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { waitFor } from "../helpers/wait.js";
import { freshStore, type Store } from "../remote/deploy-sim.js";
import { spawnEnqueuer } from "./enqueuer-process.js";

const APP_V1 = "test/fixtures/rolling/app-v1.ts";
const APP_V2 = "test/fixtures/rolling/app-v2.ts";

/** The simulation's sizes. */
export interface RollingOptions {
  /** Worker processes, before and after the deploy (default 3). */
  workers?: number;
  /** Milliseconds between two enqueues of one enqueuer (default 100; two enqueuers run at once). */
  enqueueEveryMs?: number;
  /** Jobs the version-1 enqueuer enqueues before the deploy starts (default 30). */
  jobsBeforeDeploy?: number;
  /** Jobs the version-2 enqueuer enqueues before the first version-2 worker starts (default 10). */
  jobsBeforeNewWorkers?: number;
  /** Runs each new worker makes before its old peer gets SIGTERM (default 5). */
  overlapRuns?: number;
  /** Jobs the version-1 enqueuer enqueues after the last old worker exited (default 10). */
  jobsAfterOldWorkers?: number;
  /** Milliseconds any one step may take before the run fails (default 60 000). */
  stepTimeoutMs?: number;
}

/** One kind of job: a name at a version. */
export interface KindReport {
  /** `name@vN`. */
  kind: string;
  enqueued: number;
  /** Distinct jobs of this kind that ran. */
  ran: number;
  ranOnOldWorkers: number;
  ranOnNewWorkers: number;
  /** Runs whose arguments the definition's `upgrade` turned. */
  upgraded: number;
  deadLettered: number;
  /** Jobs enqueued before any live worker could run them. */
  waited: number;
  /** Longest time from enqueue to start of those jobs, in ms (0 when none waited). */
  longestWaitMs: number;
}

/** The simulation's report. */
export interface RollingReport {
  engine: "sqlite" | "postgres";
  kinds: KindReport[];
  enqueued: number;
  /** Runs recorded (a job run twice counts twice). */
  runs: number;
  /** Jobs run more than once. */
  ranTwice: number;
  /** Enqueued jobs that never ran. */
  neverRan: number;
  deadLettered: number;
  /** Jobs of version 2 or named `invoice.create` run by a version-1 worker. */
  newOnOldWorkers: number;
  /** Version-1 `mail.send` jobs run by a version-2 worker without going through `upgrade`. */
  oldOnNewWithoutUpgrade: number;
  /** Version-1 jobs enqueued after the last old worker had exited. */
  enqueuedAfterOldWorkers: number;
  /** Runs whose logged job version differs from the version stored on the job's row. */
  versionMismatches: number;
  /** Jobs whose row does not read `done` with one attempt. */
  notDoneOnce: number;
  /** Exit codes of the SIGTERMed workers (all 0 when every drain finished). */
  workerExits: Array<number | string>;
  /** Milliseconds from the deploy's start to the last old worker's exit. */
  deployMs: number;
  /** Milliseconds of the whole run. */
  durationMs: number;
  ok: boolean;
}

interface Worker extends Running {
  code: 1 | 2;
  pid: number;
}

async function startWorker(
  code: 1 | 2,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<Worker> {
  const w = startCli(["worker", code === 1 ? APP_V1 : APP_V2], env);
  await waitFor(
    () => w.stderr().includes("worker started"),
    timeoutMs,
    `version-${code} worker started`,
  ).catch((err: Error) => {
    w.child.kill("SIGKILL");
    throw new Error(`${err.message}: ${w.stderr().slice(-1000)}`);
  });
  return { ...w, code, pid: w.child.pid ?? 0 };
}

async function stopWorker(w: Worker, timeoutMs: number): Promise<number | string> {
  w.child.kill("SIGTERM");
  const exit = await Promise.race([
    w.exited,
    new Promise<null>((r) => setTimeout(() => r(null), timeoutMs).unref()),
  ]);
  if (exit === null) {
    w.child.kill("SIGKILL");
    return "timeout";
  }
  return exit.code ?? exit.signal ?? "?";
}

function readRuns(dir: string): RunRecord[] {
  const runs: RunRecord[] = [];
  for (const file of readdirSync(dir).filter((f) => f.startsWith("runs-"))) {
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line) runs.push(JSON.parse(line) as RunRecord);
    }
  }
  return runs;
}

interface JobFacts {
  name: string;
  version: number;
  status: string;
  attempts: number;
  createdAt: number;
  startedAt: number | null;
}

async function allJobs(db: Soniq): Promise<Map<string, JobFacts>> {
  const jobs = new Map<string, JobFacts>();
  let cursor: string | null = null;
  do {
    const page = await db.jobs.list({}, { limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const j of page.jobs) {
      jobs.set(j.id, {
        name: j.name,
        version: j.version,
        status: j.status,
        attempts: j.attempts,
        createdAt: j.createdAt.getTime(),
        startedAt: j.startedAt?.getTime() ?? null,
      });
    }
    cursor = page.nextCursor;
  } while (cursor);
  return jobs;
}

async function deadLetters(db: Soniq): Promise<Map<string, { name: string; version: number }>> {
  const out = new Map<string, { name: string; version: number }>();
  let cursor: string | null = null;
  do {
    const page = await db.deadLetters.list({}, { limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const d of page.deadLetters) out.set(d.id, { name: d.name, version: d.version });
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

/** Runs the rolling deploy on a fresh store of `engine`; the store's schema (if any) is returned to drop. */
export async function runRollingDeploy(
  engine: "sqlite" | "postgres",
  options: RollingOptions = {},
): Promise<{ report: RollingReport; store: Store }> {
  const n = options.workers ?? 3;
  const step = options.stepTimeoutMs ?? 60_000;
  const started = Date.now();
  const store = await freshStore(engine);
  const runDir = tempDir("soniq-rolling-");
  const env = {
    ...store.env,
    ROLLING_RUN_DIR: runDir,
    ROLLING_ENQUEUE_EVERY_MS: String(options.enqueueEveryMs ?? 100),
    SONIQ_CONCURRENCY: "5",
    SONIQ_POLL_INTERVAL: "0.2",
    SONIQ_HEARTBEAT_INTERVAL: "1",
    SONIQ_SHUTDOWN_TIMEOUT: "30",
    SONIQ_LOG_LEVEL: "info",
  };
  const db = new Soniq({
    databaseUrl: store.env.SONIQ_DATABASE_URL,
    ...(store.env.SONIQ_SCHEMA ? { schema: store.env.SONIQ_SCHEMA } : {}),
    env: {},
    logger: pino({ level: "silent" }),
    rejectUnknownJobs: false,
  });
  const live: Worker[] = [];
  const enqueuers: Array<{ child: Running["child"] }> = [];
  const workerExits: Array<number | string> = [];
  try {
    // Version 1 everywhere.
    live.push(...(await Promise.all(Array.from({ length: n }, () => startWorker(1, env, step)))));
    const v1 = spawnEnqueuer(APP_V1, env, REPO);
    enqueuers.push(v1);
    await waitFor(() => v1.count() >= (options.jobsBeforeDeploy ?? 30), step, "v1 enqueues");

    // The deploy: new web code first (its jobs wait), then the workers one by one.
    const deployStarted = Date.now();
    const v2 = spawnEnqueuer(APP_V2, env, REPO);
    enqueuers.push(v2);
    await waitFor(() => v2.count() >= (options.jobsBeforeNewWorkers ?? 10), step, "v2 enqueues");
    let firstNewReady = 0;
    const draining: Array<Promise<number | string>> = [];
    for (let i = 0; i < n; i += 1) {
      const fresh = await startWorker(2, env, step);
      if (firstNewReady === 0) firstNewReady = Date.now();
      live.push(fresh);
      const runsOf = () =>
        readRuns(runDir).filter((r) => r.pid === fresh.pid && r.code === 2).length;
      await waitFor(() => runsOf() >= (options.overlapRuns ?? 5), step, "new worker runs");
      // The old worker drains while the next new one starts (a surge of one worker).
      const old = live.shift();
      if (old) draining.push(stopWorker(old, step));
    }
    workerExits.push(...(await Promise.all(draining)));
    const oldGone = Date.now();
    const v1AtOldGone = v1.count();
    await waitFor(
      () => v1.count() >= v1AtOldGone + (options.jobsAfterOldWorkers ?? 10),
      step,
      "v1 enqueues after the old workers",
    );
    await Promise.all([v1.stop(step), v2.stop(step)]);

    await waitFor(
      async () => (await db.jobs.count({ status: ["queued", "scheduled", "processing"] })) === 0,
      step,
      "the queue drained",
    );
    workerExits.push(...(await Promise.all(live.splice(0).map((w) => stopWorker(w, step)))));

    const enqueued = new Map<string, string>([...v1.enqueued(), ...v2.enqueued()]);
    const v1Late = new Set(
      v1
        .enqueued()
        .slice(v1AtOldGone)
        .map(([id]) => id),
    );
    const runs = readRuns(runDir);
    const jobs = await allJobs(db);
    const dead = await deadLetters(db);
    return {
      store,
      report: buildReport({
        engine,
        enqueued,
        v1Late,
        runs,
        jobs,
        dead,
        firstNewReady,
        workerExits,
        deployMs: oldGone - deployStarted,
        durationMs: Date.now() - started,
      }),
    };
  } finally {
    for (const e of enqueuers) e.child.kill("SIGKILL");
    for (const w of live) w.child.kill("SIGKILL");
    await db.close();
  }
}

interface Facts {
  engine: "sqlite" | "postgres";
  enqueued: Map<string, string>;
  v1Late: Set<string>;
  runs: RunRecord[];
  jobs: Map<string, JobFacts>;
  dead: Map<string, { name: string; version: number }>;
  firstNewReady: number;
  workerExits: Array<number | string>;
  deployMs: number;
  durationMs: number;
}

/** Version 2 of `mail.send` and `invoice.create` need a version-2 worker; the rest runs anywhere. */
function needsNewWorker(name: string, version: number): boolean {
  return version >= 2 || name === "invoice.create";
}

function buildReport(f: Facts): RollingReport {
  const runsById = new Map<string, RunRecord[]>();
  for (const r of f.runs) runsById.set(r.id, [...(runsById.get(r.id) ?? []), r]);
  const kinds = new Map<string, KindReport>();
  const kindOf = (name: string, version: number): KindReport => {
    const key = `${name}@v${version}`;
    let k = kinds.get(key);
    if (!k) {
      k = {
        kind: key,
        enqueued: 0,
        ran: 0,
        ranOnOldWorkers: 0,
        ranOnNewWorkers: 0,
        upgraded: 0,
        deadLettered: 0,
        waited: 0,
        longestWaitMs: 0,
      };
      kinds.set(key, k);
    }
    return k;
  };
  let newOnOldWorkers = 0;
  let oldOnNewWithoutUpgrade = 0;
  let notDoneOnce = 0;
  let versionMismatches = 0;
  for (const [id, name] of f.enqueued) {
    const row = f.jobs.get(id);
    const dead = f.dead.get(id);
    const version = row?.version ?? dead?.version ?? 0;
    const k = kindOf(name, version);
    k.enqueued += 1;
    if (dead) k.deadLettered += 1;
    if (row?.status !== "done" || row.attempts !== 1) notDoneOnce += 1;
    const ran = runsById.get(id) ?? [];
    if (ran.length > 0) k.ran += 1;
    for (const r of ran) {
      if (r.code === 1) k.ranOnOldWorkers += 1;
      else k.ranOnNewWorkers += 1;
      if (r.upgradedFrom !== null) k.upgraded += 1;
      if (r.jobVersion !== version) versionMismatches += 1;
      if (r.code === 1 && needsNewWorker(name, version)) newOnOldWorkers += 1;
      if (r.code === 2 && name === "mail.send" && version === 1 && r.upgradedFrom !== 1)
        oldOnNewWithoutUpgrade += 1;
    }
    if (row && needsNewWorker(name, version) && row.createdAt < f.firstNewReady) {
      k.waited += 1;
      if (row.startedAt !== null)
        k.longestWaitMs = Math.max(k.longestWaitMs, row.startedAt - row.createdAt);
    }
  }
  const ranTwice = [...runsById.values()].filter((r) => r.length > 1).length;
  const neverRan = [...f.enqueued.keys()].filter((id) => !runsById.has(id)).length;
  const strangers = [...runsById.keys()].filter((id) => !f.enqueued.has(id)).length;
  const enqueuedAfterOldWorkers = f.v1Late.size;
  const lateOldMail = [...f.v1Late].filter((id) => f.enqueued.get(id) === "mail.send").length;
  const report: RollingReport = {
    engine: f.engine,
    kinds: [...kinds.values()].sort((a, b) => a.kind.localeCompare(b.kind)),
    enqueued: f.enqueued.size,
    runs: f.runs.length,
    ranTwice,
    neverRan,
    deadLettered: f.dead.size,
    newOnOldWorkers,
    oldOnNewWithoutUpgrade,
    enqueuedAfterOldWorkers,
    versionMismatches,
    notDoneOnce,
    workerExits: f.workerExits,
    deployMs: f.deployMs,
    durationMs: f.durationMs,
    ok: false,
  };
  report.ok =
    report.deadLettered === 0 &&
    ranTwice === 0 &&
    neverRan === 0 &&
    strangers === 0 &&
    notDoneOnce === 0 &&
    versionMismatches === 0 &&
    newOnOldWorkers === 0 &&
    oldOnNewWithoutUpgrade === 0 &&
    lateOldMail > 0 &&
    report.kinds.some((k) => k.waited > 0) &&
    f.workerExits.every((c) => c === 0);
  return report;
}

/** The report as the lines `npm run deploy-sim -- --rolling` prints. */
export function formatRollingReport(r: RollingReport): string {
  const lines = [
    `${r.ok ? "PASS" : "FAIL"}  ${r.engine.padEnd(8)} rolling deploy: ${r.enqueued} jobs, ${r.runs} runs, ${r.deadLettered} dead-lettered, ${r.ranTwice} ran twice, ${r.neverRan} never ran, ${r.newOnOldWorkers} new jobs on old workers, ${r.oldOnNewWithoutUpgrade} old jobs on new workers without upgrade, ${r.notDoneOnce} not done in one attempt; deploy ${r.deployMs} ms, run ${r.durationMs} ms, worker exits ${r.workerExits.join(",")}`,
    `      ${"kind".padEnd(20)} ${"enqueued".padStart(8)} ${"ran".padStart(5)} ${"old wk".padStart(6)} ${"new wk".padStart(6)} ${"upgraded".padStart(8)} ${"dead".padStart(4)} ${"waited".padStart(6)} ${"longest wait".padStart(12)}`,
  ];
  for (const k of r.kinds) {
    lines.push(
      `      ${k.kind.padEnd(20)} ${String(k.enqueued).padStart(8)} ${String(k.ran).padStart(5)} ${String(k.ranOnOldWorkers).padStart(6)} ${String(k.ranOnNewWorkers).padStart(6)} ${String(k.upgraded).padStart(8)} ${String(k.deadLettered).padStart(4)} ${String(k.waited).padStart(6)} ${`${k.longestWaitMs} ms`.padStart(12)}`,
    );
  }
  lines.push(
    `      version-1 jobs enqueued after the last old worker exited: ${r.enqueuedAfterOldWorkers}`,
  );
  return lines.join("\n");
}
