/**
 * `npm run chaos:schedules`: several minutes of schedule churn (chaos/schedule-churn.ts) — five
 * workers on PostgreSQL and three on a SQLite file, an `every: 1` schedule, random SIGKILL,
 * SIGTERM and restarts — then the exactly-once check. Never restarts PostgreSQL. Exit 1 when a
 * violation is found.
 *
 * Flags: `--minutes N` (default 4), `--seed N`, `--postgres-workers N` (5), `--sqlite-workers N` (3).
 */
import { parseArgs } from "node:util";
import { scheduleChurn } from "./schedule-churn.js";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "4" },
    seed: { type: "string" },
    "postgres-workers": { type: "string", default: "5" },
    "sqlite-workers": { type: "string", default: "3" },
  },
});

const reports = await scheduleChurn({
  postgresWorkers: Number(values["postgres-workers"]),
  sqliteWorkers: Number(values["sqlite-workers"]),
  durationMs: Number(values.minutes) * 60_000,
  faultEveryMs: 3_000,
  postgresUrl:
    process.env.TEST_DATABASE_URL ??
    process.env.SONIQ_DATABASE_URL ??
    "postgres://postgres@127.0.0.1:5432/test",
  ...(values.seed !== undefined ? { seed: Number(values.seed) } : {}),
  log: (line) => process.stdout.write(`${new Date().toISOString()} ${line}\n`),
});

let failed = false;
for (const report of reports) {
  process.stdout.write(
    `\n${JSON.stringify({ ...report, violations: report.violations.slice(0, 20) }, null, 2)}\n`,
  );
  if (report.violations.length > 0) failed = true;
}
process.stdout.write(
  failed
    ? "\nFAILED: exactly-once violated\n"
    : "\nOK: one history row per occurrence, one job per enqueued/late occurrence, no dedup key twice\n",
);
process.exit(failed ? 1 : 0);
