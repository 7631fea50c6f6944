/**
 * `npm run deploy-sim [-- --json] [-- --engine sqlite|postgres] [-- --rolling]`: on a SQLite
 * file and (when reachable) PostgreSQL,
 * - the eight deploy cases of docs/remote-jobs.md ("Verifying it") with real `soniq worker`
 *   processes and the local test provider: one line per case; fails when any case fails, a
 *   submission was duplicated or a task id orphaned;
 * - then the rolling deploy (test/deploy/rolling-deploy.ts; README, "Deploying new job code"):
 *   version-1 workers replaced one by one by version-2 workers under a steady load of both
 *   versions' jobs; prints per kind of job (name@version) how many were enqueued, ran (on old and
 *   new workers), were upgraded, dead-lettered and waited for a capable worker, and the longest
 *   wait; fails when a job was dead-lettered, ran twice or never, a new job ran on an old worker,
 *   an old job ran on a new worker without its upgrade, or a worker's drain did not exit 0.
 * `--rolling` runs only the rolling deploy. Exits 1 when anything failed. `--json` prints one
 * JSON document instead of lines.
 */

import {
  formatRollingReport,
  type RollingReport,
  runRollingDeploy,
} from "../test/deploy/rolling-deploy.js";
import { dropSchemas, postgresAvailable } from "../test/helpers/postgres.js";
import { startRemoteProvider } from "../test/helpers/remote-provider.js";
import { removeTempDirs } from "../test/helpers/temp.js";
import {
  CRASH_POINTS,
  type CrashReport,
  freshStore,
  runCrashPoint,
  runDeploySim,
} from "../test/remote/deploy-sim.js";

const argv = process.argv.slice(2);
const json = argv.includes("--json");
/** `--rolling`: only the rolling deploy, not the eight remote-job cases. */
const rollingOnly = argv.includes("--rolling");
const engineArg = argv.includes("--engine") ? argv[argv.indexOf("--engine") + 1] : undefined;
/** `--crash-runs N`: also SIGKILL a worker N times at each durable-write boundary. */
const crashRuns = argv.includes("--crash-runs")
  ? Number(argv[argv.indexOf("--crash-runs") + 1])
  : 0;
const engines: Array<"sqlite" | "postgres"> = [];
if (engineArg !== "postgres") engines.push("sqlite");
if (engineArg !== "sqlite") {
  if (await postgresAvailable()) engines.push("postgres");
  else if (engineArg === "postgres") throw new Error("PostgreSQL is not reachable");
}
const provider = await startRemoteProvider();
const started = Date.now();
try {
  const { cases, schemas } = rollingOnly
    ? { cases: [], schemas: [] as string[] }
    : await runDeploySim(provider, engines);
  const crashes: CrashReport[] = [];
  for (const engine of crashRuns > 0 ? engines : []) {
    const store = await freshStore(engine);
    if (store.schema) schemas.push(store.schema);
    for (let run = 0; run < crashRuns; run += 1) {
      for (const point of CRASH_POINTS) crashes.push(await runCrashPoint(store, provider, point));
    }
  }
  const rolling: RollingReport[] = [];
  for (const engine of engines) {
    const { report, store } = await runRollingDeploy(engine);
    if (store.schema) schemas.push(store.schema);
    rolling.push(report);
  }
  await dropSchemas(schemas);
  const totals = {
    cases: cases.length,
    passed: cases.filter((c) => c.ok).length,
    duplicate_submissions: cases.reduce((n, c) => n + c.duplicate_submissions, 0),
    orphaned_task_ids: cases.reduce((n, c) => n + c.orphaned_task_ids, 0),
    forced_exits: cases.reduce((n, c) => n + c.forced_exits, 0),
    frozen: cases.reduce((n, c) => n + c.frozen, 0),
    crash_runs: crashes.length,
    crash_runs_passed: crashes.filter((c) => c.ok).length,
    rolling_runs: rolling.length,
    rolling_runs_passed: rolling.filter((r) => r.ok).length,
    duration_ms: Date.now() - started,
  };
  if (json)
    process.stdout.write(`${JSON.stringify({ totals, cases, crashes, rolling }, null, 2)}\n`);
  else {
    for (const c of cases) {
      process.stdout.write(
        `${c.ok ? "PASS" : "FAIL"}  ${c.engine.padEnd(8)} ${c.case.padEnd(58)} final=${c.final} exit=${c.exit} frozen=${c.frozen} dup=${c.duplicate_submissions} orphans=${c.orphaned_task_ids} drain=${c.drain_duration_ms}ms redelivery=${c.redelivery_delay_ms ?? "-"}ms\n`,
      );
    }
    for (const c of crashes.filter((r) => !r.ok)) {
      process.stdout.write(
        `FAIL  ${c.engine} SIGKILL ${c.point}: final=${c.final} posts=${JSON.stringify(c.posts)}\n`,
      );
    }
    for (const r of rolling) process.stdout.write(`${formatRollingReport(r)}\n`);
    process.stdout.write(`${JSON.stringify(totals)}\n`);
  }
  process.exitCode =
    totals.passed === totals.cases &&
    totals.crash_runs_passed === totals.crash_runs &&
    totals.rolling_runs_passed === totals.rolling_runs &&
    totals.duplicate_submissions === 0 &&
    totals.orphaned_task_ids === 0
      ? 0
      : 1;
} finally {
  await provider.close();
  removeTempDirs();
}
