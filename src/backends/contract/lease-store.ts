/**
 * The lease store: named leader leases for maintenance work (`soniq_leases`), timed by the
 * database clock. A dead leader's lease expires and another holder takes over.
 *
 * @internal Part of the backend contract, which is not a stable public API.
 */

/** Params of {@link LeaseStore.leaseTryTake}. */
export interface LeaseTryTakeParams {
  /** Lease name, e.g. `maintenance`. */
  name: string;
  /** Who wants it (a worker incarnation id). */
  holder: string;
  /** Hold it this many **seconds** from now (database clock). */
  ttlSeconds: number;
}

/** Params of {@link LeaseStore.leaseResign}. */
export interface LeaseResignParams {
  /** Lease name. */
  name: string;
  /** The holder giving it up. */
  holder: string;
}

/** The lease store. */
export interface LeaseStore {
  /**
   * Takes or renews lease `name` for `holder` for `ttlSeconds`. True when `holder` holds it
   * now — it was free, expired, or already `holder`'s.
   */
  leaseTryTake(params: LeaseTryTakeParams): Promise<boolean>;
  /** Gives lease `name` up if `holder` holds it; otherwise changes nothing. */
  leaseResign(params: LeaseResignParams): Promise<void>;
}
