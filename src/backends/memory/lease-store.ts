/**
 * The memory backend's lease store (`soniq_leases` as a map).
 */
import type { LeaseResignParams, LeaseStore, LeaseTryTakeParams } from "../contract/index.js";
import type { MemoryState } from "./state.js";

/** {@link LeaseStore} over {@link MemoryState}. */
export class MemoryLeaseStore implements LeaseStore {
  /** @param state The backend's shared state. */
  constructor(private readonly state: MemoryState) {}

  /** See {@link LeaseStore.leaseTryTake}. */
  async leaseTryTake({ name, holder, ttlSeconds }: LeaseTryTakeParams): Promise<boolean> {
    this.state.check();
    const now = this.state.clock();
    const lease = this.state.leases.get(name);
    if (lease && lease.holder !== holder && lease.expiresAt >= now) return false;
    this.state.leases.set(name, { holder, expiresAt: now + ttlSeconds * 1000 });
    return true;
  }

  /** See {@link LeaseStore.leaseResign}. */
  async leaseResign({ name, holder }: LeaseResignParams): Promise<void> {
    this.state.check();
    if (this.state.leases.get(name)?.holder === holder) this.state.leases.delete(name);
  }
}
