/**
 * The eight deploy cases (docs/remote-jobs.md, "Verifying it") with real `soniq worker` processes
 * and the local test provider, on a SQLite file and PostgreSQL (test/remote/deploy-sim.ts; the
 * same run as `npm run deploy-sim`).
 * SIGKILL between durable writes, many times each: test/e2e/remote-kill-stress.test.ts. Every job ends done, with zero duplicate submissions and zero
 * orphaned task ids.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { dropSchemas, postgresAvailable } from "../helpers/postgres.js";
import { type RemoteProvider, startRemoteProvider } from "../helpers/remote-provider.js";
import { removeTempDirs } from "../helpers/temp.js";
import { CASE_NAMES, runDeploySim } from "../remote/deploy-sim.js";

const pgUp = await postgresAvailable();
let provider: RemoteProvider;
const schemas: string[] = [];
beforeAll(async () => {
  provider = await startRemoteProvider();
});
afterAll(async () => {
  await provider.close();
  removeTempDirs();
  if (pgUp) await dropSchemas(schemas);
});

// The two engines run at once (their own store, workers and job ids; one provider, whose counts
// are per job id): most of a case is waiting (a worker's start, a drain, a successor's poll), so
// the file takes about the longer engine's time instead of the sum.
describe.concurrent("deploy simulation", () => {
  for (const engine of ["sqlite", "postgres"] as const) {
    it.skipIf(engine === "postgres" && !pgUp)(
      `${engine} › eight deploy cases › real workers signalled at each moment › one explainable state each, no duplicate POST, no orphaned task id`,
      async ({ expect }) => {
        const { cases, schemas: made } = await runDeploySim(provider, [engine]);
        schemas.push(...made);
        expect(cases.map((c) => c.case)).toEqual(CASE_NAMES);
        for (const c of cases)
          expect(c, c.case).toMatchObject({
            ok: true,
            final: "done",
            duplicate_submissions: 0,
            orphaned_task_ids: 0,
          });
        // Eight cases one after another, each starting and signalling real worker processes:
        // about 35 s on a quiet machine, over 120 s seen at load average 17; the bound is for a
        // hang.
      },
      300_000,
    );
  }
});
