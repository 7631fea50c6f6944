// The upgrade to the stored key column (SQLite migration 020): a file made and filled by the
// previous version (migrations before 020; keyed jobs queued and processing, their key in `meta`
// only) keeps its limits after `setup()`: the column is filled from `meta`, a key at its limit
// gets nothing more, and a keyed job inserted afterwards without the column (as a process of the
// previous version writes it) still counts against its key.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJobId } from "../../src/jobs/job-id.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** A file at the previous version: every migration before 020, recorded as setup does. */
function previousVersion(): { path: string; db: Database.Database } {
  const path = join(tempDir("soniq-sqlite-ckey-"), "old.db");
  const db = new Database(path);
  db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
  for (const m of loadMigrations("sqlite").filter((m) => m.version < 20)) {
    db.exec(m.sql);
    db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
      m.version,
      m.name,
      Date.now(),
    );
  }
  return { path, db };
}

/** Inserts a job as the previous version wrote it: the key in `meta` only. */
function insertOld(
  db: Database.Database,
  job: { id: string; key: string | null; limit: number; processing: boolean; at: number },
): void {
  db.prepare(
    `INSERT INTO soniq_jobs (id, name, queue, args, status, max_attempts, scheduled_at,
       created_at, updated_at, started_at, worker_id, claim_token, meta)
     VALUES (@id, 'old.keyed', 'q', '{}', @status, 5, @at, @at, @at, @started, @worker, @token,
       @meta)`,
  ).run({
    id: job.id,
    status: job.processing ? "processing" : "queued",
    at: job.at,
    started: job.processing ? job.at : null,
    worker: job.processing ? "w-old" : null,
    token: job.processing ? `t-${job.id}` : null,
    meta:
      job.key === null ? null : JSON.stringify({ concurrency: { key: job.key, limit: job.limit } }),
  });
}

describe("sqlite: upgrade to the stored key column", () => {
  afterAll(() => removeTempDirs());

  it("upgrade › keyed rows written by the previous version › keep their limits; a later insert without the column is keyed too", async () => {
    const { path, db } = previousVersion();
    const at = Date.now() - 60_000;
    const running = [newJobId(), newJobId()];
    const queuedA = [newJobId(), newJobId()];
    const queuedB = [newJobId(), newJobId()];
    const plain = newJobId();
    for (const id of running) insertOld(db, { id, key: "a", limit: 2, processing: true, at });
    for (const id of queuedA) insertOld(db, { id, key: "a", limit: 2, processing: false, at });
    for (const id of queuedB) insertOld(db, { id, key: "b", limit: 1, processing: false, at });
    insertOld(db, { id: plain, key: null, limit: 0, processing: false, at });
    db.close();

    const b = new SqliteBackend({ path });
    try {
      await b.setup();
      const raw = new Database(path);
      const keys = raw
        .prepare("SELECT id, concurrency_key AS k FROM soniq_jobs ORDER BY id")
        .all() as Array<{ id: string; k: string | null }>;
      expect(Object.fromEntries(keys.map((r) => [r.id, r.k]))).toEqual({
        ...Object.fromEntries(running.map((id) => [id, "a"])),
        ...Object.fromEntries(queuedA.map((id) => [id, "a"])),
        ...Object.fromEntries(queuedB.map((id) => [id, "b"])),
        [plain]: null,
      });

      // Key a has its 2 running: nothing of it; key b one of its two; the plain job.
      const first = await b.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(first.map((c) => c.id).sort()).toEqual([plain, queuedB[0]!].sort());

      // A process of the previous version enqueues a keyed job of b (no column written): b is
      // at its limit, so it is not claimed, and it is counted as b's once running.
      const late = newJobId();
      insertOld(raw, { id: late, key: "b", limit: 1, processing: false, at });
      expect(
        raw.prepare("SELECT concurrency_key AS k FROM soniq_jobs WHERE id = ?").get(late),
      ).toEqual({ k: "b" });
      raw.close();
      expect(await b.jobClaim({ workerId: "w", queues: null, limit: 10 })).toEqual([]);
    } finally {
      await b.close();
    }
  });
});
