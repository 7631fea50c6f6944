/**
 * The soak: `npm run soak -- --minutes 30` (not in CI; docs/reliability.md, "The soak").
 *
 * For each backend (a fresh PostgreSQL schema, a fresh SQLite file; side by side with
 * `--backend both`, the default) it runs real worker processes on chaos/soak-jobs.ts while this
 * process enqueues a steady mix (async, sync on a thread, failing, snoozing, remote; a schedule
 * every 5 s) at `--rate` jobs per second, and replaces a worker by SIGTERM every `--deploy-every`
 * seconds (a new one starts, is ready, then the old one drains). One worker, the **steady** one,
 * is never replaced: its memory is the one judged. Every `--sample-every` seconds it records the
 * steady worker's RSS and heap (its /metrics), every table's size with its indexes, and the p99
 * wait from due to start of the runs begun since the last sample.
 *
 * At the end it stops producing, waits for the queue to empty, stops every worker by SIGTERM and
 * checks: every enqueued job completed exactly once (a doomed one dead-lettered, never completed),
 * no job processing or due-and-queued is left, every SIGTERMed worker exited 0, and — after the
 * warm-up — memory and the tables that hold live state are flat (the median of the last third of
 * the samples at most 1.2× that of the first third, plus a small absolute slack). Exit 1 when a
 * check fails. The report (markdown, and JSON in the run directory) lists the samples.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { readRunLog } from "./soak-log.js";
import {
  GROWS_BY_DESIGN,
  judgeFlat,
  type Sample,
  tableSizes,
  workerMemory,
} from "./soak-samples.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const CLI = join(REPO, "dist", "cli", "main.js");
const JOBS = join(REPO, "chaos", "soak-jobs.ts");
const PROVIDER = join(REPO, "chaos", "provider.ts");
const PG_URL = process.env.SOAK_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

const USAGE =
  "usage: npm run soak -- [--minutes N] [--backend pg|sqlite|both] [--rate JOBS_PER_S] [--workers N] [--deploy-every S] [--sample-every S] [--keep]";
const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "30" },
    backend: { type: "string", default: "both" },
    rate: { type: "string", default: "20" },
    workers: { type: "string", default: "3" },
    "deploy-every": { type: "string", default: "60" },
    "sample-every": { type: "string", default: "30" },
    keep: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  strict: true,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
function num(name: string, raw: string, min: number): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) {
    process.stderr.write(`soak: --${name} must be a number >= ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}
const minutes = num("minutes", values.minutes, 0.5);
const rate = num("rate", values.rate, 1);
const workerCount = Math.round(num("workers", values.workers, 2));
const deployEvery = num("deploy-every", values["deploy-every"], 5);
const sampleEvery = num("sample-every", values["sample-every"], 2);
const backend = values.backend;
if (!["pg", "sqlite", "both"].includes(backend)) {
  process.stderr.write(`soak: --backend must be pg, sqlite or both\n${USAGE}\n`);
  process.exit(2);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

if (backend === "both") {
  // Each backend in its own process (each has its own default instance, set by the environment).
  const self = fileURLToPath(import.meta.url);
  const args = process.argv
    .slice(2)
    .filter((a, i, all) => a !== "--backend" && all[i - 1] !== "--backend");
  const run = (b: string) =>
    new Promise<number>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", self, ...args, "--backend", b], {
        stdio: "inherit",
      });
      child.on("exit", (code) => resolve(code ?? 1));
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.on(signal, () => child.kill(signal));
      }
    });
  const codes = await Promise.all([run("pg"), run("sqlite")]);
  process.exit(Math.max(...codes));
}

// ---- one backend -------------------------------------------------------------------------------

/** Every child process this run started: killed if the run itself ends early. */
const children = new Set<ChildProcess>();
const killChildren = () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
};
process.on("exit", killChildren);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => process.exit(130));
}

const dir = mkdtempSync(join(tmpdir(), `soniq-soak-${backend}-`));
const schema = `soak_${randomBytes(5).toString("hex")}`;
const runLog = join(dir, "runs.log");
const env: NodeJS.ProcessEnv = {
  ...process.env,
  SONIQ_DATABASE_URL: backend === "pg" ? PG_URL : `sqlite:${join(dir, "soak.db")}`,
  ...(backend === "pg" ? { SONIQ_SCHEMA: schema } : {}),
  // Short retention (seconds) so the pruner's forgetting is part of the soak and the tables level
  // off within the warm-up; long enough to read a suspicious job's row and timeline.
  SONIQ_RESULT_RETENTION: "240",
  SONIQ_JOB_EVENT_RETENTION: "240",
  // Handler failures are on purpose here; the workers' logs are in the run directory.
  SONIQ_LOG_LEVEL: "error",
  SOAK_RUN_LOG: runLog,
};
const say = (line: string) => process.stdout.write(`soak ${backend}: ${line}\n`);
say(`run directory ${dir}${backend === "pg" ? `, schema ${schema}` : ""}`);

const setup = spawnSync(process.execPath, [CLI, "setup", JOBS], { env, encoding: "utf8" });
if (setup.status !== 0) {
  process.stderr.write(setup.stderr);
  process.exit(1);
}

// The remote provider (the tests' own), as a child process.
const providerChild = spawn(process.execPath, ["--import", "tsx", PROVIDER], {
  cwd: REPO,
  env: { ...env, CHAOS_PROVIDER_STATE: join(dir, "provider.json") },
  stdio: ["ignore", "pipe", "inherit"],
});
children.add(providerChild);
env.SOAK_PROVIDER_URL = await new Promise<string>((resolve, reject) => {
  let text = "";
  providerChild.stdout?.on("data", (d: Buffer) => {
    text += d.toString();
    if (text.includes("\n")) resolve((text.split("\n")[0] ?? "").trim());
  });
  providerChild.on("exit", (code) => reject(new Error(`the test provider exited ${code}`)));
});

/** A free TCP port on 127.0.0.1 (for a worker's health endpoints). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

interface Worker {
  label: string;
  child: ChildProcess;
  port: number;
  exit: Promise<number | null>;
}
let generation = 0;
async function startWorker(label: string): Promise<Worker> {
  const port = await freePort();
  generation += 1;
  const logFd = openSync(join(dir, `worker-${label}.${generation}.log`), "a");
  const child = spawn(
    process.execPath,
    [CLI, "worker", JOBS, "--health-port", String(port), "--health-host", "127.0.0.1"],
    { cwd: REPO, env, stdio: ["ignore", logFd, logFd] },
  );
  closeSync(logFd);
  children.add(child);
  const exit = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const worker = { label: `${label}.${generation}`, child, port, exit };
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ready) return worker;
    if (child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`worker ${worker.label} did not become ready (exit ${child.exitCode})`);
    }
    await sleep(200);
  }
}

const deploys: Array<{ label: string; exitCode: number | null; stopMs: number }> = [];
async function stopWorker(worker: Worker): Promise<void> {
  const started = Date.now();
  worker.child.kill("SIGTERM");
  const exitCode = await worker.exit;
  deploys.push({ label: worker.label, exitCode, stopMs: Date.now() - started });
}

process.env.SONIQ_DATABASE_URL = env.SONIQ_DATABASE_URL;
if (env.SONIQ_SCHEMA) process.env.SONIQ_SCHEMA = env.SONIQ_SCHEMA;
process.env.SONIQ_RESULT_RETENTION = env.SONIQ_RESULT_RETENTION;
const jobs = await import("./soak-jobs.js");
const soniq = jobs.soniq;

const steady = await startWorker("steady");
const rolling: Worker[] = [];
for (let i = 1; i < workerCount; i++) rolling.push(await startWorker(`w${i}`));

// ---- the producer: a steady mix ------------------------------------------------------------------

const enqueued = new Map<string, { kind: string; doomed: boolean }>();
let producing = true;
let produceErrors = 0;
async function produce(): Promise<void> {
  const tickMs = 100;
  let owed = 0;
  let n = 0;
  while (producing) {
    const tickStarted = Date.now();
    owed += (rate * tickMs) / 1000;
    while (owed >= 1) {
      owed -= 1;
      n += 1;
      const pick = n % 20;
      try {
        if (pick < 10)
          enqueued.set(await jobs.asyncJob.enqueue({ ms: 5 + (n % 4) * 15 }), {
            kind: "async",
            doomed: false,
          });
        else if (pick < 13)
          enqueued.set(await jobs.syncJob.enqueue({ rounds: 20 }), { kind: "sync", doomed: false });
        else if (pick < 15) {
          const doomed = n % 40 === 13;
          enqueued.set(await jobs.flakyJob.enqueue({ doomed }), { kind: "flaky", doomed });
        } else if (pick < 17)
          enqueued.set(await jobs.snoozeJob.enqueue({ snoozeSeconds: 1 }), {
            kind: "snooze",
            doomed: false,
          });
        else if (pick < 19)
          enqueued.set(await jobs.remoteJob.enqueue({}), { kind: "remote", doomed: false });
        else
          enqueued.set(await jobs.asyncJob.enqueue({ ms: 200 }), { kind: "async", doomed: false });
      } catch {
        produceErrors += 1;
      }
    }
    await sleep(Math.max(0, tickMs - (Date.now() - tickStarted)));
  }
}

// ---- samples ---------------------------------------------------------------------------------------

const samples: Sample[] = [];
const completedSoFar = new Map<string, number>();
const duplicatesSeen: Array<{ id: string; kind: string; detail: unknown }> = [];
let logOffset = 0;
const started = Date.now();
async function sample(): Promise<void> {
  const read = readRunLog(runLog, logOffset);
  logOffset = read.next;
  // A job completed twice is looked at at once, before retention forgets its row and timeline.
  for (const line of read.lines) {
    if (line.kind !== "completed") continue;
    const n = (completedSoFar.get(line.id) ?? 0) + 1;
    completedSoFar.set(line.id, n);
    if (n === 2) {
      const detail = await soniq.jobs.get(line.id).catch((err: unknown) => String(err));
      duplicatesSeen.push({ id: line.id, kind: enqueued.get(line.id)?.kind ?? "schedule", detail });
      say(`job ${line.id} completed twice: ${JSON.stringify(detail)}`);
    }
  }
  const waits = read.lines
    .flatMap((l) => (l.kind === "start" ? [l.waitMs] : []))
    .sort((a, b) => a - b);
  const memory = await workerMemory(steady.port, steady.child.pid as number);
  const tables = await tableSizes(
    backend === "pg"
      ? { kind: "pg", url: PG_URL, schema }
      : { kind: "sqlite", file: join(dir, "soak.db") },
  );
  samples.push({
    atSeconds: Math.round((Date.now() - started) / 1000),
    enqueued: enqueued.size,
    starts: waits.length,
    p99WaitMs:
      waits.length > 0
        ? (waits[Math.min(waits.length - 1, Math.floor(waits.length * 0.99))] ?? 0)
        : 0,
    ...memory,
    tables,
  });
  const s = samples[samples.length - 1] as Sample;
  say(
    `t=${s.atSeconds}s enqueued ${s.enqueued}, starts ${s.starts}, p99 wait ${s.p99WaitMs} ms, steady RSS ${(s.rssBytes / 2 ** 20).toFixed(1)} MiB heap ${(s.heapUsedBytes / 2 ** 20).toFixed(1)} MiB, live jobs table ${((s.tables.soniq_jobs ?? 0) / 1024).toFixed(0)} KiB`,
  );
}

const producer = produce();
const endAt = started + minutes * 60_000;
let nextSample = started + sampleEvery * 1000;
let nextDeploy = started + deployEvery * 1000;
let deploySlot = 0;
while (Date.now() < endAt) {
  await sleep(Math.max(0, Math.min(nextSample, nextDeploy, endAt) - Date.now()));
  if (Date.now() >= nextSample) {
    nextSample += sampleEvery * 1000;
    await sample();
  }
  if (Date.now() >= nextDeploy && Date.now() < endAt) {
    nextDeploy += deployEvery * 1000;
    // A rolling deploy of one worker: the new one is ready before the old one drains.
    const slot = deploySlot % rolling.length;
    deploySlot += 1;
    const old = rolling[slot] as Worker;
    rolling[slot] = await startWorker(`w${slot + 1}`);
    await stopWorker(old);
  }
}

// ---- the end: drain, stop, check ---------------------------------------------------------------

producing = false;
await producer;
await soniq.schedules.pause("soak.tick");
const settleDeadline = Date.now() + 180_000;
for (;;) {
  const [queued, scheduled, processing] = await Promise.all([
    soniq.jobs.count({ status: "queued" }),
    soniq.jobs.count({ status: "scheduled" }),
    soniq.jobs.count({ status: "processing" }),
  ]);
  // Retries and snoozes are due a second or so later: wait for them too.
  if (queued + scheduled + processing === 0 || Date.now() > settleDeadline) break;
  await sleep(500);
}
await sample();
for (const w of rolling) await stopWorker(w);
await stopWorker(steady);
const [leftQueued, leftScheduled, leftProcessing] = await Promise.all([
  soniq.jobs.count({ status: "queued" }),
  soniq.jobs.count({ status: "scheduled" }),
  soniq.jobs.count({ status: "processing" }),
]);

const all = readRunLog(runLog).lines;
const completedRuns = new Map<string, number>();
for (const line of all) {
  if (line.kind === "completed") completedRuns.set(line.id, (completedRuns.get(line.id) ?? 0) + 1);
}
let lost = 0;
let doomedCompleted = 0;
let doomedNotDead = 0;
for (const [id, job] of enqueued) {
  const runs = completedRuns.get(id) ?? 0;
  if (job.doomed) {
    if (runs > 0) doomedCompleted += 1;
    const row = await soniq.jobs.get(id);
    if (row?.status !== "dead_letter") doomedNotDead += 1;
  } else if (runs === 0) lost += 1;
}
const duplicates = [...completedRuns.values()].filter((n) => n > 1).length;
const scheduleRuns = [...completedRuns.keys()].filter((id) => !enqueued.has(id)).length;
const badExits = deploys.filter((d) => d.exitCode !== 0);

const warmupSeconds = Math.min(300, (minutes * 60) / 5);
const flat = judgeFlat(samples, warmupSeconds, backend === "pg" ? "pg" : "sqlite");
const checks = [
  { check: "enqueued jobs never completed (lost or stranded)", value: lost, ok: lost === 0 },
  { check: "jobs completed more than once", value: duplicates, ok: duplicates === 0 },
  { check: "doomed jobs completed", value: doomedCompleted, ok: doomedCompleted === 0 },
  { check: "doomed jobs not dead-lettered", value: doomedNotDead, ok: doomedNotDead === 0 },
  {
    check: "rows left queued (due), scheduled or processing",
    value: leftQueued + leftScheduled + leftProcessing,
    ok: leftQueued + leftScheduled + leftProcessing === 0,
  },
  {
    check: "SIGTERMed workers that did not exit 0",
    value: badExits.length,
    ok: badExits.length === 0,
  },
  { check: "enqueue calls that failed", value: produceErrors, ok: produceErrors === 0 },
  ...flat.map((f) => ({
    check: `${f.what} flat after warm-up (${f.detail})`,
    value: f.ratio,
    ok: f.ok,
  })),
];

const lines = [
  `## Soak, ${backend === "pg" ? "PostgreSQL" : "SQLite file"}: ${minutes} min, ${rate} jobs/s, ${workerCount} workers, a deploy every ${deployEvery} s`,
  "",
  `${enqueued.size} jobs enqueued, ${completedRuns.size - scheduleRuns} of them completed, ${scheduleRuns} schedule runs; ${deploys.length} SIGTERM stops (longest ${Math.max(0, ...deploys.map((d) => d.stopMs))} ms).`,
  "",
  "| t (s) | enqueued | starts | p99 wait (ms) | steady RSS (MiB) | steady heap (MiB) | live jobs table (KiB) | all tables (KiB) |",
  "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...samples.map(
    (s) =>
      `| ${s.atSeconds} | ${s.enqueued} | ${s.starts} | ${s.p99WaitMs} | ${(s.rssBytes / 2 ** 20).toFixed(1)} | ${(s.heapUsedBytes / 2 ** 20).toFixed(1)} | ${((s.tables.soniq_jobs ?? 0) / 1024).toFixed(0)} | ${(Object.values(s.tables).reduce((a, b) => a + b, 0) / 1024).toFixed(0)} |`,
  ),
  "",
  `Grown by design (not judged; first → last sample, KiB): ${GROWS_BY_DESIGN[backend === "pg" ? "pg" : "sqlite"].map((t) => `${t} ${((samples[0]?.tables[t] ?? 0) / 1024).toFixed(0)} → ${((samples[samples.length - 1]?.tables[t] ?? 0) / 1024).toFixed(0)}`).join(", ")}.`,
  "",
  "| check | value | |",
  "| --- | ---: | --- |",
  ...checks.map((c) => `| ${c.check} | ${c.value} | ${c.ok ? "ok" : "FAILED"} |`),
  "",
];
process.stdout.write(`${lines.join("\n")}\n`);
writeFileSync(
  join(dir, "report.json"),
  JSON.stringify({ backend, minutes, rate, samples, deploys, checks, duplicatesSeen }, null, 2),
);
say(`report ${join(dir, "report.json")}`);

await soniq.close();
providerChild.kill("SIGTERM");
const failedChecks = checks.filter((c) => !c.ok);
if (!values.keep && failedChecks.length === 0) {
  if (backend === "pg") {
    const pg = (await import("pg")).default;
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  }
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failedChecks.length === 0 ? 0 : 1);
