/**
 * `soniq dlq list|show|replay|delete|export`: the dead-letter queue through the admin API
 * (`soniq.deadLetters`). `replay` and `delete` take ids, or `--all` with the filter flags (counted,
 * confirmed unless `--yes`, `--dry-run` to count only). `export` writes NDJSON, one entry a line.
 */
import { createWriteStream } from "node:fs";
import type { Command } from "commander";
import { toNdjsonLine } from "../../admin/dead-letters-admin.js";
import { jobDetailJson, jobValuesJson } from "../../admin/json/index.js";
import type { DeadLetterView } from "../../admin/views.js";
import { SoniqError } from "../../errors.js";
import type { Soniq } from "../../soniq.js";
import {
  type AdminFlags,
  assertNoBulkGuardsWithIds,
  type BulkFlags,
  bulkWithConfirmation,
  type DeadLetterFilterFlags,
  deadLetterQueryFrom,
  pageFrom,
  table,
  when,
  withBulkFlags,
  withDeadLetterFilters,
  withInstanceFlags,
  withPaging,
} from "../admin-flags.js";
import { print, runCommand, withInstance } from "../runner.js";

type ListFlags = AdminFlags & DeadLetterFilterFlags & { limit?: number; cursor?: string };
type ActionFlags = AdminFlags & DeadLetterFilterFlags & BulkFlags;

function listText(entries: DeadLetterView[], nextCursor: string | null): string {
  if (entries.length === 0) return "the dead-letter queue has no matching entries";
  const rows = [["ID", "NAME", "QUEUE", "REASON", "ATTEMPTS", "DEAD AT", "LAST ERROR"]];
  for (const d of entries) {
    rows.push([
      d.id,
      d.name,
      d.queue,
      d.reason,
      `${d.attempts}/${d.maxAttempts}`,
      when(d.deadAt),
      (d.lastError ?? "").split("\n")[0]?.slice(0, 60) ?? "",
    ]);
  }
  const more = nextCursor ? `\nmore: --cursor ${nextCursor}` : "";
  return `${table(rows)}${more}\nreplay one: soniq dlq replay <id>   all shown: soniq dlq replay --all …`;
}

async function act(
  soniq: Soniq,
  verb: "replay" | "delete",
  ids: string[],
  flags: ActionFlags,
): Promise<void> {
  if (ids.length > 0 && flags.all) {
    throw new SoniqError("INVALID_INPUT", "give ids or --all with filter flags, not both");
  }
  if (ids.length === 0 && !flags.all) {
    throw new SoniqError(
      "INVALID_INPUT",
      `name the entries to ${verb}: ids, or --all with filter flags (e.g. --all --reason crash_loop)`,
    );
  }
  if (ids.length > 0) {
    assertNoBulkGuardsWithIds(flags);
    for (const id of ids) {
      if (verb === "replay") await soniq.deadLetters.replay(id);
      else await soniq.deadLetters.delete(id);
    }
    const done = verb === "replay" ? "replayed" : "deleted";
    const results = ids.map((id) => ({ id, state: done }));
    print(flags.json, ids.length === 1 ? results[0] : results, () =>
      results.map((r) => `${r.id}  ${r.state}`).join("\n"),
    );
    return;
  }
  const filter = deadLetterQueryFrom(flags);
  const result = await bulkWithConfirmation(
    flags,
    (matched) =>
      `${verb} ${matched} dead-letter entr${matched === 1 ? "y" : "ies"} matching ${JSON.stringify(filter)}?`,
    (options) =>
      verb === "replay"
        ? soniq.deadLetters.replayMany({ filter, ...options })
        : soniq.deadLetters.deleteMany({ filter, ...options }),
  );
  print(flags.json, result, () =>
    result.dryRun
      ? `${result.matched} entr${result.matched === 1 ? "y matches" : "ies match"}; nothing changed${flags.dryRun ? " (--dry-run)" : ""}`
      : `${verb}: matched ${result.matched}, done ${result.done}, skipped ${result.skipped}`,
  );
}

/** Adds `dlq list|show|replay|delete|export` to `program`. */
export function register(program: Command): void {
  const dlq = program
    .command("dlq")
    .description("The dead-letter queue: list, show, replay, delete, export.");

  withPaging(withDeadLetterFilters(withInstanceFlags(dlq.command("list"))))
    .description("List dead letters, newest first.")
    .action((flags: ListFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const page = await soniq.deadLetters.list(deadLetterQueryFrom(flags), pageFrom(flags));
          print(
            flags.json,
            { deadLetters: page.deadLetters.map(jobValuesJson), nextCursor: page.nextCursor },
            () => listText(page.deadLetters, page.nextCursor),
          );
        }),
      ),
    );

  withInstanceFlags(dlq.command("show"))
    .description("Show one dead letter with its timeline.")
    .argument("<id>", "the dead-lettered job's id")
    .action((id: string, flags: AdminFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const job = await soniq.jobs.get(id);
          if (job?.status !== "dead_letter") {
            throw new SoniqError("NOT_FOUND", `no dead-letter entry with id ${id}`);
          }
          print(flags.json, jobDetailJson(job), () =>
            [
              `id          ${job.id}`,
              `name        ${job.name}`,
              `queue       ${job.queue}`,
              `reason      ${job.reason}`,
              `attempts    ${job.attempts}/${job.maxAttempts}  interruptions ${job.interruptions}`,
              `dead at     ${when(job.deadAt)}`,
              `args        ${JSON.stringify(job.args)}`,
              `last error  ${job.lastError ?? "-"}`,
              "timeline",
              ...job.timeline.map(
                (e) =>
                  `  ${when(e.at)}  ${e.kind}${e.detail ? ` — ${e.detail.split("\n")[0]}` : ""}`,
              ),
              `replay it: soniq dlq replay ${job.id}`,
            ].join("\n"),
          );
        }),
      ),
    );

  withBulkFlags(withDeadLetterFilters(withInstanceFlags(dlq.command("replay"))))
    .description("Put dead letters back in their queue, due now, attempts reset to 0.")
    .argument("[ids...]", "ids")
    .action((ids: string[], flags: ActionFlags) =>
      runCommand(() => withInstance(flags, (soniq) => act(soniq, "replay", ids, flags))),
    );

  withBulkFlags(withDeadLetterFilters(withInstanceFlags(dlq.command("delete"))))
    .description("Delete dead letters.")
    .argument("[ids...]", "ids")
    .action((ids: string[], flags: ActionFlags) =>
      runCommand(() => withInstance(flags, (soniq) => act(soniq, "delete", ids, flags))),
    );

  withDeadLetterFilters(withInstanceFlags(dlq.command("export")))
    .description("Write the matching dead letters as NDJSON (one JSON object a line).")
    .option("-o, --output <file>", "write to this file instead of standard output")
    .action((flags: AdminFlags & DeadLetterFilterFlags & { output?: string }) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const out: NodeJS.WritableStream = flags.output
            ? createWriteStream(flags.output)
            : process.stdout;
          let n = 0;
          for await (const entry of soniq.deadLetters.export(deadLetterQueryFrom(flags))) {
            if (!out.write(`${toNdjsonLine(entry)}\n`)) {
              await new Promise<void>((resolve) => out.once("drain", () => resolve()));
            }
            n += 1;
          }
          if (flags.output) {
            await new Promise<void>((resolve, reject) => {
              out.once("error", reject);
              out.end(() => resolve());
            });
            process.stderr.write(`exported ${n} entr${n === 1 ? "y" : "ies"} to ${flags.output}\n`);
          }
        }),
      ),
    );
}
