import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

describe("sqlite: schema", () => {
  let db: Database.Database;
  beforeAll(async () => {
    const path = join(tempDir("soniq-sqlite-schema-"), "schema.db");
    const backend = new SqliteBackend({ path });
    await backend.setup();
    await backend.close();
    db = new Database(path);
  });
  afterAll(() => {
    db.close();
    removeTempDirs();
  });

  const insert = (id: string, status: string, dedupKey: string | null) =>
    db
      .prepare(
        `INSERT INTO soniq_jobs (id, name, queue, args, status, priority, max_attempts,
           scheduled_at, created_at, updated_at, dedup_key)
         VALUES (?, 'test.job', 'default', '{}', ?, 0, 3, 0, 0, 0, ?)`,
      )
      .run(id, status, dedupKey);

  it("has its tables", () => {
    const tables = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'soniq_%' ORDER BY name",
      )
      .all() as Array<{ name: string }>;
    expect(tables.map((t) => t.name)).toEqual([
      "soniq_dead_letter_jobs",
      "soniq_job_controls",
      "soniq_job_events",
      "soniq_jobs",
      "soniq_leases",
      "soniq_migrations",
      "soniq_queues",
      "soniq_schedule_runs",
      "soniq_schedules",
      "soniq_workers",
    ]);
  });

  it("enforces the status CHECK, unique dedup keys and the interruptions default", () => {
    expect(() => insert("bad-status", "dead", null)).toThrow(/CHECK constraint/);
    insert("k1", "done", "key");
    expect(() => insert("k2", "queued", "key")).toThrow(/UNIQUE constraint/);
    insert("n1", "queued", null);
    insert("n2", "queued", null);
    const row = db.prepare("SELECT interruptions, attempts FROM soniq_jobs WHERE id = 'n1'").get();
    expect(row).toEqual({ interruptions: 0, attempts: 0 });
  });

  it("claims through the partial claim index", () => {
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT id FROM soniq_jobs
         WHERE status = 'queued' AND scheduled_at <= ?
         ORDER BY priority, scheduled_at, created_at, id LIMIT 5`,
      )
      .all(Date.now()) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join("\n")).toMatch(
      /USING (COVERING )?INDEX soniq_jobs_claim/,
    );
    expect(plan.map((p) => p.detail).join("\n")).not.toMatch(/TEMP B-TREE/);
  });
});
