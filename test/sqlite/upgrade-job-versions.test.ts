// The upgrade to job versions (SQLite migration 009): a file made and filled by the previous
// version (migrations 001–008; a live job, a finished job, a dead letter and a schedule, written
// without a version as that version wrote them) reads version 1 everywhere after `setup()`, and a
// version-1 claim takes the old job.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** A file at the previous version: every migration before 009, recorded as setup does. */
function previousVersion(): { path: string; db: Database.Database } {
  const path = join(tempDir("soniq-sqlite-versions-"), "old.db");
  const db = new Database(path);
  db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  for (const m of loadMigrations("sqlite").filter((m) => m.version < 9)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      m.version,
      m.name,
      Date.now(),
    );
  }
  return { path, db };
}

describe("sqlite: upgrade to job versions", () => {
  afterAll(() => removeTempDirs());

  it("upgrade › rows written by the previous version › read version 1; a version-1 claim takes the old job", async () => {
    const { path, db } = previousVersion();
    const now = Date.now();
    const ids = { queued: newJobId(), finished: newJobId(), dead: newJobId() };
    db.prepare(
      `INSERT INTO soniq_jobs (id, name, queue, args, max_attempts, scheduled_at, created_at,
         updated_at)
       VALUES (?, 'old.job', 'q', '{"a":1}', 5, ?, ?, ?)`,
    ).run(ids.queued, now - 60_000, now, now);
    db.prepare(
      `INSERT INTO soniq_finished_jobs (id, name, queue, args, status, priority, attempts,
         max_attempts, interruptions, scheduled_at, created_at, updated_at, finished_at,
         result_expires_at, start_known, uncharged_recoveries)
       VALUES (?, 'old.job', 'q', '{}', 'done', 0, 1, 5, 0, ?, ?, ?, ?, ?, 1, 0)`,
    ).run(ids.finished, now, now, now, now, now + 86_400_000);
    db.prepare(
      `INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts,
         max_attempts, interruptions, scheduled_at, created_at, updated_at, reason, dead_at)
       VALUES (?, 'old.job', 'q', '{}', 0, 0, 5, 0, ?, ?, ?, 'invalid_args', ?)`,
    ).run(ids.dead, now, now, now, now);
    db.prepare(
      `INSERT INTO soniq_schedules (id, job_name, queue, priority, max_attempts, args,
         every_seconds, timezone, missed_policy, missed_grace, missed_within, missed_max, overlap,
         history_limit, created_at, updated_at)
       VALUES ('old.schedule', 'old.job', 'q', 0, 5, '{}', 60, 'UTC', 'skip', 60, 3600, 10,
         'allow', 10, ?, ?)`,
    ).run(now, now);
    db.close();

    const b = new SqliteBackend({ path });
    try {
      await b.setup();
      expect((await b.jobGet({ id: ids.queued }))?.version).toBe(1);
      expect(await b.jobGet({ id: ids.finished })).toMatchObject({ status: "done", version: 1 });
      expect((await b.deadLetterGet({ id: ids.dead }))?.version).toBe(1);
      const raw = new Database(path, { readonly: true });
      expect(raw.prepare("SELECT job_version FROM soniq_schedules").all()).toEqual([
        { job_version: 1 },
      ]);
      raw.close();
      const claimed = await b.jobClaim({
        workerId: "w",
        queues: null,
        names: ["old.job"],
        versions: [1],
        limit: 10,
      });
      expect(claimed.map((c) => [c.id, c.version])).toEqual([[ids.queued, 1]]);
    } finally {
      await b.close();
    }
  });
});
