/**
 * The maintainer: runs the leader-only services while this process holds the maintenance lease.
 * It starts its {@link Elector}, starts every child service when the elector gains the lease and
 * stops them when it loses it; on its own stop it stops the children first and then the elector,
 * which gives the lease up, so a successor never overlaps with this process's last tick.
 *
 * The children are the rescuer, the pruner and the worker reaper, the schedules' scheduler
 * service, and the queue sampler when metrics are on (maintenance.ts assembles them).
 *
 * Transitions are applied one at a time, in order, so a quick gain → loss → gain leaves the
 * children in the state of the last one. A child that fails to start is logged and left stopped
 * until the next gain.
 */
import type { Lane } from "../lifecycle/lane.js";
import { BaseService, type BaseServiceOptions, type Service } from "../lifecycle/service.js";
import type { Elector } from "./elector.js";

/** Options of {@link Maintainer}. */
export interface MaintainerOptions extends Omit<BaseServiceOptions, "name"> {
  /** Decides when this process leads. The maintainer starts and stops it. */
  elector: Elector;
  /** The leader-only services. */
  services: readonly Service[];
  /**
   * The lane the services' calls share (lifecycle/lane.ts): dropped when they stop, so a call
   * queued before the stop never runs after it.
   */
  lane?: Lane;
}

/** See the module comment. */
export class Maintainer extends BaseService {
  private readonly elector: Elector;
  private readonly services: readonly Service[];
  private readonly lane: Lane | undefined;
  /** The chain of leadership transitions, applied in order. */
  private transitions: Promise<void> = Promise.resolve();

  constructor(options: MaintainerOptions) {
    super({ ...options, name: "maintainer" });
    this.elector = options.elector;
    this.services = options.services;
    this.lane = options.lane;
  }

  /** True while the children run (this process leads). */
  isLeader(): boolean {
    return this.elector.isLeader();
  }

  protected async run(signal: AbortSignal): Promise<void> {
    const off = this.elector.onChange((leading) => this.follow(leading, signal));
    try {
      await this.elector.start();
      await untilAborted(signal);
    } finally {
      off();
      this.follow(false, signal);
      await this.transitions;
      await this.elector.stop();
    }
  }

  /** Queues starting (when leading and not stopping) or stopping the children. */
  private follow(leading: boolean, signal: AbortSignal): void {
    this.transitions = this.transitions.then(async () => {
      if (leading && !signal.aborted) {
        for (const service of this.services) {
          await service.start().catch((err: unknown) => {
            this.logger.error({ err: String(err), child: service.name }, "could not start");
          });
        }
      } else {
        const stopping = Promise.all(this.services.map((service) => service.stop()));
        // After the stop signals: the calls the services queued meanwhile are not started.
        this.lane?.drop();
        await stopping;
      }
    });
  }
}

/** Resolves once `signal` is aborted. */
function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true }),
  );
}
