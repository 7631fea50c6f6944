import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { loadMigrations } from "../../src/backends/shared/migrations.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJob } from "../contract/helpers.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

const script = fileURLToPath(new URL("./setup-process.ts", import.meta.url));

function runSetup(path: string, startAt: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, path, String(startAt)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`setup process exited ${code}: ${err}`));
      else resolve(out.trim());
    });
  });
}

describe("sqlite: setup from several processes at once", () => {
  afterAll(() => removeTempDirs());

  it("two processes running setup() on one new file both succeed; each migration is recorded once", async () => {
    const path = join(tempDir("soniq-sqlite-setup-"), "fresh.db");
    // Both processes start their setup at the same instant, well after tsx has loaded.
    const startAt = Date.now() + 1500;
    const outputs = await Promise.all([runSetup(path, startAt), runSetup(path, startAt)]);
    expect(outputs).toEqual(["ok", "ok"]);

    const db = new Database(path, { readonly: true });
    try {
      const recorded = db
        .prepare(
          "SELECT version, name, count(*) OVER (PARTITION BY version) AS n FROM soniq_migrations ORDER BY version",
        )
        .all() as Array<{ version: number; name: string; n: number }>;
      const expected = loadMigrations("sqlite");
      expect(expected.length).toBeGreaterThan(0);
      expect(recorded.map((r) => r.name)).toEqual(expected.map((m) => m.name));
      expect(recorded.every((r) => r.n === 1)).toBe(true);
    } finally {
      db.close();
    }

    const backend = new SqliteBackend({ path });
    try {
      await backend.setup();
      const job = newJob();
      await backend.jobEnqueue({ jobs: [job] });
      const [claimed] = await backend.jobClaim({ workerId: "w", queues: null, limit: 1 });
      expect(claimed?.id).toBe(job.id);
    } finally {
      await backend.close();
    }
  }, 60_000);
});
