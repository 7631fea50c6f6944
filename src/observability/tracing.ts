/**
 * The tracing hook of a Soniq instance: what a tracer (e.g. `otelTracing()` from `soniq/otel`)
 * implements so that the core never imports a tracing library. The producer side wraps each
 * enqueue write (it must run inside the caller's context to find the active span); the consumer
 * side is fed from the event bus (`job_started`, the outcome events, `shutdown_nack`, the drain's).
 */
import type { NewJob } from "../backends/contract/index.js";
import type { EventSubscriber } from "./event-bus.js";
import type { SoniqEventMap } from "./events.js";
import type { Logger } from "./logger.js";

/** See the module comment. */
export interface Tracing {
  /**
   * Wraps one enqueue write of `jobs` (one or many; all validated). It must call `insert` exactly
   * once, with the same jobs in the same order, each possibly given a
   * {@link NewJob.traceContext}, and return (or rethrow) what `insert` does.
   */
  traceEnqueue(
    jobs: readonly NewJob[],
    insert: (jobs: readonly NewJob[]) => Promise<string[]>,
  ): Promise<string[]>;
  /**
   * Subscribes the consumer side to the instance's events; called once by `new Soniq(...)`.
   * @returns The function that unsubscribes.
   */
  attach(events: EventSubscriber<SoniqEventMap>, logger: Logger): () => void;
}
