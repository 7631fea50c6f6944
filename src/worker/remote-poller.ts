/**
 * The remote poller: a service (a PeriodicService) that, while the worker is RUNNING and
 * has free slots, claims due remote jobs in custody (`pollClaimDue`: accepted tasks to poll, frozen
 * ones to reconcile or with a stored answer) and runs each in a slot of the worker's in-flight
 * table — so a poll holds a slot only while it runs, the drain waits for it (and hands it off at
 * the deadline), and the heartbeat counts it as tracked. It stops claiming when the drain begins.
 */
import type { Backend } from "../backends/contract/index.js";
import type { ClaimedRemote } from "../backends/contract/submission-store.js";
import type { JobDefinition } from "../jobs/job-definition.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { Logger } from "../observability/logger.js";
import type { InFlightTable } from "./in-flight.js";
import type { RemotePollRunner } from "./remote-poll.js";
import type { ShutdownMachine } from "./shutdown-machine.js";

type Definition = JobDefinition<unknown, unknown, unknown>;

/** Options of {@link RemotePoller}. */
export interface RemotePollerOptions {
  backend: Backend;
  workerId: string;
  logger: Logger;
  machine: ShutdownMachine;
  table: InFlightTable;
  /** The worker's slots. */
  concurrency: number;
  /** Milliseconds between two looks for due polls (the worker's `pollInterval`). */
  intervalMs: number;
  /** The registered remote job definitions, by name. */
  definitions: ReadonlyMap<string, Definition>;
  runner: RemotePollRunner;
  /** The validated arguments of a job (for reconcile), or undefined when they cannot be read. */
  parseArgs(job: ClaimedRemote["job"]): Promise<unknown>;
}

/** See the module comment. */
export class RemotePoller extends PeriodicService {
  constructor(private readonly options: RemotePollerOptions) {
    super({
      name: "remote poller",
      logger: options.logger,
      intervalMs: options.intervalMs,
      immediately: true,
      tick: (signal) => this.pollDue(signal),
    });
  }

  private async pollDue(signal: AbortSignal): Promise<void> {
    const { backend, machine, table, definitions, runner } = this.options;
    if (signal.aborted || machine.state !== "RUNNING") return;
    const free = this.options.concurrency - table.busySlots;
    if (free <= 0) return;
    const names = [...definitions.keys()];
    const reconcilable = [...definitions.values()]
      .filter((d) => d.remote?.reconcile !== undefined)
      .map((d) => d.name);
    const claimed = await backend.submissions.pollClaimDue({
      workerId: this.options.workerId,
      names,
      reconcilable,
      limit: free,
    });
    for (const item of claimed) {
      const definition = definitions.get(item.job.name) as Definition;
      table.track(
        item.job,
        async (entry) => {
          const args =
            item.phase === "frozen" && !item.answer
              ? await this.options.parseArgs(item.job)
              : undefined;
          await runner.run(entry, item, definition, args);
          table.freeSlot(entry);
        },
        async (_job, err) => {
          this.logger.error(
            { job_id: item.job.id, err: String(err) },
            "remote poll failed unexpectedly",
          );
          const entry = [...table.values()].find((e) => e.job.id === item.job.id);
          if (entry) await runner.rescue(entry);
        },
      );
    }
  }
}
