// The SQLite batched NACK of claimed, never-started rows (the prefetch window's drain-start write,
// docs/shutdown.md) is ONE statement whatever the batch size: `UPDATE … FROM json_each(@items)
// … RETURNING`, each row found by primary key and fenced on its own owner. Counted here at the
// driver: one statement execution for a 500-row batch.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { SQL } from "../../src/backends/sqlite/sql.js";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { newJob } from "../contract/helpers.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

/** better-sqlite3's Statement prototype (shared by every connection of this process). */
const statementProto = Object.getPrototypeOf(new Database(":memory:").prepare("SELECT 1")) as {
  run: (...args: unknown[]) => unknown;
  get: (...args: unknown[]) => unknown;
  all: (...args: unknown[]) => unknown;
  iterate: (...args: unknown[]) => unknown;
};

/** Counts statement executions (run, get, all, iterate) from now on, with their SQL text. */
function countExecutions(): string[] {
  const seen: string[] = [];
  for (const method of ["run", "get", "all", "iterate"] as const) {
    const original = statementProto[method];
    vi.spyOn(statementProto, method).mockImplementation(function (
      this: { source: string },
      ...args: unknown[]
    ) {
      seen.push(this.source);
      return original.apply(this, args);
    });
  }
  return seen;
}

describe("sqlite: the batched NACK", () => {
  const opened: SqliteBackend[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(async () => {
    for (const backend of opened) await backend.close();
    removeTempDirs();
  });

  async function open(): Promise<{ backend: SqliteBackend; path: string }> {
    const path = join(tempDir("soniq-sqlite-nack-"), "n.db");
    const backend = new SqliteBackend({ path });
    opened.push(backend);
    await backend.setup();
    return { backend, path };
  }

  it("jobNackMany › 500 claimed rows over two queues, one of them fenced out › one statement; the owned rows queued, attempts kept", async () => {
    const { backend } = await open();
    await backend.jobEnqueue({
      jobs: Array.from({ length: 500 }, (_, i) => newJob({ queue: i % 2 === 0 ? "a" : "b" })),
    });
    const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 500 });
    expect(claimed).toHaveLength(500);
    const items = claimed.map((job, i) => ({
      id: job.id,
      // The last row's token is not the claim's: the fence refuses it.
      owner: {
        workerId: job.workerId,
        claimToken: i === 499 ? "00000000-0000-4000-8000-000000000000" : job.claimToken,
      },
    }));
    const executions = countExecutions();
    const changed = await backend.jobNackMany({ items });
    vi.restoreAllMocks();
    expect(executions).toEqual([SQL.nackMany]);
    expect(changed.slice(0, 499).every((c) => c === true)).toBe(true);
    expect(changed[499]).toBe(false);
    const stats = await backend.jobStats();
    expect(stats).toMatchObject({ queued: 499, processing: 1 });
    const row = await backend.jobGet({ id: claimed[0]?.id ?? "" });
    expect(row).toMatchObject({
      status: "queued",
      workerId: null,
      claimToken: null,
      attempts: 0,
      interruptions: 0,
      lastError: null,
    });
  });

  it("jobNackMany › its plan › each row found by primary key, no scan of soniq_jobs", async () => {
    const { path } = await open();
    const db = new Database(path, { readonly: true });
    try {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${SQL.nackMany}`).all({ items: "[]" }) as Array<{
        detail: string;
      }>;
      const text = plan.map((p) => p.detail).join("\n");
      expect(text).toMatch(/SEARCH soniq_jobs USING INDEX sqlite_autoindex_soniq_jobs_1 \(id=\?\)/);
      expect(text).not.toMatch(/SCAN soniq_jobs/);
    } finally {
      db.close();
    }
  });
});
