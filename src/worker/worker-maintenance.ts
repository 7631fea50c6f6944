/**
 * How a worker takes part in maintenance (DESIGN.md §3.3): recovery once at start-up, then the
 * leader-elected maintenance tick on the heartbeat's clock until the drain starts, when it stops
 * and hands the lease on. The only place the worker touches `src/maintenance/`.
 */
import type { Backend } from "../backends/backend.js";
import { Maintenance, recoverOnce } from "../maintenance/maintenance.js";
import { PeriodicService } from "../maintenance/periodic-service.js";
import type { Logger } from "../observability/logger.js";
import type { GuardedMetrics } from "../observability/metrics.js";
import type { SoniqSettings } from "../settings.js";
import { errorText } from "./error-text.js";

/** Bound of the maintenance tick's stop at drain start, in milliseconds. */
const MAINTENANCE_STOP_BOUND_MS = 2000;

/** Options of {@link WorkerMaintenance}. */
export interface WorkerMaintenanceOptions {
  backend: Backend;
  workerId: string;
  settings: SoniqSettings;
  logger: Logger;
  metrics: GuardedMetrics;
  /** Seconds this worker has heartbeated without a break. */
  healthySeconds(): number;
  /** Clock in milliseconds since the epoch. */
  now(): number;
}

/** See the module comment. */
export class WorkerMaintenance {
  private readonly maintainer: Maintenance;
  private readonly ticker: PeriodicService;

  constructor(private readonly options: WorkerMaintenanceOptions) {
    const { backend, workerId, settings, logger, metrics } = options;
    this.maintainer = new Maintenance(backend, workerId, settings, logger, metrics, options.now);
    const maintainer = this.maintainer;
    this.ticker = new PeriodicService(
      "maintenance",
      settings.heartbeatInterval * 1000,
      () => maintainer.tick(options.healthySeconds()),
      logger,
    );
  }

  /** Starts the maintenance tick (first after one heartbeat interval). */
  start(): void {
    this.ticker.start();
  }

  /**
   * Recovery at start-up (one of its clocks): jobs of stopped or unknown owners. Owners with a
   * stale heartbeat wait for the maintenance tick, once this worker has itself heartbeated for
   * `heartbeatTimeout` (after an outage every heartbeat is stale, live workers' too). Never throws.
   */
  async recoverAtStart(): Promise<void> {
    const { backend, settings, logger, metrics } = this.options;
    await recoverOnce(backend, settings, logger, metrics, false).catch((err: unknown) => {
      logger.warn(
        { err: errorText(err, 300) },
        "start-up recovery failed; the maintenance loop will retry",
      );
    });
  }

  /** At drain start: stop the tick (bounded) and hand the lease on. Never throws. */
  async stop(): Promise<void> {
    await this.ticker.stop(MAINTENANCE_STOP_BOUND_MS);
    await this.maintainer.resign().catch(() => undefined);
  }
}
