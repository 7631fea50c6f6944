/**
 * An `AbortController` that is created only when its signal is first read. Every job gets one
 * (`ctx.signal`: the handler's stop signal at `job_timeout` and at the shutdown deadline), but most
 * handlers never read it, and creating an `AbortSignal` per job was a measurable share of a busy
 * worker's CPU (docs/performance.md). The same holds for an operator's cancel of a running job
 * ({@link InFlight.cancel}), which the async executor watches with
 * {@link LazyAbortController.onAbort} rather than through a signal.
 */
export class LazyAbortController {
  private controller: AbortController | undefined;
  private wasAborted = false;
  private reason: unknown;
  /** One listener as itself (the usual case: no array per job), more as an array. */
  private listeners: (() => void) | (() => void)[] | undefined;

  /** True once {@link abort} was called (reading it creates no signal). */
  get aborted(): boolean {
    return this.wasAborted;
  }

  /**
   * Calls `listener` once, synchronously, when {@link abort} is called (not if it already was:
   * check {@link aborted} first). Creates no signal. Remove it with {@link offAbort}.
   */
  onAbort(listener: () => void): void {
    const current = this.listeners;
    if (current === undefined) this.listeners = listener;
    else if (typeof current === "function") this.listeners = [current, listener];
    else current.push(listener);
  }

  /** Removes a listener added by {@link onAbort} (once per time it was added; idempotent). */
  offAbort(listener: () => void): void {
    const current = this.listeners;
    if (current === listener) this.listeners = undefined;
    else if (Array.isArray(current)) {
      const at = current.indexOf(listener);
      if (at >= 0) current.splice(at, 1);
    }
  }

  /** The signal; already aborted (with the reason given) when {@link abort} came first. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.wasAborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /**
   * Aborts the signal with `reason` (its `abort` event fires if it was read) and calls the
   * {@link onAbort} listeners. Idempotent.
   */
  abort(reason?: unknown): void {
    if (this.wasAborted) return;
    this.wasAborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    this.controller?.abort(reason);
    if (typeof listeners === "function") listeners();
    else if (listeners) for (const listener of listeners) listener();
  }
}
