/** `soniq status`: job counts by state and the live workers, as text or `--json`. */
import type { Command } from "commander";
import {
  type ConnectionFlags,
  connection,
  print,
  runCommand,
  withDatabaseUrl,
  withInstance,
  withJson,
} from "../runner.js";

/** Adds `status [module] [--json] [--database-url]` to `program`. */
export function register(program: Command): void {
  const command = program
    .command("status")
    .description(
      "Counts by state (total, queued, processing, done, dead_letter, cancelled), remote jobs awaiting the remote side and frozen (both counted in processing), and live workers.",
    )
    .argument("[module]", "your module exporting the Soniq instance (for its settings)");
  withDatabaseUrl(withJson(command)).action(
    (module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const [stats, workers, remote] = await Promise.all([
            soniq.stats(),
            soniq.workers(),
            soniq.remote.counts(),
          ]);
          // One order on every backend.
          const counts = {
            total: stats.total,
            queued: stats.queued,
            processing: stats.processing,
            done: stats.done,
            dead_letter: stats.dead_letter,
            cancelled: stats.cancelled,
            // Remote jobs (a subset of processing): handed to polling, and frozen (ambiguous).
            remote_awaiting: remote.awaiting,
            remote_frozen: remote.frozen,
          };
          const live = workers.filter((w) => w.live);
          const json = {
            ...counts,
            workers: live.map((w) => ({
              id: w.id,
              hostname: w.hostname,
              pid: w.pid,
              status: w.status,
              queues: w.queues,
              concurrency: w.concurrency,
              last_heartbeat_at: w.lastHeartbeatAt.toISOString(),
            })),
          };
          print(flags.json, json, () => {
            const lines = Object.entries(counts).map(([k, v]) => `${k.padEnd(15)} ${v}`);
            lines.push(`${"workers".padEnd(15)} ${live.length} live`);
            for (const w of live) {
              lines.push(
                `  ${w.id}  ${w.status}  concurrency=${w.concurrency}  queues=${w.queues?.join(",") ?? "*"}`,
              );
            }
            return lines.join("\n");
          });
        }),
      ),
  );
}
