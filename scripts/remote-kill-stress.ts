/**
 * `npm run remote-kill-stress [-- --runs N] [-- --engine pg|sqlite|both] [-- --json]`: SIGKILLs a
 * real `soniq worker` N times (default 25) at each boundary between durable writes of a remote job
 * (claim → submitting → POST → accepted → poll → done), at seeded random offsets after the
 * boundary (`--max-delay-ms`, default 40), on a SQLite file and PostgreSQL (the engines run side
 * by side), and checks each run (test/remote/kill-stress.ts). Exits 1 when any run fails: a
 * duplicate POST (other than after a reconcile answering notSubmitted, same key), an orphaned task
 * id, an unexplainable state, or a job not done.
 */
import { parseArgs } from "node:util";
import { dropSchemas, postgresAvailable } from "../test/helpers/postgres.js";
import { startRemoteProvider } from "../test/helpers/remote-provider.js";
import { removeTempDirs } from "../test/helpers/temp.js";
import { type KillRun, runKillStress, summarise } from "../test/remote/kill-stress.js";

const USAGE = `usage: npm run remote-kill-stress -- [--runs N] [--engine pg|sqlite|both] [--max-delay-ms MS] [--seed N] [--json]`;
const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "25" },
    engine: { type: "string", default: "both" },
    "max-delay-ms": { type: "string", default: "40" },
    seed: { type: "string" },
    json: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  strict: true,
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const int = (name: string, raw: string, min: number) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    process.stderr.write(`remote-kill-stress: --${name} must be an integer >= ${min}\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
};
const runs = int("runs", values.runs, 1);
const maxDelayMs = int("max-delay-ms", values["max-delay-ms"], 0);
const seed = int("seed", values.seed ?? String(Math.floor(Math.random() * 2 ** 31)), 0);
const wanted = values.engine === "pg" ? "postgres" : values.engine;
if (!["postgres", "sqlite", "both"].includes(wanted)) {
  process.stderr.write(`remote-kill-stress: --engine must be pg, sqlite or both\n${USAGE}\n`);
  process.exit(2);
}
const engines: Array<"sqlite" | "postgres"> = [];
if (wanted !== "postgres") engines.push("sqlite");
if (wanted !== "sqlite") {
  if (await postgresAvailable()) engines.push("postgres");
  else {
    process.stderr.write("remote-kill-stress: PostgreSQL is not reachable\n");
    if (wanted === "postgres") process.exit(2);
  }
}

const provider = await startRemoteProvider();
const started = Date.now();
const schemas: string[] = [];
const all: KillRun[] = [];
try {
  const results = await Promise.all(
    engines.map((engine, i) =>
      runKillStress({
        engine,
        provider,
        runs,
        maxDelayMs,
        seed: seed + i,
        onRun: (r) => {
          if (!values.json || !r.ok)
            process.stderr.write(
              `${r.ok ? "ok  " : "FAIL"} ${r.engine.padEnd(8)} ${r.point.padEnd(11)} +${String(r.delayMs).padStart(3)} ms  after kill: ${r.afterKill.padEnd(10)} final: ${r.final}  ${r.killMs}/${r.ms} ms  posts: ${JSON.stringify(Object.values(r.posts))}${r.ok ? "" : `  ${r.problems.join("; ")}`}\n`,
            );
        },
      }),
    ),
  );
  for (const r of results) {
    all.push(...r.runs);
    if (r.schema) schemas.push(r.schema);
  }
} finally {
  await dropSchemas(schemas).catch(() => undefined);
  await provider.close();
  removeTempDirs();
}
const totals = {
  seed,
  runs_per_point: runs,
  max_delay_ms: maxDelayMs,
  engines,
  ...summarise(all),
  duration_ms: Date.now() - started,
};
if (values.json)
  process.stdout.write(
    `${JSON.stringify({ totals, failures: all.filter((r) => !r.ok) }, null, 2)}\n`,
  );
else process.stdout.write(`${JSON.stringify(totals, null, 2)}\n`);
process.exitCode = totals.passed === totals.runs ? 0 : 1;
