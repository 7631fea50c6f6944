/**
 * The flow-ends reporter: a leader-only maintenance service that takes the flows and batches
 * that finished (`FlowStore.flowEndsTake`: written by the database's triggers in the statement
 * that finished them, deleted and counted as they are taken) every `intervalMs` and emits one
 * `flow_finished` or `batch_finished` event per finish, in the order they were written
 * (docs/workflows.md, "Knowing when a flow or batch finished"). Taking counts them in
 * `soniq_flow_counts`, which the queue sampler reads for the Prometheus counters, so it runs
 * whether or not anyone listens. Each tick takes at most `batchLimit` rows per statement until
 * a batch comes back short, checking for a stop between batches. A finish is reported once, by
 * the leader that took it; a leader that dies between its statement's commit and the emit loses
 * those events (never the counts).
 *
 * Options (see {@link FlowEndsOptions}): `intervalMs` (milliseconds; maintenance passes
 * `heartbeatInterval`), `workerId`, `events`, `batchLimit`.
 * Events: `flow_finished` (`worker_id`, `flow_id`, `outcome`, `finished_at`), `batch_finished`
 * (`worker_id`, `batch_id`, `outcome`, `finished_at`).
 */
import type { Backend } from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { BaseServiceOptions } from "../lifecycle/service.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import { inBatches } from "./batches.js";

/** Default finishes taken per statement. */
export const FLOW_ENDS_BATCH_LIMIT = 1000;

/** Options of {@link FlowEnds}. */
export interface FlowEndsOptions extends Omit<BaseServiceOptions, "name"> {
  /** The take it needs. */
  backend: { flows: Pick<Backend["flows"], "flowEndsTake"> };
  /** The reporting worker (`worker_id` of its events). */
  workerId: string;
  /** Where the events go; without it, finishes are only counted. */
  events?: EventBus<SoniqEventMap>;
  /** Milliseconds between ticks. */
  intervalMs: number;
  /** Finishes taken per statement. Default {@link FLOW_ENDS_BATCH_LIMIT}. */
  batchLimit?: number;
}

/** See the module comment. */
export class FlowEnds extends PeriodicService {
  constructor(options: FlowEndsOptions) {
    const limit = options.batchLimit ?? FLOW_ENDS_BATCH_LIMIT;
    super({
      ...options,
      name: "flow-ends",
      immediately: true,
      tick: async (signal) => {
        await inBatches(limit, signal, async () => {
          const rows = await options.backend.flows.flowEndsTake({ limit });
          for (const r of rows) {
            const finished_at = r.endedAt.toISOString();
            if (r.kind === "flow") {
              options.events?.emit("flow_finished", {
                worker_id: options.workerId,
                flow_id: r.id,
                outcome: r.outcome === "succeeded" ? "done" : r.outcome,
                finished_at,
              });
            } else {
              options.events?.emit("batch_finished", {
                worker_id: options.workerId,
                batch_id: r.id,
                outcome: r.outcome === "succeeded" ? "succeeded" : "failed",
                finished_at,
              });
            }
          }
          return rows.length;
        });
      },
    });
  }
}
