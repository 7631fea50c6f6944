/**
 * The fold of the job counters keeps the per-minute history: with a day of counter rows seeded by
 * SQL the way the product writes them (per-process writers in recent minutes on PostgreSQL, rows
 * older than 25 h), a prune — which folds per-process rows older than two minutes into writer 0 and
 * minutes older than 25 h into one total — leaves every point of the 24 h window unchanged, and the
 * kept counts (stats) unchanged too. On a SQLite file and PostgreSQL (memory is the SQLite engine).
 * Outside the contract runner because it writes counter rows by SQL, which no contract method does.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Soniq } from "../../src/index.js";
import {
  DAY_OF_HISTORY,
  expectedTotals,
  type SeedStore,
  seedCounts,
} from "../helpers/history-seed.js";
import {
  dropSchemas,
  freshSchema,
  postgresAvailable,
  TEST_DATABASE_URL,
} from "../helpers/postgres.js";

const pgAvailable = await postgresAvailable();

for (const kind of ["sqlite", "postgres"] as const) {
  describe.skipIf(kind === "postgres" && !pgAvailable)(`counter fold › ${kind}`, () => {
    const schema = freshSchema("soniq_fold");
    const path = join(mkdtempSync(join(tmpdir(), "soniq-fold-")), "db.sqlite");
    const soniq =
      kind === "sqlite"
        ? new Soniq({ databaseUrl: `sqlite:${path}`, logLevel: "silent" })
        : new Soniq({ databaseUrl: TEST_DATABASE_URL, schema, logLevel: "silent" });
    const store: SeedStore =
      kind === "sqlite" ? { kind, path } : { kind, databaseUrl: TEST_DATABASE_URL, schema };

    afterAll(async () => {
      await soniq.close();
      if (kind === "postgres") await dropSchemas([schema]);
    });

    it("jobPruneFinished › seeded day with per-process and old rows › the 24 h points and the kept counts are unchanged", async () => {
      await soniq.setup();
      await seedCounts(store, DAY_OF_HISTORY);
      const before = await soniq.queues.history();
      const statsBefore = await soniq.stats();
      const want = expectedTotals(DAY_OF_HISTORY);
      const sum = (key: "done" | "failed" | "dead" | "cancelled") =>
        before.points.reduce((n, p) => n + p[key], 0);
      expect({
        done: sum("done"),
        failed: sum("failed"),
        dead: sum("dead"),
        cancelled: sum("cancelled"),
      }).toEqual({
        done: want.done,
        failed: want.failed,
        dead: want.dead,
        cancelled: want.cancelled,
      });
      // Minute 10 ago: two writers summed into one point, with its mean wait.
      const tenAgo = before.points.find((p) => p.done === 12);
      expect(tenAgo?.dead).toBe(2);
      expect(tenAgo?.waitAvgSeconds).toBeCloseTo(2, 6);
      // Oldest first: 300 min ago (4 cancelled), then 95 min ago (6 failed).
      const pdf = (await soniq.queues.history({ queue: "pdf" })).points;
      expect(pdf.map((p) => [p.cancelled, p.failed])).toEqual([
        [4, 0],
        [0, 6],
      ]);

      await (await soniq.backend()).jobPruneFinished({});
      const after = await soniq.queues.history();
      expect(after.points).toEqual(before.points);
      expect(await soniq.stats()).toEqual(statsBefore);
    });
  });
}
