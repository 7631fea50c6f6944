/**
 * `soniq remote …`: the operator's view of remote jobs (docs/remote-jobs.md, "Operators") through
 * `soniq.remote`:
 * `list [--frozen|--awaiting|--submitting] [--json]`, `show <job-id>`,
 * `resolve <job-id> (--accepted <task-id> | --not-submitted | --failed <reason>)`,
 * `poll-now <job-id>`. Errors (not found, not frozen, bad task id; poll-now on a frozen job whose
 * definition in the module has no `reconcile`) exit 2 with their code.
 */
import type { Command } from "commander";
import { remoteJobJson, remoteState } from "../../admin/json/index.js";
import type {
  SubmissionFilter,
  SubmissionRecord,
} from "../../backends/contract/submission-store.js";
import { SoniqError } from "../../errors.js";
import { accepted, failed, notSubmitted } from "../../remote/results.js";
import {
  type ConnectionFlags,
  connection,
  print,
  runCommand,
  withDatabaseUrl,
  withInstance,
  withJson,
  withModule,
} from "../runner.js";

function line(r: SubmissionRecord): string {
  const extra =
    r.phase === "frozen"
      ? `reason=${r.frozenReason ?? "?"}`
      : r.taskId
        ? `task=${r.taskId}`
        : `key=${r.idempotencyKey}`;
  return `${r.jobId}  ${remoteState(r).padEnd(11)} ${r.name}  ${extra}  updated=${r.updatedAt.toISOString()}`;
}

type Flags = ConnectionFlags & { json?: boolean };

/** The options of `remote resolve`: never a value of `--accepted` or `--failed`. */
const RESOLVE_OPTIONS: readonly string[] = [
  "--accepted",
  "--not-submitted",
  "--failed",
  "--json",
  "--database-url",
  "--module",
  "--help",
  "-h",
];

/** Adds `remote list|show|resolve|poll-now` to `program`. */
export function register(program: Command): void {
  const remote = program
    .command("remote")
    .description(
      "Remote jobs (submit to an API, poll by task id): list, show, resolve a frozen submission, poll now.",
    );

  withModule(withJson(withDatabaseUrl(remote.command("list"))))
    .description("Remote submissions, newest first (default: all).")
    .argument("[module]", "your module exporting the Soniq instance")
    .option("--frozen", "only frozen (ambiguous) submissions")
    .option("--awaiting", "only accepted tasks awaiting the remote side")
    .option("--submitting", "only submissions in flight")
    .option("--limit <n>", "at most this many (default 100)", (v) => Number(v))
    .action(
      (
        module: string | undefined,
        flags: Flags & {
          frozen?: boolean;
          awaiting?: boolean;
          submitting?: boolean;
          limit?: number;
        },
      ) =>
        runCommand(() =>
          withInstance(connection(module, flags), async (soniq) => {
            const chosen = (["frozen", "awaiting", "submitting"] as const).filter((f) => flags[f]);
            if (chosen.length > 1) {
              throw new SoniqError(
                "INVALID_OPTION",
                "give at most one of --frozen, --awaiting, --submitting",
              );
            }
            const limit = flags.limit ?? 100;
            if (!Number.isInteger(limit) || limit < 1) {
              throw new SoniqError("INVALID_OPTION", "--limit must be an integer >= 1");
            }
            const filter: SubmissionFilter = chosen[0] ?? "all";
            const records = await soniq.remote.list(filter, limit);
            print(
              flags.json,
              records.map((r) => remoteJobJson(r)),
              () => (records.length === 0 ? "no remote submissions" : records.map(line).join("\n")),
            );
          }),
        ),
    );

  withModule(withJson(withDatabaseUrl(remote.command("show"))))
    .description("One remote job's submission: phase, task id, idempotency key, due time.")
    .argument("<job-id>")
    .argument("[module]", "your module exporting the Soniq instance")
    .action((jobId: string, module: string | undefined, flags: Flags) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const record = remoteJobJson(await soniq.remote.show(jobId));
          print(flags.json, record, () =>
            Object.entries(record)
              .map(([k, v]) => `${k.padEnd(16)} ${v ?? "-"}`)
              .join("\n"),
          );
        }),
      ),
    );

  withModule(withJson(withDatabaseUrl(remote.command("resolve"))))
    .description(
      "Resolve a frozen submission: --accepted <task-id> (poll it), --not-submitted (submit again with the same idempotency key), or --failed <reason> (dead-letter it).",
    )
    .argument("<job-id>")
    .argument("[module]", "your module exporting the Soniq instance")
    .option("--accepted <task-id>", "the provider has it under this task id")
    .option("--not-submitted", "the provider never received it")
    .option("--failed <reason>", "give up: dead-letter it with this reason")
    .action(
      (
        jobId: string,
        module: string | undefined,
        flags: Flags & { accepted?: string; notSubmitted?: boolean; failed?: string },
      ) =>
        runCommand(() =>
          withInstance(connection(module, flags), async (soniq) => {
            const given = [
              flags.accepted !== undefined,
              flags.notSubmitted === true,
              flags.failed !== undefined,
            ];
            if (given.filter(Boolean).length !== 1) {
              throw new SoniqError(
                "INVALID_OPTION",
                "give exactly one of --accepted <task-id>, --not-submitted, --failed <reason>",
              );
            }
            // `--accepted --json`: commander takes the next word as the value even when it is
            // one of this command's own options; refuse it rather than resolve under "--json".
            for (const [flag, value] of [
              ["--accepted", flags.accepted],
              ["--failed", flags.failed],
            ] as const) {
              if (value !== undefined && RESOLVE_OPTIONS.includes(value)) {
                throw new SoniqError(
                  "INVALID_OPTION",
                  `${flag} needs a value, got the option ${value}`,
                );
              }
            }
            if (flags.failed !== undefined && flags.failed.length === 0) {
              throw new SoniqError("INVALID_OPTION", "--failed needs a non-empty reason");
            }
            const resolution =
              flags.accepted !== undefined
                ? accepted(flags.accepted)
                : flags.notSubmitted
                  ? notSubmitted()
                  : failed(flags.failed as string);
            await soniq.remote.resolve(jobId, resolution);
            print(
              flags.json,
              { jobId, resolution: resolution.kind },
              () => `resolved ${jobId}: ${resolution.kind}`,
            );
          }),
        ),
    );

  withModule(withJson(withDatabaseUrl(remote.command("poll-now"))))
    .description(
      "Poll an awaiting task (or reconcile a frozen one) at the next worker tick. A frozen job whose definition (in the module) has no reconcile is refused (INVALID_STATE): resolve it with `soniq remote resolve`.",
    )
    .argument("<job-id>")
    .argument("[module]", "your module exporting the Soniq instance")
    .action((jobId: string, module: string | undefined, flags: Flags) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          await soniq.remote.pollNow(jobId);
          print(flags.json, { jobId, due: "now" }, () => `${jobId} is due now`);
        }),
      ),
    );
}
