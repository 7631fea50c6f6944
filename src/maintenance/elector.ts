/**
 * The elector: takes and renews the maintenance lease so that one process at a time leads the
 * leader-only services (docs/reliability.md, "Maintenance: small services behind one lease"), and
 * tells its listeners when this process gains or loses the lead.
 *
 * Every `intervalMs` it calls `LeaseStore.leaseTryTake({ name: lease, holder, ttlSeconds })` (the database clock
 * decides expiry). A live leader renews well before its lease expires; a dead leader's lease
 * expires after `ttlSeconds` and another process's elector takes it. When renewing fails (the
 * database does not answer), this process still counts as leader until the lease it last held
 * would have expired by its own clock, then steps down. On stop it steps down and gives the lease
 * up (`LeaseStore.leaseResign`) so another process takes over at its next attempt instead of waiting for
 * the expiry.
 *
 * Options (see {@link ElectorOptions}): `intervalMs` (milliseconds between attempts, required),
 * `ttlSeconds` (seconds, default three intervals), `lease` (default {@link MAINTENANCE_LEASE}).
 *
 * Events: listeners added with {@link Elector.onChange} are called with `true` on gaining the
 * lease and `false` on losing it (also at stop). Logged as "took the maintenance lease" and
 * "lost the maintenance lease".
 */
import type { Backend } from "../backends/contract/index.js";
import {
  BaseService,
  type BaseServiceOptions,
  closedAfterStop,
  sleep,
} from "../lifecycle/service.js";

/** The lease name maintenance is elected under. */
export const MAINTENANCE_LEASE = "maintenance";

/** Options of {@link Elector}. */
export interface ElectorOptions extends Omit<BaseServiceOptions, "name"> {
  /** The lease methods of the backend. */
  backend: Pick<Backend, "leaseTryTake" | "leaseResign">;
  /** Who asks: this worker incarnation's id. */
  holder: string;
  /** Milliseconds between two attempts to take or renew the lease. */
  intervalMs: number;
  /** Seconds the lease lives after each renewal. Default: three intervals. */
  ttlSeconds?: number;
  /** The lease name. Default {@link MAINTENANCE_LEASE}. */
  lease?: string;
  /** Milliseconds since the epoch, for the local expiry estimate. Default `Date.now`. */
  clock?: () => number;
}

/** Called with `true` when this process gains the lease, `false` when it loses it. */
export type LeadershipListener = (leading: boolean) => void;

/** See the module comment. */
export class Elector extends BaseService {
  private readonly backend: Pick<Backend, "leaseTryTake" | "leaseResign">;
  private readonly holder: string;
  private readonly intervalMs: number;
  private readonly ttlSeconds: number;
  private readonly lease: string;
  private readonly clock: () => number;
  private readonly listeners = new Set<LeadershipListener>();
  private leading = false;
  /** Local-clock time (ms) until which the last successful renewal holds the lease. */
  private heldUntil = 0;
  /** True from a `leaseTryTake` call until it is known not to have taken the lease. */
  private mayHold = false;

  constructor(options: ElectorOptions) {
    super({ ...options, name: "elector" });
    this.backend = options.backend;
    this.holder = options.holder;
    this.intervalMs = options.intervalMs;
    this.ttlSeconds = options.ttlSeconds ?? (options.intervalMs * 3) / 1000;
    this.lease = options.lease ?? MAINTENANCE_LEASE;
    this.clock = options.clock ?? Date.now;
  }

  /** True while this process holds the lease (as far as it knows). */
  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Adds a listener of gains and losses of the lease. Listeners run synchronously and must not
   * throw (an error is logged and ignored).
   * @returns The function that removes it.
   */
  onChange(listener: LeadershipListener): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  protected async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await this.attempt(signal);
      if (!(await sleep(this.intervalMs, signal))) break;
    }
  }

  /** One attempt to take or renew the lease. */
  private async attempt(signal: AbortSignal): Promise<void> {
    const askedAt = this.clock();
    this.mayHold = true;
    let held: boolean;
    try {
      held = await this.backend.leaseTryTake({
        name: this.lease,
        holder: this.holder,
        ttlSeconds: this.ttlSeconds,
      });
    } catch (err) {
      if (closedAfterStop(err, signal)) {
        this.logger.debug(
          { err: String(err) },
          "elector tick ended by the closed backend after the stop",
        );
      } else {
        this.logger.warn({ err: String(err) }, "elector tick failed; will retry");
      }
      if (this.leading && this.clock() >= this.heldUntil) this.setLeading(false);
      return;
    }
    this.mayHold = held;
    if (held) this.heldUntil = askedAt + this.ttlSeconds * 1000;
    if (signal.aborted) return; // stepping down is onStopped's
    this.setLeading(held);
  }

  protected override async onStopped(): Promise<void> {
    this.setLeading(false);
    if (!this.mayHold) return;
    this.mayHold = false;
    try {
      await this.backend.leaseResign({ name: this.lease, holder: this.holder });
    } catch (err) {
      this.logger.debug({ err: String(err) }, "could not give the maintenance lease up");
    }
  }

  private setLeading(leading: boolean): void {
    if (leading === this.leading) return;
    this.leading = leading;
    this.logger.info(
      { leader: leading, lease: this.lease },
      leading ? "took the maintenance lease" : "lost the maintenance lease",
    );
    for (const listener of [...this.listeners]) {
      try {
        listener(leading);
      } catch (err) {
        this.logger.error({ err: String(err) }, "a leadership listener threw; ignored");
      }
    }
  }
}
