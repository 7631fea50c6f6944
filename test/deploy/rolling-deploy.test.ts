/**
 * The rolling deploy (test/deploy/rolling-deploy.ts; `npm run deploy-sim -- --rolling`): three real
 * `soniq worker` processes of version 1 replaced one by one by version 2 under a steady load of
 * both versions' jobs, on a SQLite file and PostgreSQL. Nothing is dead-lettered, every job runs
 * exactly once, the new version's jobs (and its new job name) run only on new workers and wait
 * for them, and version-1 jobs left after the deploy run on new workers through `upgrade`.
 */
import { afterAll, describe, expect, it } from "vitest";
import { dropSchemas, postgresAvailable } from "../helpers/postgres.js";
import { removeTempDirs } from "../helpers/temp.js";
import { formatRollingReport, runRollingDeploy } from "./rolling-deploy.js";

const pgUp = await postgresAvailable();
const schemas: string[] = [];
afterAll(async () => {
  removeTempDirs();
  if (pgUp) await dropSchemas(schemas);
});

for (const engine of ["sqlite", "postgres"] as const) {
  describe.skipIf(engine === "postgres" && !pgUp)(`rolling deploy: ${engine}`, () => {
    it("v1 workers replaced one by one by v2 under load › 0 dead-lettered, each job once, v2 jobs only on v2 workers after waiting, v1 jobs upgraded on v2 workers", async () => {
      const { report, store } = await runRollingDeploy(engine);
      if (store.schema) schemas.push(store.schema);
      const why = formatRollingReport(report);
      expect(report.deadLettered, why).toBe(0);
      expect(report.runs, why).toBe(report.enqueued);
      expect(report.ranTwice, why).toBe(0);
      expect(report.neverRan, why).toBe(0);
      expect(report.notDoneOnce, why).toBe(0);
      expect(report.versionMismatches, why).toBe(0);
      expect(report.newOnOldWorkers, why).toBe(0);
      expect(report.oldOnNewWithoutUpgrade, why).toBe(0);
      expect(report.workerExits, why).toEqual([0, 0, 0, 0, 0, 0]);
      const kind = (k: string) => report.kinds.find((r) => r.kind === k);
      expect(report.kinds.map((k) => k.kind).sort(), why).toEqual([
        "invoice.create@v1",
        "mail.send@v1",
        "mail.send@v2",
        "report.build@v1",
      ]);
      // The new version's jobs: only on new workers, some enqueued before any could run them.
      for (const k of ["mail.send@v2", "invoice.create@v1"]) {
        expect(kind(k)?.ranOnOldWorkers, `${k}\n${why}`).toBe(0);
        expect(kind(k)?.waited, `${k}\n${why}`).toBeGreaterThan(0);
        expect(kind(k)?.longestWaitMs, `${k}\n${why}`).toBeGreaterThan(0);
      }
      // Version-1 mail.send enqueued after the last old worker: upgraded on new workers.
      expect(report.enqueuedAfterOldWorkers, why).toBeGreaterThanOrEqual(10);
      expect(kind("mail.send@v1")?.ranOnNewWorkers, why).toBeGreaterThanOrEqual(5);
      expect(kind("mail.send@v1")?.upgraded, why).toBe(kind("mail.send@v1")?.ranOnNewWorkers);
      expect(kind("mail.send@v1")?.waited, why).toBe(0);
      expect(report.ok, why).toBe(true);
    }, 180_000);
  });
}
