/**
 * SIGKILL between every pair of durable writes of a remote job, several times each, with real
 * `soniq worker` processes, on a SQLite file and PostgreSQL side by side (the short version of
 * `npm run remote-kill-stress`; test/remote/kill-stress.ts). Every run: the kill leaves a state
 * that names a durable phase at or after its boundary, no duplicate POST (a second POST only after
 * a reconcile answering notSubmitted, under the same key), no orphaned task id, the job done.
 */
import { afterAll, expect, it } from "vitest";
import { dropSchemas, postgresAvailable } from "../helpers/postgres.js";
import { type RemoteProvider, startRemoteProvider } from "../helpers/remote-provider.js";
import { removeTempDirs } from "../helpers/temp.js";
import { CRASH_POINTS } from "../remote/deploy-sim.js";
import { runKillStress, summarise } from "../remote/kill-stress.js";

const RUNS_PER_POINT = 3;
const pgUp = await postgresAvailable();
const engines: Array<"sqlite" | "postgres"> = pgUp ? ["sqlite", "postgres"] : ["sqlite"];
const schemas: string[] = [];
let provider: RemoteProvider | undefined;
afterAll(async () => {
  await provider?.close();
  removeTempDirs();
  if (pgUp) await dropSchemas(schemas);
});

it(`remote kill stress › SIGKILL ${RUNS_PER_POINT}× at each durable-write boundary, random offsets, ${engines.join(" and ")} › one explainable state each, no duplicate POST, no orphaned task id, every job done`, async () => {
  provider = await startRemoteProvider();
  const results = await Promise.all(
    engines.map((engine, i) =>
      runKillStress({
        engine,
        provider: provider as RemoteProvider,
        runs: RUNS_PER_POINT,
        maxDelayMs: 40,
        seed: 1234 + i,
      }),
    ),
  );
  for (const r of results) if (r.schema) schemas.push(r.schema);
  const runs = results.flatMap((r) => r.runs);
  expect(runs).toHaveLength(engines.length * CRASH_POINTS.length * RUNS_PER_POINT);
  for (const r of runs) expect(r.problems, `${r.engine} ${r.point} +${r.delayMs} ms`).toEqual([]);
  expect(summarise(runs)).toMatchObject({
    duplicate_posts: 0,
    orphaned_task_ids: 0,
    not_done: 0,
    passed: runs.length,
  });
}, 240_000);
