/**
 * The metrics-sink interface (docs/events.md, "Metrics sink mapping"; a NACK at the shutdown
 * deadline reaches it as `emit("shutdown_nack", …)`) and the adapter that makes a sink one
 * subscriber of the event bus: every call is guarded, errors and rejections are logged and dropped,
 * and nothing waits on a sink while a row is being recorded.
 */
import type { EventBus, Unsubscribe } from "./event-bus.js";
import type { SoniqEventMap } from "./events.js";
import type { Logger } from "./logger.js";

/**
 * Receives Soniq's events (the catalogue: `SoniqEventMap`, docs/events.md). All methods are
 * optional except `emit`; each may be sync or async and is never awaited.
 */
export interface MetricsSink {
  /** Called when a worker starts (at its `worker_started` event, which `emit` does not get). */
  start?(): void | Promise<void>;
  /** Called when a worker has stopped (right after its `worker_stopped` event). */
  end?(): void | Promise<void>;
  /** One event: its catalogue name and payload (snake_case fields, e.g. `worker_id`, `job_id`). */
  emit(name: string, payload: Record<string, unknown>): void | Promise<void>;
}

/**
 * Subscribes `sink` to `bus`: `worker_started` calls `start()`, every other event calls
 * `emit(name, payload)`, and `worker_stopped` is followed by `end()`. A sink that throws or
 * rejects is logged (warn, `metrics_call`) and ignored. Returns the unsubscribe function.
 */
export function subscribeMetricsSink(
  bus: EventBus<SoniqEventMap>,
  sink: MetricsSink,
  logger: Logger,
): Unsubscribe {
  const guard = (what: string, call: () => void | Promise<void>): void => {
    try {
      const result = call();
      if (result && typeof (result as Promise<void>).then === "function") {
        (result as Promise<void>).catch((err: unknown) => failed(what, err));
      }
    } catch (err) {
      failed(what, err);
    }
  };
  const failed = (what: string, err: unknown): void => {
    let text: string;
    try {
      text = String(err);
    } catch {
      text = `non-Error thrown (${typeof err})`;
    }
    logger.warn({ err: text, metrics_call: what }, "metrics sink failed; ignored");
  };
  return bus.onAny((name, payload) => {
    if (name === "worker_started") {
      if (sink.start) guard("start", () => sink.start?.());
      return;
    }
    guard(name, () => sink.emit(name, payload));
    if (name === "worker_stopped" && sink.end) guard("end", () => sink.end?.());
  });
}
