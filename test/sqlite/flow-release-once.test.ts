// Workflows on SQLite, the fan-in's count-down (migration 018; docs/performance.md, "The `fanin`
// workload"): an edge that ends well only counts its dependant down (soniq_flow_count_down on
// soniq_job_deps); the release and the onFailure rule run from soniq_flow_nodes, when `pending`
// reaches 0 — not five statements per edge that find `pending` above 0. The effects stay: after
// ten of twenty members the callbacks wait with 10 pending; after the last, onComplete is due and
// onFailure (every member done) is cancelled with its reason, counted once.
import { join } from "node:path";
import Database from "better-sqlite3";
import { pino } from "pino";
import { afterAll, expect, it } from "vitest";
import { SqliteBackend } from "../../src/backends/sqlite/sqlite-backend.js";
import { Soniq } from "../../src/index.js";
import { removeTempDirs, tempDir } from "../helpers/temp.js";

afterAll(() => removeTempDirs());

it("sqlite: batch › twenty members completed ten at a time › count-down per edge, release and onFailure rule once at 0", async () => {
  const path = join(tempDir("soniq-sqlite-release-once-"), "q.db");
  const backend = new SqliteBackend({ path });
  await backend.setup();
  const soniq = new Soniq({ backend, logger: pino({ level: "silent" }), env: {} });
  const db = new Database(path, { readonly: true });
  try {
    const triggers = db
      .prepare(
        `SELECT name, tbl_name FROM sqlite_master
         WHERE type = 'trigger' AND name IN ('soniq_flow_release', 'soniq_flow_count_down')
         ORDER BY name`,
      )
      .all();
    expect(triggers).toEqual([
      { name: "soniq_flow_count_down", tbl_name: "soniq_job_deps" },
      { name: "soniq_flow_release", tbl_name: "soniq_flow_nodes" },
    ]);

    const child = soniq.job<{ i: number }, void>({ name: "once.child", handler: () => {} });
    const root = soniq.job<object, void>({ name: "once.root", handler: () => {} });
    const failed = soniq.job<object, void>({ name: "once.failed", handler: () => {} });
    await soniq.batch({
      jobs: Array.from({ length: 20 }, (_, i) => ({ job: child, args: { i } })),
      onComplete: { job: root, args: {} },
      onFailure: { job: failed, args: {} },
    });
    const completeTen = async () => {
      const claimed = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
      expect(claimed.map((j) => j.name)).toEqual(Array(10).fill("once.child"));
      const changed = await backend.jobCompleteMany({
        items: claimed.map((j) => ({
          id: j.id,
          owner: { workerId: "w", claimToken: j.claimToken },
          result: null,
        })),
        resultRetentionSeconds: 3600,
      });
      expect(changed).toEqual(Array(10).fill(true));
    };
    const callbacks = () =>
      db
        .prepare(
          `SELECT n.role, n.pending, j.scheduled_at = 253402300799999 AS waiting
           FROM soniq_flow_nodes AS n LEFT JOIN soniq_jobs AS j ON j.id = n.job_id
           WHERE n.role IN ('on_complete', 'on_failure') ORDER BY n.role`,
        )
        .all();

    await completeTen();
    expect(callbacks()).toEqual([
      { role: "on_complete", pending: 10, waiting: 1 },
      { role: "on_failure", pending: 10, waiting: 1 },
    ]);

    await completeTen();
    expect(callbacks()).toEqual([
      { role: "on_complete", pending: 0, waiting: 0 },
      { role: "on_failure", pending: 0, waiting: null },
    ]);
    expect(
      db
        .prepare(
          "SELECT name, status, last_error FROM soniq_finished_jobs WHERE name <> 'once.child'",
        )
        .all(),
    ).toEqual([
      {
        name: "once.failed",
        status: "cancelled",
        last_error: "every member of the batch ended done",
      },
    ]);
    expect(
      db.prepare("SELECT sum(n) AS n FROM soniq_job_counts WHERE kind = 'cancelled'").get(),
    ).toEqual({ n: 1 });
    const released = await backend.jobClaim({ workerId: "w", queues: null, limit: 10 });
    expect(released.map((j) => j.name)).toEqual(["once.root"]);
  } finally {
    db.close();
    await soniq.close();
  }
});
