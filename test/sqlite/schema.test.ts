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
      "soniq_dedup_keys",
      "soniq_finished_jobs",
      "soniq_flow_counts",
      "soniq_flow_ends",
      "soniq_flow_grouping",
      "soniq_flow_nodes",
      "soniq_job_controls",
      "soniq_job_counts",
      "soniq_job_deps",
      "soniq_job_events",
      "soniq_jobs",
      "soniq_leases",
      "soniq_migrations",
      "soniq_queues",
      "soniq_rate_pauses",
      "soniq_rate_starts",
      "soniq_remote_early_answers",
      "soniq_remote_submissions",
      "soniq_schedule_runs",
      "soniq_schedules",
      "soniq_worker_exits",
      "soniq_workers",
    ]);
  });

  it("enforces the live status CHECK, one holder per dedup key and the interruptions default", () => {
    expect(() => insert("bad-status", "dead", null)).toThrow(/CHECK constraint/);
    // Finished jobs live in soniq_finished_jobs (migration 008).
    expect(() => insert("done-here", "done", null)).toThrow(/CHECK constraint/);
    const key = db.prepare("INSERT INTO soniq_dedup_keys (dedup_key, job_id) VALUES (?, ?)");
    key.run("key", "k1");
    expect(() => key.run("key", "k2")).toThrow(/UNIQUE constraint/);
    insert("n1", "queued", null);
    insert("n2", "queued", null);
    const row = db.prepare("SELECT interruptions, attempts FROM soniq_jobs WHERE id = 'n1'").get();
    expect(row).toEqual({ interruptions: 0, attempts: 0 });
  });

  it("refuses a worker registration without a schema version of at least 8", () => {
    const register = db.prepare(
      `INSERT INTO soniq_workers (id, hostname, pid, concurrency, status, started_at,
         last_heartbeat_at, schema_version) VALUES (?, 'h', 1, 1, 'running', 0, 0, ?)`,
    );
    expect(() => register.run("w-old", null)).toThrow(/schema version 8/);
    expect(() => register.run("w-7", 7)).toThrow(/upgrade the worker/);
    register.run("w-8", 8);
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
