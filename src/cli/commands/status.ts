/**
 * `soniq status`: job counts by state, the same per queue (with each queue's paused flag and
 * `maxRunning`), and the workers — live ones listed, dead ones counted, liveness judged by each
 * worker's declared heartbeat timeout. The text form says which command to run next (a dead
 * letter → `soniq dlq list`).
 */
import type { Command } from "commander";
import type { RemoteStatus } from "../../admin/remote-split.js";
import { table } from "../admin-flags.js";
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

const STATES = ["queued", "scheduled", "processing", "done", "cancelled", "dead_letter"] as const;

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
          const [stats, workers, cells, queueInfo] = await Promise.all([
            soniq.stats(),
            soniq.workers(),
            soniq.jobs.countByQueueStatus(),
            soniq.queues.list(),
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
            dead_letter: stats.dead_letter,
            cancelled: stats.cancelled,
            // Remote jobs, apart from processing: handed to polling, and frozen (ambiguous).
            remote_awaiting: stats.remoteAccepted,
            remote_frozen: stats.remoteFrozen,
            remoteSubmitting: stats.remoteSubmitting,
          };
          const names = new Set([...cells.map((c) => c.queue), ...queueInfo.map((q) => q.name)]);
          const queues = [...names].sort().map((name) => {
            const info = queueInfo.find((q) => q.name === name);
            const row: Record<string, unknown> = {
              name,
              paused: info?.paused ?? false,
              max_running: info?.maxRunning ?? null,
            };
            for (const state of STATES) {
              row[state] = cells.find((c) => c.queue === name && c.status === state)?.count ?? 0;
            }
            for (const [status, key] of REMOTE_KEYS) {
              row[key] = cells.find((c) => c.queue === name && c.status === status)?.count ?? 0;
            }
            return row;
          });
          const live = workers.filter((w) => w.live);
          const json = {
            ...counts,
            queues,
            workers: live.map((w) => ({
              id: w.id,
              hostname: w.hostname,
              pid: w.pid,
              status: w.status,
              shutdown_state: w.shutdownState,
              queues: w.queues,
              concurrency: w.concurrency,
              last_heartbeat_at: w.lastHeartbeatAt.toISOString(),
            })),
            dead_workers: workers.filter((w) => !w.live && w.status !== "stopped").length,
          };
          const paint = painter((flags.colour === true || flags.color === true) && !flags.json);
          print(flags.json, json, () => {
            const lines = Object.entries(counts).map(([k, v]) => {
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
              return `${k.padEnd(15)} ${count}${hint}`;
            });
            const dead = json.dead_workers;
            lines.push(
              `${"workers".padEnd(15)} ${paint("green", `${live.length} live`)}${dead > 0 ? `, ${paint("red", `${dead} dead`)} (not stopped) → soniq workers, soniq recover` : ""}`,
            );
            for (const w of live) {
              lines.push(
                `  ${w.id}  ${w.shutdownState}  concurrency=${w.concurrency}  queues=${w.queues?.join(",") ?? "*"}`,
              );
            }
            if (queues.length > 0) {
              lines.push("queues");
              const rows = [["  QUEUE", "STATE", ...STATES.map((s) => s.toUpperCase())]];
              for (const q of queues) {
                rows.push([
                  `  ${q.name as string}`,
                  q.paused
                    ? "paused"
                    : q.max_running !== null
                      ? `max ${String(q.max_running)}`
                      : "active",
                  ...STATES.map((s) => String(q[s])),
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
