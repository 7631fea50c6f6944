/**
 * `soniq status`: job counts by state, the same per queue (with each queue's paused flag and
 * `maxRunning`), and the workers — live ones listed, dead ones counted, liveness judged by each
 * worker's declared heartbeat timeout — and the due jobs no live worker can run (`waitingForWorker`).
 * The text form says which command to run next (a dead
 * letter → `soniq dlq list`).
 */
import type { Command } from "commander";
import {
  keyFlowJson,
  type StatusJson,
  type StatusQueueJson,
  workerJson,
} from "../../admin/json/index.js";
import { compareKeyFlow } from "../../admin/key-flow.js";
import type { RemoteStatus } from "../../admin/remote-split.js";
import { table } from "../admin-flags.js";
import { keyFlowTable } from "../key-flow-text.js";
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
import { waitingForWorkerLines } from "../waiting-for-worker-text.js";

const STATES = ["queued", "scheduled", "processing", "done", "cancelled", "dead_letter"] as const;

/** A state's key in the JSON (camelCase, like every key: docs/operations.md, "JSON output"). */
const STATE_KEYS = {
  queued: "queued",
  scheduled: "scheduled",
  processing: "processing",
  done: "done",
  cancelled: "cancelled",
  dead_letter: "deadLetter",
} as const;

/** Width of the label column: the longest label (`remote_submitting`), so every count lines up. */
const LABEL_WIDTH = 17;

/** The text form's label of a count (the words operators type: `--status dead_letter`). */
const LABELS: Readonly<Record<string, string>> = {
  deadLetter: "dead_letter",
  remoteAwaiting: "remote_awaiting",
  remoteFrozen: "remote_frozen",
  remoteSubmitting: "remote_submitting",
};

/** The per-queue keys of the remote statuses (camelCase JSON keys). */
const REMOTE_KEYS: ReadonlyArray<[RemoteStatus, string]> = [
  ["remote_submitting", "remoteSubmitting"],
  ["remote_accepted", "remoteAccepted"],
  ["remote_frozen", "remoteFrozen"],
];

/** ANSI colours of the text form (`--colour`); the identity without it. */
function painter(on: boolean): (code: "red" | "yellow" | "green", text: string) => string {
  const codes = { red: 31, yellow: 33, green: 32 } as const;
  return (code, text) => (on ? `\u001b[${codes[code]}m${text}\u001b[39m` : text);
}

/** Adds `status [module] [--json] [--database-url]` to `program`. */
export function register(program: Command): void {
  const command = program
    .command("status")
    .description(
      "Counts by state (total, queued (due now), scheduled (queued, due later), processing, done, dead_letter, cancelled), remote jobs submitting, awaiting the remote side and frozen (apart from processing), per queue, and the workers.",
    )
    .argument("[module]", "your module exporting the Soniq instance (for its settings)")
    .option("--color", "the same as --colour")
    .option(
      "--colour",
      "colour the text form (dead letters red, frozen remote jobs yellow, workers green); ignored with --json",
    );
  withModule(withDatabaseUrl(withJson(command))).action(
    (
      module: string | undefined,
      flags: ConnectionFlags & { json?: boolean; colour?: boolean; color?: boolean },
    ) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const [stats, workers, cells, queueInfo, rateKeys, flows] = await Promise.all([
            soniq.stats(),
            soniq.workers(),
            soniq.jobs.countByQueueStatus(),
            soniq.queues.list(),
            soniq.queues.rateKeys(20),
            soniq.queues.flow({ topKeys: 10 }),
          ]);
          // Queued jobs split by due time (database clock), from the same read as the queues.
          const scheduled = cells
            .filter((c) => c.status === "scheduled")
            .reduce((sum, c) => sum + c.count, 0);
          // One order on every backend.
          const counts = {
            total: stats.total,
            queued: Math.max(0, stats.queued - scheduled),
            scheduled,
            processing: stats.processing,
            done: stats.done,
            deadLetter: stats.deadLetter,
            cancelled: stats.cancelled,
            // Remote jobs, apart from processing: being submitted, handed to polling (accepted), and
            // frozen (ambiguous).
            remoteSubmitting: stats.remoteSubmitting,
            remoteAwaiting: stats.remoteAccepted,
            remoteFrozen: stats.remoteFrozen,
          };
          const names = new Set([...cells.map((c) => c.queue), ...queueInfo.map((q) => q.name)]);
          const queues = [...names].sort().map((name): StatusQueueJson => {
            const info = queueInfo.find((q) => q.name === name);
            const flow = flows.find((f) => f.queue === name);
            const count = (state: (typeof STATES)[number]) =>
              cells.find((c) => c.queue === name && c.status === state)?.count ?? 0;
            return {
              name,
              paused: info?.paused ?? false,
              pausedUntil: info?.pausedUntil ? info.pausedUntil.toISOString() : null,
              maxRunning: info?.maxRunning ?? null,
              queued: count("queued"),
              scheduled: count("scheduled"),
              processing: count("processing"),
              done: count("done"),
              cancelled: count("cancelled"),
              deadLetter: count("dead_letter"),
              ...(Object.fromEntries(
                REMOTE_KEYS.map(([status, key]) => [
                  key,
                  cells.find((c) => c.queue === name && c.status === status)?.count ?? 0,
                ]),
              ) as Pick<StatusQueueJson, "remoteSubmitting" | "remoteAccepted" | "remoteFrozen">),
              heldByConcurrency: flow?.heldByConcurrency ?? 0,
              heldByRate: flow?.heldByRate ?? 0,
              nextWindowAt: flow?.nextWindowAt ? flow.nextWindowAt.toISOString() : null,
            };
          });
          const live = workers.filter((w) => w.live);
          const waitingForWorker = await soniq.jobs.waitingForWorker();
          const json: StatusJson = {
            ...counts,
            queues,
            workers: live.map(workerJson),
            deadWorkers: workers.filter((w) => !w.live && w.status !== "stopped").length,
            waitingForWorker,
            rateKeys: rateKeys.map((k) => ({
              key: k.key,
              startsInWindow: k.startsInWindow,
              nextWindowAt: k.nextWindowAt ? k.nextWindowAt.toISOString() : null,
              pausedUntil: k.pausedUntil ? k.pausedUntil.toISOString() : null,
            })),
            topKeys: flows
              .flatMap((f) => f.topKeys)
              .sort(compareKeyFlow)
              .slice(0, 10)
              .map(keyFlowJson),
          };
          const paint = painter((flags.colour === true || flags.color === true) && !flags.json);
          print(flags.json, json, () => {
            const lines = Object.entries(counts).map(([key, v]) => {
              const k = LABELS[key] ?? key;
              const hint =
                k === "dead_letter" && v > 0
                  ? "   → soniq dlq list"
                  : k === "processing" && v > 0
                    ? "   → soniq jobs list --status processing"
                    : k === "scheduled" && v > 0
                      ? "   → soniq jobs list --status scheduled"
                      : "";
              const count =
                k === "dead_letter" && v > 0
                  ? paint("red", String(v))
                  : k === "remote_frozen" && v > 0
                    ? paint("yellow", String(v))
                    : String(v);
              return `${k.padEnd(LABEL_WIDTH)} ${count}${hint}`;
            });
            const dead = json.deadWorkers;
            lines.push(
              `${"workers".padEnd(LABEL_WIDTH)} ${paint("green", `${live.length} live`)}${dead > 0 ? `, ${paint("red", `${dead} dead`)} (not stopped) → soniq workers, soniq recover` : ""}`,
            );
            for (const w of live) {
              lines.push(
                `  ${w.id}  ${w.shutdownState}  concurrency=${w.concurrency}  queues=${w.queues?.join(",") ?? "*"}`,
              );
            }
            if (queues.length > 0) {
              lines.push("queues");
              const held = queues.some((q) => q.heldByConcurrency + q.heldByRate > 0);
              const rows = [
                [
                  "  QUEUE",
                  "STATE",
                  ...STATES.map((s) => s.toUpperCase()),
                  ...(held ? ["HELD (CONCURRENCY)", "HELD (RATE)", "NEXT WINDOW"] : []),
                ],
              ];
              for (const q of queues) {
                rows.push([
                  `  ${q.name}`,
                  q.paused
                    ? "paused"
                    : q.maxRunning !== null
                      ? `max ${String(q.maxRunning)}`
                      : "active",
                  ...STATES.map((s) => String(q[STATE_KEYS[s]])),
                  ...(held
                    ? [String(q.heldByConcurrency), String(q.heldByRate), q.nextWindowAt ?? "-"]
                    : []),
                ]);
              }
              lines.push(table(rows));
            }
            if (json.topKeys.length > 0) {
              lines.push("top keys");
              lines.push(keyFlowTable(json.topKeys, "  "));
            }
            lines.push(...waitingForWorkerLines(waitingForWorker));
            if (json.rateKeys.length > 0) {
              lines.push("rate-limited keys");
              const rows = [["  KEY", "STARTS IN WINDOW", "NEXT WINDOW", "PAUSED UNTIL"]];
              for (const k of json.rateKeys) {
                rows.push([
                  `  ${k.key}`,
                  String(k.startsInWindow),
                  k.nextWindowAt ?? "-",
                  k.pausedUntil ?? "-",
                ]);
              }
              lines.push(table(rows));
            }
            return lines.join("\n");
          });
        }),
      ),
  );
}
