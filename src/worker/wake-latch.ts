/**
 * A one-shot wake-up the claim loop sleeps on: resolved by a notification, a freed slot, a stop
 * request, or the poll timer, whichever comes first.
 */
export class WakeLatch {
  private resolve: (() => void) | undefined;
  private pending = false;

  /** Wakes the current (or next) wait. */
  wake(): void {
    if (this.resolve) {
      const r = this.resolve;
      this.resolve = undefined;
      r();
    } else {
      this.pending = true;
    }
  }

  /** Waits up to `ms` milliseconds or until {@link WakeLatch.wake}. */
  wait(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.resolve = undefined;
        resolve();
      }, ms);
      this.resolve = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
