/**
 * `soniq queues list|show|pause|resume|set`: each queue's configuration and counts through the
 * admin API (`soniq.queues`). `show` adds what flow-control limits hold back in the queue (its
 * keys' running counts, jobs held by a concurrency limit and by a rate limit, the next window). A pause stops claims from the queue in every process within one wake-up;
 * running jobs go on. `set --max-running` caps the queue's processing jobs across every worker;
 * `set --unclaimable-after` dead-letters jobs no live worker could run for that long.
 * A queue that has never had a job, a schedule or a setting is refused (`NOT_FOUND`, with a "did
 * you mean") unless `--create`.
 */
import { type Command, InvalidArgumentError } from "commander";
import { closestName } from "../../admin/did-you-mean.js";
import {
  emptyQueueFlow,
  type QueueDetailJson,
  queueFlowJson,
  queueJson,
} from "../../admin/json/index.js";
import type { QueueInfo } from "../../backends/contract/index.js";
import { SoniqError } from "../../errors.js";
import { type AdminFlags, table, withInstanceFlags } from "../admin-flags.js";
import { keyFlowTable } from "../key-flow-text.js";
import { print, runCommand, withInstance } from "../runner.js";

function text(queues: QueueInfo[]): string {
  if (queues.length === 0) return "no queues yet";
  const rows = [
    ["QUEUE", "STATE", "MAX RUNNING", "UNCLAIMABLE AFTER", "QUEUED", "PROCESSING", "OLDEST DUE"],
  ];
  for (const q of queues) {
    rows.push([
      q.name,
      q.paused
        ? q.pausedUntil === null
          ? "paused"
          : `paused until ${q.pausedUntil.toISOString()}`
        : "active",
      q.maxRunning === null ? "-" : String(q.maxRunning),
      q.unclaimableAfter === null ? "-" : `${q.unclaimableAfter} s`,
      String(q.queued),
      String(q.processing),
      q.oldestDueAgeSeconds > 0 ? `${q.oldestDueAgeSeconds.toFixed(1)} s` : "-",
    ]);
  }
  return table(rows);
}

/** The text form of `queues show`: the queue's line, then its keyed jobs. */
function detailText(detail: QueueDetailJson): string {
  const { flow } = detail;
  const lines = [
    `queue            ${detail.name}`,
    `state            ${detail.paused ? (detail.pausedUntil === null ? "paused" : `paused until ${detail.pausedUntil}`) : "active"}`,
    `max running      ${detail.maxRunning ?? "-"}`,
    `queued           ${detail.queued}`,
    `processing       ${detail.processing}`,
    `oldest due       ${detail.oldestDueAgeSeconds > 0 ? `${detail.oldestDueAgeSeconds.toFixed(1)} s` : "-"}`,
    `keys             ${flow.keys}`,
    `held by concurrency limit  ${flow.heldByConcurrency}`,
    `held by rate limit         ${flow.heldByRate}`,
    `next window                ${flow.nextWindowAt ?? "-"}`,
  ];
  if (flow.topKeys.length > 0) {
    lines.push(`top keys (${flow.topKeys.length} of ${flow.keys}, most running first)`);
    lines.push(keyFlowTable(flow.topKeys, "  "));
  }
  return lines.join("\n");
}

/** `--top`: keys listed, 0 to 1000. */
function topKeys(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 1000) {
    throw new InvalidArgumentError("top must be an integer from 0 to 1000");
  }
  return n;
}

/** `--create`: configure a queue nothing knows yet (else refused as a likely typo). */
const CREATE_HELP =
  "configure a queue that has no job, schedule or setting yet (without it such a name is refused as a likely typo: NOT_FOUND)";

/**
 * `--max-running`: a positive integer, or `none` for no limit (kept as the word: commander turns
 * a parser's `null` into an empty string).
 */
function maxRunning(value: string): number | "none" {
  if (value === "none") return "none";
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError("max-running must be an integer >= 1, or none");
  }
  return n;
}

/** `--unclaimable-after`: whole seconds >= 1, or `none` (off). */
function unclaimableAfter(value: string): number | "none" {
  if (value === "none") return "none";
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new InvalidArgumentError(
      "unclaimable-after must be a whole number of seconds >= 1, or none",
    );
  }
  return n;
}

/** The flags of `queues set`. */
interface SetFlags {
  maxRunning?: number | "none";
  unclaimableAfter?: number | "none";
  create?: boolean;
}

/** Adds `queues list|pause|resume|set` to `program`. */
export function register(program: Command): void {
  const queues = program
    .command("queues")
    .description(
      "Queues: list, show (with what flow-control limits hold back), pause, resume, set max-running and unclaimable-after.",
    );

  withInstanceFlags(queues.command("list"))
    .description("Every queue with jobs or a configuration: paused, max-running, counts.")
    .action((flags: AdminFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const list = await soniq.queues.list();
          print(flags.json, list.map(queueJson), () => text(list));
        }),
      ),
    );

  withInstanceFlags(queues.command("show"))
    .description(
      "One queue: its counts and what flow-control limits hold back (keys' running jobs, jobs held by a concurrency limit and by a rate limit, the next window).",
    )
    .argument("<queue>", "queue name")
    .option("--top <n>", "keys listed, most running first (0 to 1000, default 10)", topKeys)
    .action((name: string, flags: AdminFlags & { top?: number }) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const [list, flows] = await Promise.all([
            soniq.queues.list(),
            soniq.queues.flow({ queue: name, topKeys: flags.top ?? 10 }),
          ]);
          const q = list.find((x) => x.name === name);
          if (q === undefined) {
            const known = await soniq.queues.knownNames();
            const close = closestName(name, known);
            throw new SoniqError(
              "NOT_FOUND",
              `no queue "${name}": it has no job and no configuration${close === null ? "" : ` (did you mean "${close}"?)`}`,
              { details: { queue: name, ...(close === null ? {} : { didYouMean: close }) } },
            );
          }
          const detail: QueueDetailJson = {
            ...queueJson(q),
            flow: queueFlowJson(flows[0] ?? emptyQueueFlow(name)),
          };
          print(flags.json, detail, () => detailText(detail));
        }),
      ),
    );

  for (const verb of ["pause", "resume"] as const) {
    withInstanceFlags(queues.command(verb))
      .description(
        verb === "pause"
          ? "Stop claims from a queue in every process (running jobs go on)."
          : "Let workers claim from a paused queue again.",
      )
      .argument("<queue>", "queue name")
      .option("--create", CREATE_HELP)
      .action((name: string, flags: AdminFlags & { create?: boolean }) =>
        runCommand(() =>
          withInstance(flags, async (soniq) => {
            const options = { create: flags.create === true };
            const q = await (verb === "pause"
              ? soniq.queues.pause(name, options)
              : soniq.queues.resume(name, options));
            print(flags.json, queueJson(q), () => `${q.name}  ${q.paused ? "paused" : "active"}`);
          }),
        ),
      );
  }

  withInstanceFlags(queues.command("set"))
    .description("Change a queue's configuration.")
    .argument("<queue>", "queue name")
    .option(
      "--max-running <n>",
      "most jobs of the queue processing at once across every worker, or none",
      maxRunning,
    )
    .option(
      "--unclaimable-after <seconds>",
      "dead-letter (no_capable_worker) due jobs no live worker could run for that many seconds, or none (the default)",
      unclaimableAfter,
    )
    .option("--create", CREATE_HELP)
    .action((name: string, flags: AdminFlags & SetFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          if (flags.maxRunning === undefined && flags.unclaimableAfter === undefined) {
            throw new SoniqError(
              "INVALID_INPUT",
              "give --max-running, --unclaimable-after or both",
            );
          }
          const q = await soniq.queues.set(
            name,
            {
              ...(flags.maxRunning === undefined
                ? {}
                : { maxRunning: flags.maxRunning === "none" ? null : flags.maxRunning }),
              ...(flags.unclaimableAfter === undefined
                ? {}
                : {
                    unclaimableAfter:
                      flags.unclaimableAfter === "none" ? null : flags.unclaimableAfter,
                  }),
            },
            { create: flags.create === true },
          );
          print(
            flags.json,
            queueJson(q),
            () =>
              `${q.name}  max-running ${q.maxRunning === null ? "none" : q.maxRunning}  unclaimable-after ${q.unclaimableAfter === null ? "none" : `${q.unclaimableAfter}s`}`,
          );
        }),
      ),
    );
}
