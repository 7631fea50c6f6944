/**
 * The one start/stop shape every background activity uses (docs/reliability.md, "One start/stop
 * shape for every background loop"): a guard against double start, an `AbortSignal` handed to the
 * service's body so it can check for a stop between units of work, the body's promise kept as the
 * in-flight marker so `stop()` waits for it, and a bounded `stop()` whose bound has a name and sits
 * well inside `shutdownTimeout`.
 *
 * States: `idle` → `running` → `stopping` → `idle` (a stopped service may be started again).
 * - `start()` while `running` is a no-op (it resolves with the first start); `start()` while
 *   `stopping` waits for the stop to finish, then starts afresh.
 * - `stop()` before any start resolves at once; concurrent `stop()` calls share one stop.
 * - `stop()` aborts the signal first (a unit of work that has not begun does not begin), then
 *   waits for the body at most `boundMs` milliseconds and logs when the bound is reached; the
 *   body is then left to finish on its own (a unit blocked inside one database call is only
 *   bounded, never interrupted: a slow restart is better than one that cannot complete).
 */
import { isSoniqError } from "../errors.js";
import type { Logger } from "../observability/logger.js";

/**
 * True when `err` is a `CLOSED` `SoniqError` and `signal` (a service run's stop signal) was
 * already aborted: a call that outlived the stop (one its lane abandoned past the per-call bound,
 * lane.ts, still delivers its result) and then met the closed backend. Nothing will retry it, so
 * services log it at debug level instead of as a failed tick that "will retry".
 */
export function closedAfterStop(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted && isSoniqError(err, "CLOSED");
}

/**
 * Default bound of {@link Service.stop}, in milliseconds: long enough for an ordinary unit of
 * work (one database round trip, one flush) to end, well inside the default 30 s
 * `shutdownTimeout` and the 10 s per-call database bound.
 */
export const SERVICE_STOP_BOUND_MS = 5_000;

/** Where a service is in its life. */
export type ServiceState = "idle" | "running" | "stopping";

/** What every background activity exposes. */
export interface Service {
  /** Short name for logs (`service` field) and stop-bound warnings. */
  readonly name: string;
  /** See {@link ServiceState}. */
  readonly state: ServiceState;
  /** Starts the service; idempotent while running. */
  start(): Promise<void>;
  /**
   * Asks the service to stop and waits for its in-flight unit of work, at most `boundMs`
   * milliseconds (default: the service's own bound, {@link SERVICE_STOP_BOUND_MS} unless set).
   * Never throws.
   */
  stop(boundMs?: number): Promise<void>;
}

/** Options shared by every {@link BaseService}. */
export interface BaseServiceOptions {
  /** Short name for logs. */
  name: string;
  /** Logger; lines carry `service: name`. */
  logger: Logger;
  /** Bound of `stop()` in milliseconds. Default {@link SERVICE_STOP_BOUND_MS}. */
  stopBoundMs?: number;
}

/**
 * Base of every service. A subclass implements {@link BaseService.run}: the body, which runs
 * until its signal is aborted (or returns earlier on its own) and checks `signal.aborted` between
 * units of work. `onStart` (optional) runs before the body and may throw to refuse the start;
 * `onStopped` (optional) runs once the body has ended or the bound was reached.
 */
export abstract class BaseService implements Service {
  readonly name: string;
  protected readonly logger: Logger;
  private readonly stopBoundMs: number;
  private current: ServiceState = "idle";
  private controller: AbortController | undefined;
  private starting: Promise<void> | undefined;
  private body: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;

  constructor(options: BaseServiceOptions) {
    this.name = options.name;
    this.logger = options.logger.child({ service: options.name });
    this.stopBoundMs = options.stopBoundMs ?? SERVICE_STOP_BOUND_MS;
  }

  get state(): ServiceState {
    return this.current;
  }

  /** The signal of the current run; aborted once a stop was asked (undefined when idle). */
  protected get signal(): AbortSignal | undefined {
    return this.controller?.signal;
  }

  /** True when the service is not running (never started, stopping or stopped). */
  get stopRequested(): boolean {
    return this.current !== "running" || this.controller?.signal.aborted === true;
  }

  /** Prepares the service (may throw to refuse the start). Runs before {@link run}. */
  protected onStart(_signal: AbortSignal): Promise<void> | void {}

  /** The body: runs until `signal` is aborted. Errors are logged, never thrown out of the base. */
  protected abstract run(signal: AbortSignal): Promise<void>;

  /** Runs after the body ended (or the stop bound passed): release what `onStart` took. */
  protected onStopped(): Promise<void> | void {}

  start(): Promise<void> {
    if (this.current === "running") return this.starting ?? Promise.resolve();
    if (this.current === "stopping") {
      return (this.stopping ?? Promise.resolve()).then(() => this.start());
    }
    this.current = "running";
    const controller = new AbortController();
    this.controller = controller;
    this.starting = (async () => {
      try {
        await this.onStart(controller.signal);
      } catch (err) {
        this.current = "idle";
        this.controller = undefined;
        throw err;
      }
      if (controller.signal.aborted) return;
      this.body = this.run(controller.signal).catch((err: unknown) => {
        this.logger.error({ err }, `${this.name} stopped by an error`);
      });
    })();
    return this.starting;
  }

  stop(boundMs?: number): Promise<void> {
    if (this.current === "idle") return Promise.resolve();
    if (this.stopping) return this.stopping;
    this.current = "stopping";
    this.controller?.abort();
    const bound = boundMs ?? this.stopBoundMs;
    this.stopping = (async () => {
      await this.starting?.catch(() => undefined);
      const body = this.body;
      if (body) {
        const ended = await raceBound(body, bound);
        if (!ended) {
          this.logger.warn(
            { bound_ms: bound },
            `${this.name} still busy ${bound} ms after stop; not waiting longer`,
          );
        }
      }
      try {
        await this.onStopped();
      } catch (err) {
        this.logger.warn({ err }, `${this.name} failed to release its resources`);
      }
      this.body = undefined;
      this.starting = undefined;
      this.controller = undefined;
      this.stopping = undefined;
      this.current = "idle";
    })();
    return this.stopping;
  }
}

/** Resolves true when `work` settles within `boundMs` milliseconds, false otherwise. */
export async function raceBound(work: Promise<unknown>, boundMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), boundMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Waits `ms` milliseconds or until `signal` aborts, whichever comes first. Resolves true when the
 * full time passed, false when the signal cut it short. Never rejects.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
