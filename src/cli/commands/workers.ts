/**
 * `soniq workers`: every worker incarnation with host, pid, queues, concurrency, heartbeat age, its
 * shutdown state (RUNNING, DRAINING, FORCE_TIMEOUT_PATH, WAIT_FOR_THREAD, STOPPED), drain start,
 * deadline and in-flight jobs. Live or dead is judged by the heartbeat timeout each worker
 * declared, so this agrees with the workers and with `soniq recover` whatever the caller's
 * settings.
 */
import type { Command } from "commander";
import { workerJson } from "../../admin/json/index.js";
import { type AdminFlags, table, when, withInstanceFlags } from "../admin-flags.js";
import { print, runCommand, withInstance } from "../runner.js";

/** Adds `workers [--module] [--database-url] [--json]` to `program`. */
export function register(program: Command): void {
  withInstanceFlags(program.command("workers"))
    .description("Worker incarnations: live or dead, shutdown state, deadline, in-flight jobs.")
    .action((flags: AdminFlags) =>
      runCommand(() =>
        withInstance(flags, async (soniq) => {
          const workers = await soniq.workers();
          print(flags.json, workers.map(workerJson), () => {
            if (workers.length === 0) return "no workers";
            const rows = [
              ["ID", "HOST", "PID", "LIVE", "STATE", "HEARTBEAT AGE", "DEADLINE", "IN FLIGHT"],
            ];
            for (const w of workers) {
              rows.push([
                w.id,
                w.hostname,
                String(w.pid),
                w.live ? "live" : "dead",
                w.shutdownState,
                `${w.heartbeatAgeSeconds.toFixed(1)} s`,
                when(w.deadlineAt),
                w.inFlight.length === 0 ? "-" : w.inFlight.join(","),
              ]);
            }
            return table(rows);
          });
        }),
      ),
    );
}
