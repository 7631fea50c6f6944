/**
 * An `AbortController` that is created only when its signal is first read. Every job gets one
 * (`ctx.signal`, DESIGN.md §2: the handler's stop signal at `job_timeout` and at the shutdown
 * deadline), but most handlers never read it, and creating an `AbortSignal` per job was a
 * measurable share of a busy worker's CPU (docs/performance.md).
 */
export class LazyAbortController {
  private controller: AbortController | undefined;
  private aborted = false;
  private reason: unknown;

  /** The signal; already aborted (with the reason given) when {@link abort} came first. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Aborts the signal with `reason` (its `abort` event fires if it was read). Idempotent. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}
