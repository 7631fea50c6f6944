/**
 * `soniq schedules …` (list, show, preview, pause, resume, run, remove, sync), each a thin shell
 * over `soniq.schedules` (scheduler/admin.ts) — the same rows on every backend — on the shared
 * runner: `--json` prints one JSON document for scripts; errors exit 2 with the error's code.
 */
import { type Command, InvalidArgumentError } from "commander";
import { scheduleDetailJson, scheduleJson } from "../../admin/json/index.js";
import type { ScheduleRow } from "../../backends/contract/index.js";
import { Soniq } from "../../soniq.js";
import {
  type ConnectionFlags,
  print,
  runCommand,
  withDatabaseUrl,
  withInstance,
  withJson,
  withModule,
} from "../runner.js";

interface Flags extends ConnectionFlags {
  json?: boolean;
}

function integer(name: string) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) {
      throw new InvalidArgumentError(`${name} must be an integer >= 0`);
    }
    return n;
  };
}

function seconds(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) {
    throw new InvalidArgumentError("--every must be a number of seconds");
  }
  return n;
}

function expression(row: ScheduleRow): string {
  return row.cron !== null ? `cron "${row.cron}" ${row.timezone}` : `every ${row.everySeconds}s`;
}

/** Adds `schedules list|show|preview|pause|resume|run|remove|sync` to `program`. */
export function register(program: Command): void {
  const schedules = program
    .command("schedules")
    .description(
      "Recurring schedules: list, show, preview, pause, resume, run, remove, sync (docs/schedules.md).",
    );
  const connection = (command: Command) => withDatabaseUrl(withJson(withModule(command)));

  /** Runs `work` on the instance and prints its result (runner: close, exit 2 on an error). */
  const run =
    <A extends unknown[]>(
      work: (soniq: Soniq, flags: Flags, ...args: A) => Promise<{ json: unknown; text: string }>,
    ) =>
    (...all: unknown[]) => {
      // commander passes the positional arguments, then the options, then the command.
      const flags = all[all.length - 2] as Flags;
      const args = all.slice(0, -2) as A;
      return runCommand(() =>
        withInstance(flags, async (soniq) => {
          const out = await work(soniq, flags, ...args);
          print(flags.json, out.json, () => out.text);
        }),
      );
    };

  connection(
    schedules.command("list").description("Every schedule with its next occurrence."),
  ).action(
    run(async (soniq) => {
      const rows = await soniq.schedules.list();
      const text = rows
        .map(
          (r) =>
            `${r.id}  ${expression(r)}  job=${r.jobName}  next=${r.nextRunAt?.toISOString() ?? "-"}${r.paused ? "  PAUSED" : ""}`,
        )
        .join("\n");
      return { json: rows.map((r) => scheduleJson(r)), text: text || "no schedules" };
    }),
  );

  connection(
    schedules
      .command("show")
      .description("One schedule: its next instants and its history (every outcome, misses too).")
      .argument("<id>", "schedule id")
      .option("--runs <n>", "history rows to show (default 20)", integer("--runs"))
      .option("--next <n>", "next instants to show (default 5)", integer("--next")),
  ).action(
    run(async (soniq, flags: Flags & { runs?: number; next?: number }, id: string) => {
      const details = await soniq.schedules.show(id, {
        ...(flags.runs !== undefined ? { runs: flags.runs } : {}),
        ...(flags.next !== undefined ? { next: flags.next } : {}),
      });
      // Before any worker's scheduler took an occurrence, the cursor is where sync left it
      // (possibly in the past): say so instead of listing past instants as "next".
      const neverRun = details.schedule.lastRunAt === null;
      const now = Date.now();
      const next = neverRun ? details.upcoming.filter((d) => d.getTime() >= now) : details.upcoming;
      const lines = [
        `${details.schedule.id}  ${expression(details.schedule)}  job=${details.schedule.jobName}${details.schedule.paused ? "  PAUSED" : ""}`,
        neverRun
          ? "next: no worker has run this schedule yet (a worker's scheduler starts it)"
          : "next:",
        ...next.map((d) => `  ${d.toISOString()}`),
        "history (newest first):",
        ...details.runs.map(
          (r) =>
            `  ${r.occurrence.toISOString()}  ${r.outcome}${r.manual ? " (manual)" : ""}  ${r.jobId ?? ""}`,
        ),
      ];
      return {
        json: scheduleDetailJson(details),
        text: lines.join("\n"),
      };
    }),
  );

  schedules
    .command("preview")
    .description(
      "The next instants of an expression, from this machine's clock (nothing is stored).",
    )
    .option("--cron <expression>", "5 or 6 fields, or @hourly, @daily, …")
    .option("--every <seconds>", "interval in seconds (>= 1)", seconds)
    .option("--tz <zone>", "IANA time zone of --cron (default UTC)")
    .option("--count <n>", "how many instants (default 5)", integer("--count"))
    .option("--json", "print JSON for scripts")
    .action(
      async (flags: {
        cron?: string;
        every?: number;
        tz?: string;
        count?: number;
        json?: boolean;
      }) =>
        runCommand(async () => {
          // Preview needs no database: a bare in-memory instance computes the instants.
          const soniq = new Soniq({ databaseUrl: "memory:", env: {}, logLevel: "warn" });
          const instants = await soniq.schedules.preview({
            ...(flags.cron !== undefined ? { cron: flags.cron } : {}),
            ...(flags.every !== undefined ? { every: flags.every } : {}),
            ...(flags.tz !== undefined ? { timezone: flags.tz } : {}),
            ...(flags.count !== undefined ? { count: flags.count } : {}),
            from: new Date(),
          });
          const iso = instants.map((d) => d.toISOString());
          print(flags.json, iso, () => iso.join("\n"));
        }),
    );

  for (const [name, description] of [
    ["pause", "Pause: occurrences are recorded paused until resumed."],
    ["resume", "Resume without backfilling the paused period."],
    ["run", "Enqueue one job now (manual; the schedule's cursor is unchanged)."],
    ["remove", "Delete the schedule and its history (a declared one returns at the next sync)."],
  ] as const) {
    connection(
      schedules.command(name).description(description).argument("<id>", "schedule id"),
    ).action(
      run(async (soniq, _flags, id: string) => {
        if (name === "run") {
          const jobId = await soniq.schedules.runNow(id);
          return { json: { id, jobId }, text: jobId };
        }
        if (name === "pause") await soniq.schedules.pause(id);
        else if (name === "resume") await soniq.schedules.resume(id);
        else await soniq.schedules.remove(id);
        const past = { pause: "paused", resume: "resumed", remove: "removed" }[name];
        return { json: { id, [past]: true }, text: `${id} ${past}` };
      }),
    );
  }

  withDatabaseUrl(schedules.command("sync"))
    .description(
      "Reconcile the schedules your module declares into the database (workers also do this at start); --prune deletes undeclared ones.",
    )
    .requiredOption("--module <module>", "your module exporting the Soniq instance")
    .option("--prune", "delete schedules no definition declares")
    .option("--json", "print JSON for scripts")
    .action(
      run(async (soniq, flags: Flags & { prune?: boolean }) => {
        const report = await soniq.schedules.sync({ prune: flags.prune === true });
        const text = Object.entries(report)
          .map(([k, ids]) => `${k.padEnd(10)} ${(ids as string[]).join(", ") || "-"}`)
          .join("\n");
        return { json: report, text };
      }),
    );
}
