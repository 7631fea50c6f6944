/**
 * Reproduction of a known issue the chaos harness found (docs/reliability.md, "Known issues"):
 * when the database is unavailable to every worker for longer than `heartbeatTimeout` — here a
 * process holding the SQLite write lock, as a worker SIGSTOPped inside a transaction does — no
 * worker can heartbeat, and the first recovery pass afterwards requeues the claims of workers that
 * were alive all along. Their handlers finish, their completions are fenced out, and every job
 * they held runs a second time.
 *
 *     npm run build && node --import tsx chaos/repro-stall.ts [hold-ms]
 *
 * Two workers (heartbeatInterval 0.5 s, heartbeatTimeout 3 s) run 8 jobs of 9 s each; this
 * process then holds the write lock for `hold-ms` (default 4500). Exit 1 when a live worker's
 * job was recovered (the issue reproduced), 0 otherwise. The race between the first heartbeat
 * and the first recovery pass after the lock is released decides it: it reproduces most times.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { Soniq } from "soniq";
import { createRunLog, readRunLog } from "./runlog.js";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const hold = Number(process.argv[2] ?? 4500);
const dir = mkdtempSync(join(tmpdir(), "soniq-stall-"));
const path = join(dir, "soniq.db");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const soniq = new Soniq({
  databaseUrl: `sqlite:${path}`,
  env: {},
  logLevel: "silent",
  rejectUnknownJobs: false,
});
await soniq.setup();
await createRunLog({ kind: "sqlite", path });
const env: NodeJS.ProcessEnv = {};
for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SONIQ_")) env[k] = v;
Object.assign(env, {
  SONIQ_DATABASE_URL: `sqlite:${path}`,
  SONIQ_HEARTBEAT_INTERVAL: "0.5",
  SONIQ_HEARTBEAT_TIMEOUT: "3",
  SONIQ_POLL_INTERVAL: "0.2",
  SONIQ_LOG_LEVEL: "info",
});
const workers: ChildProcess[] = [0, 1].map((i) =>
  spawn(process.execPath, [join(REPO, "dist/cli/main.js"), "worker", "chaos/jobs.ts"], {
    cwd: REPO,
    env,
    stdio: ["ignore", openSync(join(dir, `w${i}.log`), "a"), openSync(join(dir, `w${i}.log`), "a")],
  }),
);
const logs = () => [0, 1].map((i) => readFileSync(join(dir, `w${i}.log`), "utf8"));
while (!logs().every((l) => l.includes("worker started"))) await sleep(100);
await soniq.enqueueMany(
  Array.from({ length: 8 }, (_, n) => ({
    name: "chaos.work",
    args: { n, ms: 9000, flaky: false },
  })),
);
await sleep(1500);

const db = new Database(path, { timeout: 5000 });
const began = Date.now();
db.exec("BEGIN IMMEDIATE");
while (Date.now() - began < hold) {
  // hold the write lock, as a process stopped inside a transaction does
}
db.exec("COMMIT");
db.close();
process.stdout.write(`held the SQLite write lock for ${Date.now() - began} ms\n`);

await sleep(12_000);
for (const w of workers) w.kill("SIGTERM");
await Promise.all(workers.map((w) => new Promise((resolve) => w.on("exit", resolve))));
await soniq.close();

const recovered = logs()
  .join("")
  .split("\n")
  .filter((l) => l.includes("recovered a job whose worker is not live"))
  .map((l) => JSON.parse(l) as { time: string; job_id: string; previous_owner: string });
const runs = await readRunLog({ kind: "sqlite", path });
const completed = new Map<string, number>();
for (const r of runs)
  if (r.outcome === "completed") completed.set(r.jobId, (completed.get(r.jobId) ?? 0) + 1);
const twice = [...completed.values()].filter((c) => c > 1).length;
for (const r of recovered)
  process.stdout.write(`${r.time} recovered job ${r.job_id} from ${r.previous_owner} (alive)\n`);
process.stdout.write(
  `${recovered.length} claims of live workers recovered; ${twice} of 8 jobs completed twice\n`,
);
rmSync(dir, { recursive: true, force: true });
process.exit(recovered.length > 0 ? 1 : 0);
