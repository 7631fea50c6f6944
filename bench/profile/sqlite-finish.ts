/**
 * What a SQLite finishing write costs per job, through the backend: `--jobs` no-op jobs enqueued,
 * claimed in batches of `--batch`, completed with `jobCompleteMany` in the same batches; prints
 * µs of this process's CPU per completed job. `--drop-triggers` first drops the row triggers on
 * `soniq_finished_jobs` (an experiment: what they cost a job that nobody waits for).
 *
 *   node --import tsx bench/profile/sqlite-finish.ts [--jobs 20000] [--batch 100] [--drop-triggers]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}
const jobs = Number(flag("jobs", "20000"));
const batch = Number(flag("batch", "100"));
const dir = mkdtempSync(join(tmpdir(), "soniq-finish-"));
const path = join(dir, "q.db");
const backend = new SqliteBackend({ path });
await backend.setup();
if (process.argv.includes("--drop-triggers")) {
  const db = new Database(path);
  const names = db
    .prepare(
      "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'soniq_finished_jobs'",
    )
    .all() as { name: string }[];
  for (const { name } of names) db.exec(`DROP TRIGGER ${name}`);
  db.close();
  console.log(`dropped ${names.map((n) => n.name).join(", ")}`);
}
for (let i = 0; i < jobs; i += 1000) {
  await backend.jobEnqueue({
    jobs: Array.from({ length: Math.min(1000, jobs - i) }, () => ({
      id: newJobId(),
      name: "noop",
      queue: "default",
      args: "{}",
      priority: 0,
      maxAttempts: 3,
      runAt: null,
      delaySeconds: 0,
      dedupKey: null,
    })),
  });
}
let cpu = 0;
let done = 0;
for (;;) {
  const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: batch });
  if (claimed.length === 0) break;
  const t = process.cpuUsage();
  await backend.jobCompleteMany({
    items: claimed.map((j) => ({
      id: j.id,
      owner: { workerId: "w", claimToken: j.claimToken },
      result: null,
    })),
    resultRetentionSeconds: 3600,
  } as never);
  const d = process.cpuUsage(t);
  cpu += d.user + d.system;
  done += claimed.length;
}
console.log(
  `${done} jobs completed in batches of ${batch}: ${(cpu / done).toFixed(1)} µs CPU per completion`,
);
await backend.close();
rmSync(dir, { recursive: true, force: true });
