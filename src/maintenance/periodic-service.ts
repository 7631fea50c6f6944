/**
 * One start/stop shape for every background loop (seed 004): a stop flag checked before each
 * tick, an in-flight flag so `stop()` can wait for a running tick, and a bounded wait. A tick that
 * throws is logged and the loop goes on.
 */
import type { Logger } from "../observability/logger.js";

export class PeriodicService {
  private timer: NodeJS.Timeout | undefined;
  private stopRequested = false;
  private running: Promise<void> | undefined;

  /**
   * @param name - for logs.
   * @param intervalMs - milliseconds between the end of one tick and the start of the next.
   * @param tick - one unit of work.
   */
  constructor(
    private readonly name: string,
    private readonly intervalMs: number,
    private readonly tick: () => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Starts ticking; the first tick runs after one interval (or at once with `immediately`). */
  start(immediately = false): void {
    this.stopRequested = false;
    this.schedule(immediately ? 0 : this.intervalMs);
  }

  /** Runs one tick now unless one is running or the service is stopping. */
  runNow(): Promise<void> {
    if (this.stopRequested) return Promise.resolve();
    if (this.running) return this.running;
    this.running = this.tick()
      .catch((err: unknown) => {
        this.logger.warn(
          { service: this.name, err: String(err) },
          `${this.name} tick failed; will retry`,
        );
      })
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(async () => {
      if (this.stopRequested) return;
      await this.runNow();
      if (!this.stopRequested) this.schedule(this.intervalMs);
    }, ms);
  }

  /**
   * Stops ticking. Waits for a tick in flight, at most `boundMs` milliseconds (the bound keeps a
   * stuck tick from holding up a shutdown).
   */
  async stop(boundMs: number): Promise<void> {
    this.stopRequested = true;
    clearTimeout(this.timer);
    const inFlight = this.running;
    if (!inFlight) return;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      inFlight,
      new Promise<void>((resolve) => {
        bound = setTimeout(() => {
          this.logger.warn(
            { service: this.name, bound_ms: boundMs },
            `${this.name} tick still running at stop; not waiting longer`,
          );
          resolve();
        }, boundMs);
      }),
    ]);
    clearTimeout(bound);
  }
}
