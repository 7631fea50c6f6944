// SQLite migration 022 (issue 29; docs/workflows.md, "Batches"; PostgreSQL's 035 does the same):
// before it, `batch.add` wrote the edges from a batch's onSuccess callback to the added members
// with the policy `ignore`, so onSuccess ran though an added member failed. The upgrade gives the
// open edges of that kind `cancel` and leaves every other edge as it was.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

describe("sqlite: migration 022, onSuccess edges of added batch members", () => {
  it("upgrade from migration 021 › the open onSuccess edges to members become cancel; ended edges, edges to the batch and other callbacks' edges unchanged", async () => {
    const path = join(tempDir("soniq-sqlite-022-"), "q.db");
    const db = new Database(path);
    db.exec(`CREATE TABLE soniq_migrations (version INTEGER NOT NULL PRIMARY KEY,
      name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
    for (const m of loadMigrations("sqlite").filter((m) => m.version < 22)) {
      db.exec(m.sql);
      db.prepare("INSERT INTO soniq_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        Date.now(),
      );
    }
    const [batch, added, ended, success, complete] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    const node = db.prepare(
      "INSERT INTO soniq_flow_nodes (job_id, flow_id, pending, role, created_at) VALUES (?, ?, ?, ?, 0)",
    );
    node.run(batch, batch, 1, "batch");
    node.run(added, batch, 0, "member");
    node.run(ended, batch, 0, "member");
    node.run(success, batch, 3, "on_success");
    node.run(complete, batch, 3, "on_complete");
    const edge = db.prepare(
      "INSERT INTO soniq_job_deps (job_id, dep_id, on_failure, dep_state) VALUES (?, ?, 'ignore', ?)",
    );
    edge.run(success, added, null);
    edge.run(success, ended, "done");
    edge.run(success, batch, null);
    edge.run(complete, added, null);
    edge.run(complete, batch, null);
    db.close();
    const backend = new SqliteBackend({ path });
    try {
      await backend.setup();
    } finally {
      await backend.close();
    }
    const check = new Database(path, { readonly: true });
    const policy = (jobId: string, depId: string) =>
      (
        check
          .prepare("SELECT on_failure FROM soniq_job_deps WHERE job_id = ? AND dep_id = ?")
          .get(jobId, depId) as { on_failure: string } | undefined
      )?.on_failure;
    expect(policy(success, added)).toBe("cancel");
    expect(policy(success, ended)).toBe("ignore");
    expect(policy(success, batch)).toBe("ignore");
    expect(policy(complete, added)).toBe("ignore");
    expect(policy(complete, batch)).toBe("ignore");
    check.close();
  });
});
