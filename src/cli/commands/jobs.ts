/**
 * `soniq jobs list|show|cancel|retry|delete|resolve-step|clear-checkpoint`: find, inspect and act on jobs through the admin API
 * (`soniq.jobs`). Actions take ids, or `--all` with the filter flags (a bulk action: counted,
 * confirmed unless `--yes`, `--dry-run` to count only, guarded by the count it showed).
 */
import type { Command } from "commander";
import type { BulkResult } from "../../admin/bulk.js";
import type { JobBulkRequest, StepAnswer } from "../../admin/jobs-admin.js";
import { jobDetailJson, jobValuesJson } from "../../admin/json/index.js";
import type { JobDetail, JobListView } from "../../admin/views.js";
import { SoniqError } from "../../errors.js";
import type { Soniq } from "../../soniq.js";
import {
  type AdminFlags,
  assertNoBulkGuardsWithIds,
  type BulkFlags,
  bulkWithConfirmation,
  dueText,
  type JobFilterFlags,
  jobQueryFrom,
  pageFrom,
  table,
  when,
  withBulkFlags,
  withInstanceFlags,
  withJobFilters,
  withPaging,
} from "../admin-flags.js";
import { print, runCommand, withInstance } from "../runner.js";
import { waitingJobsPage } from "../waiting-jobs-list.js";

type ListFlags = AdminFlags &
  JobFilterFlags & { limit?: number; cursor?: string; waitingForWorker?: boolean };
type ActionFlags = AdminFlags & JobFilterFlags & BulkFlags;

/**
 * A job's progress as text. Only a processing job's progress is live; any other keeps the last
 * progress its run reported, labelled as such so a finished job never looks as if it still ran.
 */
function progressText(job: JobListView, long = false): string {
  if (!job.progress) return "";
  const pct = `${Math.round(job.progress.fraction * 100)}%`;
  const text = job.progress.message ? `${pct} ${job.progress.message}` : pct;
  if (job.status === "processing") return text;
  return long
    ? `${text} (last progress before it became ${job.status}; not live)`
    : `last: ${text}`;
}

function listText(jobs: JobListView[], nextCursor: string | null): string {
  if (jobs.length === 0) return "no jobs match";
  const rows = [
    ["ID", "NAME", "QUEUE", "STATUS", "DUE", "ATTEMPTS", "CREATED", "PROGRESS", "LAST ERROR"],
  ];
  for (const j of jobs) {
    rows.push([
      j.id,
      j.name,
      j.queue,
      j.cancelRequestedAt && j.status === "processing" ? "processing (cancel requested)" : j.status,
      dueText(j),
      `${j.attempts}/${j.maxAttempts}`,
      when(j.createdAt),
      progressText(j),
      (j.lastError ?? "").split("\n")[0]?.slice(0, 60) ?? "",
    ]);
  }
  const more = nextCursor ? `\nmore: --cursor ${nextCursor}` : "";
  return `${table(rows)}${more}`;
}

function showText(job: JobDetail): string {
  const lines = [
    `id          ${job.id}`,
    `name        ${job.name}${job.version === 1 ? "" : `  version ${job.version}`}`,
    `queue       ${job.queue}`,
    `status      ${job.status}${"reason" in job ? ` (${job.reason})` : ""}`,
    ...(job.status === "scheduled" || job.status === "queued"
      ? [`due         ${dueText(job)}`]
      : []),
    `attempts    ${job.attempts}/${job.maxAttempts}  interruptions ${job.interruptions}`,
    `args        ${JSON.stringify(job.args)}`,
  ];
  if ("result" in job && job.result !== null)
    lines.push(`result      ${JSON.stringify(job.result)}`);
  if (job.lastError) lines.push(`last error  ${job.lastError.split("\n")[0]}`);
  if ("progress" in job && job.progress) lines.push(`progress    ${progressText(job, true)}`);
  if (job.workerId) lines.push(`worker      ${job.workerId}`);
  if ("checkpoint" in job && job.checkpoint) {
    const cp = job.checkpoint;
    const json = JSON.stringify(cp.value);
    const text = json.length > 200 ? `${json.slice(0, 200)}…` : json;
    const last = cp.at ? `, last ${when(cp.at)}` : "";
    lines.push(`checkpoint  ${cp.bytes} bytes (${cp.count} written${last})  ${text}`);
  }
  if ("steps" in job && job.steps.length > 0) {
    lines.push(`steps       ${job.steps.map((st) => `${st.name} ${st.state}`).join(", ")}`);
  }
  lines.push("timeline");
  for (const e of job.timeline) {
    const attempt = e.attempt === null ? "" : ` attempt ${e.attempt}`;
    const detail = e.detail ? ` — ${e.detail.split("\n")[0]}` : "";
    lines.push(`  ${when(e.at)}  ${e.kind}${attempt}${detail}`);
  }
  if (job.status === "dead_letter") lines.push(`replay it: soniq dlq replay ${job.id}`);
  return lines.join("\n");
}

/** Runs an action on ids (one by one) or, with `--all`, on the filter (a bulk action). */
async function act(
  soniq: Soniq,
  action: JobBulkRequest["action"],
  ids: string[],
  flags: ActionFlags,
  one: (id: string) => Promise<string>,
): Promise<void> {
  if (ids.length > 0 && flags.all) {
    throw new SoniqError("INVALID_INPUT", "give ids or --all with filter flags, not both");
  }
  if (ids.length === 0 && !flags.all) {
    throw new SoniqError(
      "INVALID_INPUT",
      `name the jobs to ${action}: ids, or --all with filter flags (e.g. --all --status queued)`,
    );
  }
  if (ids.length > 0) {
    assertNoBulkGuardsWithIds(flags);
    const results: Array<{ id: string; state: string }> = [];
    for (const id of ids) results.push({ id, state: await one(id) });
    print(flags.json, ids.length === 1 ? results[0] : results, () =>
      results.map((r) => `${r.id}  ${r.state}`).join("\n"),
    );
    return;
  }
  const filter = jobQueryFrom(flags);
  const result: BulkResult = await bulkWithConfirmation(
    flags,
    (matched) => `${action} ${matched} job(s) matching ${JSON.stringify(filter)}?`,
    (options) => soniq.jobs.bulk({ action, filter, ...options }),
  );
  print(flags.json, result, () =>
    result.dryRun
      ? `${result.matched} job(s) match; nothing changed${flags.dryRun ? " (--dry-run)" : ""}`
      : `${action}: matched ${result.matched}, done ${result.done}, skipped ${result.skipped}`,
  );
}

/** Adds `jobs list|show|cancel|retry|delete|resolve-step|clear-checkpoint` to `program`. */
export function register(program: Command): void {
  const jobs = program.command("jobs").description("Find, inspect and act on jobs.");

  withPaging(withJobFilters(withInstanceFlags(jobs.command("list"))))
    .description("List jobs, newest first, with filters (see --help).")
    .option(
      "--waiting-for-worker",
      "only due queued jobs no live worker can run (unknown name, newer version, no worker for the queue); one page",
    )
    .action((flags: ListFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const page = flags.waitingForWorker
            ? await waitingJobsPage(soniq, jobQueryFrom(flags), pageFrom(flags))
            : await soniq.jobs.list(jobQueryFrom(flags), pageFrom(flags));
          print(
            flags.json,
            { jobs: page.jobs.map(jobValuesJson), nextCursor: page.nextCursor },
            () => listText(page.jobs, page.nextCursor),
          );
        }),
      ),
    );

  withInstanceFlags(jobs.command("show"))
    .description("Show one job (or dead letter) with its timeline and progress.")
    .argument("<id>", "job id")
    .action((id: string, flags: AdminFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const job = await soniq.jobs.get(id);
          if (!job) throw new SoniqError("NOT_FOUND", `no job or dead letter with id ${id}`);
          print(flags.json, jobDetailJson(job), () => showText(job));
        }),
      ),
    );

  withBulkFlags(withJobFilters(withInstanceFlags(jobs.command("cancel"))))
    .description(
      "Cancel jobs: a queued job at once; a running one through its worker (its ctx.signal is aborted, then it is recorded cancelled).",
    )
    .argument("[ids...]", "job ids")
    .action((ids: string[], flags: ActionFlags) =>
      runCommand(() =>
        withInstance(flags, (soniq) =>
          act(soniq, "cancel", ids, flags, (id) => soniq.jobs.cancel(id)),
        ),
      ),
    );

  withBulkFlags(withJobFilters(withInstanceFlags(jobs.command("retry"))))
    .description(
      "Run now: a queued job becomes due now, a done or cancelled one is queued again (attempts kept), a dead letter is replayed.",
    )
    .argument("[ids...]", "job ids")
    .action((ids: string[], flags: ActionFlags) =>
      runCommand(() =>
        withInstance(flags, (soniq) =>
          act(soniq, "retry", ids, flags, async (id) => {
            await soniq.jobs.retry(id);
            return "queued";
          }),
        ),
      ),
    );

  withInstanceFlags(jobs.command("resolve-step"))
    .description(
      "Answer for a job frozen on an effect step whose outcome is unknown (docs/checkpoints.md): --done [result-json] (it happened; the handler gets the result without running the step) or --rerun (it did not: run it). The job becomes due now.",
    )
    .argument("<id>", "job id")
    .argument("<step>", "the step's name")
    .option("--done [result-json]", "the step happened; optional JSON result")
    .option("--rerun", "the step did not happen: run it on the next attempt")
    .action(
      (id: string, step: string, flags: AdminFlags & { done?: string | true; rerun?: true }) =>
        runCommand(() =>
          withInstance(flags, async (soniq) => {
            if ((flags.done !== undefined) === (flags.rerun === true)) {
              throw new SoniqError(
                "INVALID_OPTION",
                "give exactly one of --done [result-json], --rerun",
              );
            }
            let answer: StepAnswer = { rerun: true };
            if (flags.done !== undefined) {
              let result: unknown;
              if (typeof flags.done === "string") {
                try {
                  result = JSON.parse(flags.done);
                } catch {
                  throw new SoniqError("INVALID_INPUT", "--done: the result must be JSON text");
                }
              }
              answer = { done: result };
            }
            await soniq.jobs.resolveStep(id, step, answer);
            print(
              flags.json,
              { id, state: "queued" },
              () => `${id}  queued (step ${step} resolved)`,
            );
          }),
        ),
    );

  withInstanceFlags(jobs.command("clear-checkpoint"))
    .description(
      "Clear a queued job's checkpoint and steps: its next attempt starts afresh (docs/checkpoints.md).",
    )
    .argument("<id>", "job id")
    .action((id: string, flags: AdminFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          await soniq.jobs.clearCheckpoint(id);
          print(flags.json, { id, state: "queued" }, () => `${id}  queued (checkpoint cleared)`);
        }),
      ),
    );

  withBulkFlags(withJobFilters(withInstanceFlags(jobs.command("delete"))))
    .description("Delete jobs that are not running (or dead letters with these ids).")
    .argument("[ids...]", "job ids")
    .action((ids: string[], flags: ActionFlags) =>
      runCommand(() =>
        withInstance(flags, (soniq) =>
          act(soniq, "delete", ids, flags, async (id) => {
            await soniq.jobs.delete(id);
            return "deleted";
          }),
        ),
      ),
    );
}
