/**
 * The queue sampler: a leader-only maintenance service that reads per-queue counts and the oldest
 * claimable job's age (`JobStore.jobQueueMetrics`, one grouped read), the due jobs flow-control
 * limits hold back (`AdminStore.keyFlowList`, one grouped read of the keyed rows), how workers
 * ended (`WorkerStore.workerExitCounts`) and how many flows and batches finished
 * (`FlowStore.flowEndCounts`) every `intervalMs` and emits them as one `queue_metrics` event. Run by the maintainer while this process holds the maintenance
 * lease, so N workers do not issue N count queries; it reads nothing while no one listens to
 * `queue_metrics` (e.g. no Prometheus exporter). A failed read emits nothing: an exporter then
 * lets the series go stale rather than report zeros.
 *
 * Options (see {@link QueueSamplerOptions}): `intervalMs` (milliseconds), `workerId`, `events`.
 * Events: `queue_metrics` (`worker_id`, `sampled_at`, `queues`, `worker_exits`,
 * `flows_finished`).
 */
import { queueFlows } from "../admin/key-flow.js";
import type { AdminStore, Backend } from "../backends/contract/index.js";
import { PeriodicService } from "../lifecycle/periodic-service.js";
import type { BaseServiceOptions } from "../lifecycle/service.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";

/** Options of {@link QueueSampler}. */
export interface QueueSamplerOptions extends Omit<BaseServiceOptions, "name"> {
  /** The read it needs. */
  backend: Pick<Backend, "jobQueueMetrics" | "workerExitCounts"> & {
    flows: Pick<Backend["flows"], "flowEndCounts">;
    submissions: Pick<Backend["submissions"], "submissionCountsByQueue">;
    admin: Pick<AdminStore, "keyFlowList">;
  };
  /** The sampling worker (`worker_id` of the event). */
  workerId: string;
  /** Where `queue_metrics` goes. */
  events: EventBus<SoniqEventMap>;
  /** Milliseconds between samples (`metricsInterval` × 1000). */
  intervalMs: number;
}

/** See the module comment. */
export class QueueSampler extends PeriodicService {
  constructor(options: QueueSamplerOptions) {
    super({
      ...options,
      name: "queue-sampler",
      immediately: true,
      tick: async (signal) => {
        if (!options.events.hasListeners("queue_metrics")) return;
        const metrics = await options.backend.jobQueueMetrics();
        const exits = await options.backend.workerExitCounts();
        const flowEnds = await options.backend.flows.flowEndCounts();
        // Remote rows apart from processing (admin/remote-split.ts), per queue.
        const remote = await options.backend.submissions.submissionCountsByQueue();
        const held = (queue: string, phase: "submitting" | "accepted" | "frozen") =>
          remote.find((r) => r.queue === queue && r.phase === phase)?.count ?? 0;
        // What flow-control limits hold back, computed on read (admin/key-flow.ts).
        const flows = queueFlows(await options.backend.admin.keyFlowList({ queue: null }), 0);
        const flowOf = (queue: string) => flows.find((f) => f.queue === queue);
        if (signal.aborted) return; // the lead may be gone: a sample from a non-leader is not sent
        options.events.emit("queue_metrics", {
          worker_id: options.workerId,
          sampled_at: new Date().toISOString(),
          queues: metrics.map((m) => ({
            queue: m.queue,
            queued: m.queued,
            processing: Math.max(
              0,
              m.processing -
                held(m.queue, "submitting") -
                held(m.queue, "accepted") -
                held(m.queue, "frozen"),
            ),
            remote_submitting: held(m.queue, "submitting"),
            remote_accepted: held(m.queue, "accepted"),
            remote_frozen: held(m.queue, "frozen"),
            done: m.done,
            cancelled: m.cancelled,
            dead_letter: m.deadLetter,
            oldest_claimable_age_ms: Math.round(m.oldestClaimableAgeSeconds * 1000),
            held_concurrency: flowOf(m.queue)?.heldByConcurrency ?? 0,
            held_rate: flowOf(m.queue)?.heldByRate ?? 0,
          })),
          worker_exits: exits.map((e) => ({
            exit_reason: e.exitReason,
            exits: e.exits,
            last_at: e.lastAt.toISOString(),
          })),
          flows_finished: flowEnds.map((f) => ({ kind: f.kind, outcome: f.outcome, count: f.n })),
        });
      },
    });
  }
}
