/**
 * What the admin commands (`jobs`, `dlq`, `queues`, `workers`) share: filter flags and their
 * reading into the admin API's queries, the instance flags (`--module`, `--database-url`,
 * `--json`), the confirmation a destructive bulk action asks for, and plain-text tables.
 */
import { createInterface } from "node:readline/promises";
import type { Command } from "commander";
import type { BulkResult } from "../admin/bulk.js";
import type { DeadLetterQuery, JobQuery, PageOptions } from "../admin/filters.js";
import { FROZEN_UNTIL_MS, type JobListStatus } from "../backends/contract/index.js";
import { WAITING_RUN_AT } from "../backends/shared/flow-graph.js";
import { SoniqError } from "../errors.js";
import { type ConnectionFlags, number, withDatabaseUrl, withJson, withModule } from "./runner.js";

/** Flags every admin command has. */
export interface AdminFlags extends ConnectionFlags {
  json?: boolean;
}

/** Adds `--module`, `--database-url` and `--json` to `command`. */
export function withInstanceFlags(command: Command): Command {
  return withJson(withDatabaseUrl(withModule(command)));
}

/** The job filter flags. */
export interface JobFilterFlags {
  status?: string;
  queue?: string;
  name?: string;
  id?: string;
  dedupKey?: string;
  error?: string;
  args?: string;
  createdAfter?: string;
  createdBefore?: string;
  finishedAfter?: string;
  finishedBefore?: string;
}

/** Adds the job filter flags to `command`. */
export function withJobFilters(command: Command): Command {
  return command
    .option(
      "--status <list>",
      "queued (due now), scheduled (queued, due later), processing, done, cancelled (comma-separated)",
    )
    .option("--queue <list>", "queues (comma-separated)")
    .option("--name <list>", "job names (comma-separated)")
    .option("--id <list>", "job ids (comma-separated)")
    .option("--dedup-key <key>", "the dedup key")
    .option("--error <text>", "last_error contains this text")
    .option("--args <path=value>", "the arguments at a dotted path equal a value, e.g. user.id=42")
    .option("--created-after <instant>", "ISO 8601 with a zone, e.g. 2026-12-01T09:00:00Z")
    .option("--created-before <instant>", "ISO 8601 with a zone")
    .option("--finished-after <instant>", "ISO 8601 with a zone")
    .option("--finished-before <instant>", "ISO 8601 with a zone");
}

/** The dead-letter filter flags. */
export interface DeadLetterFilterFlags {
  reason?: string;
  queue?: string;
  name?: string;
  id?: string;
  deadAfter?: string;
  deadBefore?: string;
}

/** Adds the dead-letter filter flags to `command`. */
export function withDeadLetterFilters(command: Command): Command {
  return command
    .option("--reason <list>", "max_attempts_exceeded, crash_loop, unknown_job, invalid_args, …")
    .option("--queue <list>", "queues (comma-separated)")
    .option("--name <list>", "job names (comma-separated)")
    .option("--id <list>", "ids (comma-separated)")
    .option("--dead-after <instant>", "ISO 8601 with a zone")
    .option("--dead-before <instant>", "ISO 8601 with a zone");
}

/** Adds `--limit` and `--cursor` to a list command. */
export function withPaging(command: Command): Command {
  return command
    .option("--limit <n>", "rows per page, 1–1000 (default 50)", number("limit"))
    .option("--cursor <cursor>", "the next page: the cursor the previous page printed");
}

/** The page options a {@link withPaging} command's flags ask for (only those given). */
export function pageFrom(flags: { limit?: number; cursor?: string }): PageOptions {
  return {
    ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    ...(flags.cursor === undefined ? {} : { cursor: flags.cursor }),
  };
}

const list = (text: string | undefined) =>
  text === undefined
    ? undefined
    : text
        .split(",")
        .map((t) => t.trim())
        .filter((t) => t.length > 0);

/** Sets `key` on `target` when `value` is given (no `undefined` fields: the filters reject unknown ones). */
function put<T extends object, K extends keyof T>(
  target: T,
  key: K,
  value: T[K] | undefined,
): void {
  if (value !== undefined) target[key] = value;
}

/** @throws SoniqError `INVALID_INPUT` for a malformed `--args`. */
export function jobQueryFrom(flags: JobFilterFlags): JobQuery {
  const query: JobQuery = {};
  put(query, "status", list(flags.status) as JobListStatus[] | undefined);
  put(query, "queue", list(flags.queue));
  put(query, "name", list(flags.name));
  put(query, "id", list(flags.id));
  put(query, "dedupKey", flags.dedupKey);
  put(query, "error", flags.error);
  if (flags.args !== undefined) {
    const at = flags.args.indexOf("=");
    if (at <= 0)
      throw new SoniqError("INVALID_INPUT", "--args must be path=value, e.g. user.id=42");
    query.args = { path: flags.args.slice(0, at), equals: flags.args.slice(at + 1) };
  }
  put(query, "createdAfter", flags.createdAfter);
  put(query, "createdBefore", flags.createdBefore);
  put(query, "finishedAfter", flags.finishedAfter);
  put(query, "finishedBefore", flags.finishedBefore);
  return query;
}

/** The dead-letter query the flags describe. */
export function deadLetterQueryFrom(flags: DeadLetterFilterFlags): DeadLetterQuery {
  const query: DeadLetterQuery = {};
  put(query, "reason", list(flags.reason));
  put(query, "queue", list(flags.queue));
  put(query, "name", list(flags.name));
  put(query, "id", list(flags.id));
  put(query, "deadAfter", flags.deadAfter);
  put(query, "deadBefore", flags.deadBefore);
  return query;
}

/** Flags of a destructive bulk command. */
export interface BulkFlags {
  /** Act on everything the filter flags match (no filter flags: everything). */
  all?: boolean;
  yes?: boolean;
  dryRun?: boolean;
  expectedCount?: number;
}

/** Adds `--all`, `--yes`, `--dry-run` and `--expected-count` to `command`. */
export function withBulkFlags(command: Command): Command {
  return command
    .option("--all", "act on everything the filter flags match (all rows without filters)")
    .option("--yes", "do not ask for confirmation")
    .option("--dry-run", "only count what would be changed")
    .option(
      "--expected-count <n>",
      "refuse (COUNT_MISMATCH) unless exactly this many match",
      number("expected-count"),
    );
}

/**
 * Refuses `--dry-run` and `--expected-count` on an action given by ids: they guard a bulk action
 * (`--all`), and ids are acted on one by one — silently ignoring them would, say, cancel the jobs
 * a `--dry-run` was meant only to count.
 * @throws SoniqError `INVALID_INPUT` when either flag is set.
 */
export function assertNoBulkGuardsWithIds(flags: BulkFlags): void {
  const given = [
    ...(flags.dryRun ? ["--dry-run"] : []),
    ...(flags.expectedCount !== undefined ? ["--expected-count"] : []),
  ];
  if (given.length > 0) {
    throw new SoniqError(
      "INVALID_INPUT",
      `${given.join(" and ")} go${given.length === 1 ? "es" : ""} with --all (a bulk action), not with ids: nothing was changed`,
    );
  }
}

/**
 * Asks `question` on the terminal; true for "y"/"yes".
 * @throws SoniqError `INVALID_INPUT` when standard input is not a terminal (pass `--yes`).
 */
export async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    throw new SoniqError(
      "INVALID_INPUT",
      `${question} — standard input is not a terminal: pass --yes to confirm, or --dry-run to count`,
    );
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

/**
 * Runs a bulk action the CLI way: counts first (`dryRun`), asks for confirmation unless `--yes`
 * (or `--dry-run`), then runs it guarded by the count it showed (or `--expected-count`).
 * @param run - the admin API's bulk call with the given options.
 * @returns What it did; `done: 0` and `dryRun: true` when only counted or declined.
 */
export async function bulkWithConfirmation(
  flags: BulkFlags,
  describe: (matched: number) => string,
  run: (options: { expectedCount?: number; dryRun?: boolean }) => Promise<BulkResult>,
): Promise<BulkResult> {
  const expected = flags.expectedCount;
  const counted = await run({
    dryRun: true,
    ...(expected === undefined ? {} : { expectedCount: expected }),
  });
  if (flags.dryRun || counted.matched === 0) return counted;
  if (!flags.yes && !(await confirm(describe(counted.matched)))) {
    return { ...counted, dryRun: true };
  }
  return run({ expectedCount: counted.matched });
}

/** Plain-text columns: each row's cells padded to the widest of their column. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  "),
    )
    .join("\n");
}

/** An instant for text output (ISO 8601, seconds). */
export function when(date: Date | null): string {
  return date === null ? "-" : `${date.toISOString().slice(0, 19)}Z`;
}

/** A span of milliseconds (≥ 0) in its largest unit: `45s`, `12m`, `3h`, `5d`. */
export function span(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  // The unit is chosen by the rounded value: 59 min 59 s reads `1h`, not `60m`.
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.round(s / 3600);
  if (h < 24) return `${h}h`;
  return `${Math.round(s / 86_400)}d`;
}

/**
 * A waiting job's due time as text, relative to `nowMs` (milliseconds since the epoch): a
 * `scheduled` job `in 3h (2027-01-01T00:00:00Z)`, a due `queued` one `now` or `5m ago (…)`; any
 * other status `-` (its due time is past and no longer says anything). The two far-future
 * instants no claim reaches are named instead: a workflow job waiting for its dependencies
 * (docs/workflows.md, "What waiting means") `waiting for its dependencies`, a frozen job
 * (docs/checkpoints.md, "Frozen jobs") `never: frozen (soniq jobs resolve-step)`.
 */
export function dueText(
  job: { status: string; scheduledAt: Date },
  nowMs: number = Date.now(),
): string {
  if (job.status !== "scheduled" && job.status !== "queued") return "-";
  const dueMs = job.scheduledAt.getTime();
  if (job.status === "scheduled" && dueMs === WAITING_RUN_AT.getTime())
    return "waiting for its dependencies";
  if (job.status === "scheduled" && dueMs === FROZEN_UNTIL_MS)
    return "never: frozen (soniq jobs resolve-step)";
  const delta = dueMs - nowMs;
  if (job.status === "scheduled")
    return `in ${span(Math.max(delta, 1000))} (${when(job.scheduledAt)})`;
  return -delta < 1000 ? "now" : `${span(-delta)} ago (${when(job.scheduledAt)})`;
}
