/**
 * Assembles one worker's maintenance (docs/reliability.md, "Maintenance: small services behind one
 * lease"): an elector on the maintenance lease and a maintainer that runs the rescuer, the pruner,
 * the worker reaper, the waiting watch (jobs no live worker can run) and the flow-ends reporter
 * (flows and batches that finished) while this worker leads. The rescuer is also handed back for the worker's
 * start-up pass, one of recovery's other clocks (the third is `soniq recover`).
 */
import type { Backend } from "../backends/contract/index.js";
import { Lane, laned } from "../lifecycle/lane.js";
import type { Service } from "../lifecycle/service.js";
import type { EventBus } from "../observability/event-bus.js";
import type { SoniqEventMap } from "../observability/events.js";
import type { Logger } from "../observability/logger.js";
import { Elector } from "./elector.js";
import { FlowEnds } from "./flow-ends.js";
import { Maintainer } from "./maintainer.js";
import { Pruner } from "./pruner.js";
import { QueueSampler } from "./queue-sampler.js";
import { Rescuer } from "./rescuer.js";
import { WaitingWatch } from "./waiting-watch.js";
import { WorkerReaper } from "./worker-reaper.js";

/** Settings maintenance needs, in seconds except `maxInterruptions` (a count). */
export interface MaintenanceSettings {
  /** Seconds between heartbeats: the elector's and the rescuer's interval. */
  heartbeatInterval: number;
  /** Seconds without a heartbeat after which a worker is not live. */
  heartbeatTimeout: number;
  /** Seconds a done or cancelled row is kept (a row recovery finalises `cancelled` too). */
  resultRetention?: number;
  /**
   * The longest result retention of the jobs (instance and job definitions), in seconds: the
   * pruner keeps the finished-jobs partitions (PostgreSQL) made that far ahead. Default:
   * `resultRetention`, else 7 days.
   */
  longestResultRetention?: number;
  /** Seconds a dead letter is kept; 0 for ever. Default 30 days. */
  deadLetterRetention?: number;
  /** Seconds a timeline event is kept; 0 for ever. Default 30 days. */
  jobEventRetention?: number;
  /** Crash recoveries a job may have before the next sends it to the DLQ. */
  maxInterruptions: number;
  /** Seconds between queue samples (`queue_metrics`); only with `events`. */
  metricsInterval?: number;
}

/** What {@link createMaintenance} needs. */
export interface MaintenanceDeps {
  backend: Backend;
  /** This worker incarnation's id: the lease holder. */
  workerId: string;
  settings: MaintenanceSettings;
  logger: Logger;
  /** The instance's event bus (`job_recovered`, `job_dead_lettered`). */
  events?: EventBus<SoniqEventMap>;
  /** Seconds this worker's heartbeats have succeeded without a break (see `Rescuer`). */
  healthyForSeconds: () => number;
  /** Milliseconds since the epoch. Default `Date.now`. */
  clock?: () => number;
  /** More leader-only services, started after the built-in ones (the schedules' scheduler). */
  leaderServices?: readonly Service[];
  /**
   * The lane the built-in leader-only services' calls run in, one at a time (lifecycle/lane.ts).
   * Default: a lane of their own, each call bounded by {@link laneCallBoundMs} (an overrun is
   * logged at `warn`).
   */
  lane?: Lane;
}

/**
 * The bound of one call in the maintenance lane, in milliseconds (lifecycle/lane.ts,
 * `callBoundMs`): one rescuer interval (`heartbeatInterval`), so a stuck maintenance statement
 * delays the rescuer's next one by at most about one more interval; at least 1 s, so that a
 * statement that is merely slow (a prune batch) does not put a second one in flight.
 * @param heartbeatIntervalSeconds `heartbeatInterval`, in seconds.
 */
export function laneCallBoundMs(heartbeatIntervalSeconds: number): number {
  return Math.max(1_000, heartbeatIntervalSeconds * 1_000);
}

/** One worker's maintenance: start and stop `service`; call `rescuer.runOnce()` at start-up. */
export interface Maintenance {
  /** The maintainer (owns the elector and the leader-only services). */
  service: Maintainer;
  /** The elector, for `isLeader()` and leadership listeners. */
  elector: Elector;
  /** The rescuer, for the start-up pass. */
  rescuer: Rescuer;
  /** Seconds the maintenance lease lives after each renewal (three heartbeat intervals). */
  leaseSeconds: number;
}

/**
 * Builds the maintenance services of one worker. The elector renews the lease and the rescuer
 * passes every `heartbeatInterval` (so a dead worker's rows are requeued within
 * `heartbeatTimeout + heartbeatInterval`); the waiting watch and the flow-ends reporter tick every
 * `heartbeatInterval` too;
 * the lease lives three heartbeat intervals; the pruner
 * and the worker reaper tick every minute; with `events` and `metricsInterval`, the queue sampler
 * samples every `metricsInterval` seconds. These built-in services (not the elector, not
 * `leaderServices`) call the backend through one {@link Lane} (`deps.lane`): one statement at a
 * time, in the order asked, so a call waits at most for one call of each other service, and for
 * none longer than {@link laneCallBoundMs} (past it the lane starts the next call beside it).
 * Nothing starts until `service.start()`.
 */
export function createMaintenance(deps: MaintenanceDeps): Maintenance {
  const { logger, settings } = deps;
  // The leader-only services' statements go one at a time (lifecycle/lane.ts): a tick adds one
  // connection's worth of work to the pool, not one per service. The elector and
  // `leaderServices` (the schedules' scheduler) stay out of the lane: a lease renewal or an
  // occurrence due now must not wait behind a slow prune.
  // A call stuck past one rescuer interval (a statement waiting on a lock) stops holding up the
  // rescuer's next call: the lane moves on beside it (lifecycle/lane.ts, `callBoundMs`).
  const lane =
    deps.lane ??
    new Lane({
      callBoundMs: laneCallBoundMs(settings.heartbeatInterval),
      onOverrun: (call, boundMs) =>
        logger.warn(
          { call, bound_seconds: boundMs / 1000 },
          "a maintenance call ran past its bound; the next maintenance call starts beside it",
        ),
    });
  const backend = laned(deps.backend, lane);
  const intervalMs = settings.heartbeatInterval * 1000;
  const leaseSeconds = settings.heartbeatInterval * 3;
  const elector = new Elector({
    backend: deps.backend,
    holder: deps.workerId,
    logger,
    intervalMs,
    ttlSeconds: leaseSeconds,
    ...(deps.clock ? { clock: deps.clock } : {}),
  });
  const rescuer = new Rescuer({
    backend,
    logger,
    intervalMs,
    heartbeatTimeoutSeconds: settings.heartbeatTimeout,
    maxInterruptions: settings.maxInterruptions,
    ...(settings.resultRetention === undefined
      ? {}
      : { cancelledRetentionSeconds: settings.resultRetention }),
    healthyForSeconds: deps.healthyForSeconds,
    ...(deps.events ? { events: deps.events } : {}),
    // This worker is running its own rows: never recover them, however late its heartbeat.
    liveWorkerId: deps.workerId,
  });
  const service = new Maintainer({
    logger,
    elector,
    lane,
    services: [
      rescuer,
      new Pruner({
        backend,
        logger,
        ...((settings.longestResultRetention ?? settings.resultRetention) === undefined
          ? {}
          : { retentionSeconds: settings.longestResultRetention ?? settings.resultRetention }),
        ...(settings.deadLetterRetention === undefined
          ? {}
          : { deadLetterRetentionSeconds: settings.deadLetterRetention }),
        ...(settings.jobEventRetention === undefined
          ? {}
          : { jobEventRetentionSeconds: settings.jobEventRetention }),
      }),
      new WorkerReaper({ backend, logger }),
      new WaitingWatch({
        backend,
        logger,
        workerId: deps.workerId,
        heartbeatTimeoutSeconds: settings.heartbeatTimeout,
        intervalMs,
        ...(deps.events ? { events: deps.events } : {}),
        ...(deps.clock ? { clock: deps.clock } : {}),
      }),
      new FlowEnds({
        backend,
        logger,
        workerId: deps.workerId,
        intervalMs,
        ...(deps.events ? { events: deps.events } : {}),
      }),
      ...(deps.leaderServices ?? []),
      ...(deps.events && settings.metricsInterval !== undefined
        ? [
            new QueueSampler({
              backend,
              logger,
              workerId: deps.workerId,
              events: deps.events,
              intervalMs: settings.metricsInterval * 1000,
            }),
          ]
        : []),
    ],
  });
  return { service, elector, rescuer, leaseSeconds };
}
