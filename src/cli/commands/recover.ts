/** `soniq recover`: requeues now the processing jobs of workers that are not live. */
import type { Command } from "commander";
import type { RecoveryResult } from "../../backends/contract/index.js";
import { Rescuer } from "../../maintenance/rescuer.js";
import type { Soniq } from "../../soniq.js";
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

/** What one recovery pass did: job ids requeued and moved to the dead-letter queue. */
type Recovered = RecoveryResult;

/** The one call into recovery (maintenance owns the rule; this command only triggers a pass). */
async function recover(soniq: Soniq): Promise<Recovered> {
  return new Rescuer({
    backend: await soniq.backend(),
    logger: soniq.logger,
    heartbeatTimeoutSeconds: soniq.settings.heartbeatTimeout,
    maxInterruptions: soniq.settings.maxInterruptions,
    cancelledRetentionSeconds: soniq.settings.resultRetention,
  }).runOnce();
}

/** Adds `recover [module] [--database-url] [--json]` to `program`. */
export function register(program: Command): void {
  const command = program
    .command("recover")
    .description(
      "Requeue now every processing job whose worker is not live (stale heartbeat, stopped, or unknown); a job past maxInterruptions goes to the dead-letter queue as crash_loop. Workers also do this by themselves.",
    )
    .argument("[module]", "your module exporting the Soniq instance (for its settings)");
  withModule(withDatabaseUrl(withJson(command))).action(
    (module: string | undefined, flags: ConnectionFlags & { json?: boolean }) =>
      runCommand(() =>
        withInstance(connection(module, flags), async (soniq) => {
          const result = await recover(soniq);
          print(
            flags.json,
            result,
            () =>
              `requeued ${result.requeued.length}, moved to the dead-letter queue (crash_loop) ${result.deadLettered.length}`,
          );
        }),
      ),
  );
}
