/**
 * A counting semaphore for the sync-handler pool (`sync_handler_pool_size` permits). A permit is
 * taken after the claim and outside the job timeout; waiting for one can be cancelled (a claimed
 * job still waiting at the shutdown deadline is NACK'd, like an async job).
 */
export class Permits {
  private available: number;
  private readonly waiters: Array<() => void> = [];

  constructor(size: number) {
    this.available = size;
  }

  /** Jobs waiting for a permit. */
  get waiting(): number {
    return this.waiters.length;
  }

  /**
   * Resolves once a permit is held; rejects with `signal.reason` if aborted first.
   */
  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.available > 0) {
      this.available -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(grant);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason);
      };
      this.waiters.push(grant);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Returns a permit (hands it to the next waiter, if any). */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.available += 1;
  }
}
