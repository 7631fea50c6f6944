/**
 * A service that runs one tick, waits an interval, and repeats ({@link BaseService}): the stop flag
 * is the run's `AbortSignal`, checked before each tick and passed into it so the tick can check it
 * between its units of work; a tick that throws is logged and the loop goes on (at debug level
 * when a call of the tick was dropped from its lane by the stop, lane.ts, or failed with `CLOSED`
 * after the stop — {@link closedAfterStop}: nothing will retry it, so it is no warning).
 */
import { LaneDroppedError } from "./lane.js";
import { BaseService, type BaseServiceOptions, closedAfterStop, sleep } from "./service.js";

/** Options of {@link PeriodicService}. */
export interface PeriodicServiceOptions extends BaseServiceOptions {
  /** Milliseconds from the end of one tick to the start of the next. */
  intervalMs: number;
  /** One unit of work; check `signal.aborted` between its steps. */
  tick: (signal: AbortSignal) => Promise<void>;
  /** Run the first tick at once instead of after one interval. Default false. */
  immediately?: boolean;
}

/** See the module comment. */
export class PeriodicService extends BaseService {
  private readonly intervalMs: number;
  private readonly tick: (signal: AbortSignal) => Promise<void>;
  private readonly immediately: boolean;
  private inFlight: Promise<void> | undefined;

  constructor(options: PeriodicServiceOptions) {
    super(options);
    this.intervalMs = options.intervalMs;
    this.tick = options.tick;
    this.immediately = options.immediately ?? false;
  }

  /**
   * Runs one tick now (or joins the one in flight) unless the service is stopping or idle; the
   * next scheduled tick still comes one interval after this one ends.
   */
  runNow(): Promise<void> {
    const signal = this.signal;
    if (!signal || signal.aborted) return Promise.resolve();
    return this.runTick(signal);
  }

  private runTick(signal: AbortSignal): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.inFlight = this.tick(signal)
      .catch((err: unknown) => {
        // A call its lane did not start because this service is stopping: not a failure.
        if (err instanceof LaneDroppedError) {
          this.logger.debug(`${this.name} tick cut short by the stop`);
          return;
        }
        if (closedAfterStop(err, signal)) {
          this.logger.debug(
            { err },
            `${this.name} tick ended by the closed backend after the stop`,
          );
          return;
        }
        this.logger.warn({ err }, `${this.name} tick failed; will retry`);
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  protected async run(signal: AbortSignal): Promise<void> {
    let first = true;
    while (!signal.aborted) {
      if (!(first && this.immediately)) {
        const waited = await sleep(this.intervalMs, signal);
        if (!waited) break;
      }
      first = false;
      await this.runTick(signal);
    }
    // A tick started by runNow() during the stop still counts as in flight.
    await this.inFlight;
  }
}
