// The upgrade to dead letters with metadata (SQLite migration 021): a dead letter written by the
// previous version (no `meta` column) reads `meta` null after `setup()` and replays as before,
// without metadata or key column (an unkeyed job, claimed by the ordinary claim); one written after
// the upgrade by a process of the previous version (which does not name the column) too.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** A file at the previous version: every migration before 021, recorded as setup does. */
function previousVersion(): { path: string; db: Database.Database } {
  const path = join(tempDir("soniq-sqlite-dlqmeta-"), "old.db");
  const db = new Database(path);
  db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  for (const m of loadMigrations("sqlite").filter((m) => m.version < 21)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      m.version,
      m.name,
      Date.now(),
    );
  }
  return { path, db };
}

/** Inserts a dead letter as the previous version wrote it: no `meta` column named. */
function insertOld(db: Database.Database, id: string): void {
  const at = Date.now() - 60_000;
  db.prepare(
    `INSERT INTO soniq_dead_letter_jobs (id, name, queue, args, priority, attempts, max_attempts,
       interruptions, scheduled_at, created_at, updated_at, last_error, reason, dead_at, version)
     VALUES (?, 'old.job', 'q', '{}', 0, 3, 3, 0, ?, ?, ?, 'boom', 'max_attempts_exceeded', ?, 1)`,
  ).run(id, at, at, at, at);
}

describe("sqlite: upgrade to dead letters with metadata", () => {
  afterAll(() => removeTempDirs());

  it("upgrade › dead letters written by the previous version › meta null; replayed as before, unkeyed", async () => {
    const { path, db } = previousVersion();
    const old = newJobId();
    const late = newJobId();
    insertOld(db, old);
    db.close();

    const b = new SqliteBackend({ path });
    try {
      await b.setup();
      const raw = new Database(path);
      insertOld(raw, late);
      for (const id of [old, late]) {
        expect(await b.deadLetterGet({ id })).toMatchObject({ id, meta: null, lastError: "boom" });
        expect(await b.deadLetterReplay({ id })).toBe(true);
        expect(await b.jobGet({ id })).toMatchObject({
          status: "queued",
          attempts: 0,
          meta: null,
          lastError: "boom",
        });
      }
      expect(
        raw.prepare("SELECT count(*) AS n FROM soniq_jobs WHERE concurrency_key IS NOT NULL").get(),
      ).toEqual({ n: 0 });
      raw.close();
      const claimed = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(claimed.map((c) => c.id).sort()).toEqual([old, late].sort());
    } finally {
      await b.close();
    }
  });
});
