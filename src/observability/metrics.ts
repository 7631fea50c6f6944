/**
 * The metrics-sink interface (seed 000: `metrics_sink.emit("shutdown_nack", …)`) and the wrapper
 * that guarantees a sink can never strand a job: every call is guarded, errors and rejections are
 * logged and dropped, and nothing waits on a sink while a row is being recorded.
 */
import type { Logger } from "./logger.js";

/**
 * Receives worker events. All methods are optional except `emit`; each may be sync or async.
 * Events: `drain_started`, `force_timeout_path`, `wait_for_thread`, `shutdown_nack`, `job_done`,
 * `job_failed`, `job_dead_lettered`, `job_snoozed`, `job_recovered`, `worker_stopped`. Payloads carry `worker_id`
 * and, for job events, `job_id`, `job_name` and the outcome's details.
 */
export interface MetricsSink {
  /** Called once when a worker starts. */
  start?(): void | Promise<void>;
  /** Called once when a worker has stopped. */
  end?(): void | Promise<void>;
  /** One event. */
  emit(name: string, payload: Record<string, unknown>): void | Promise<void>;
}

/** Guards a {@link MetricsSink}: errors are logged, never thrown. */
export class GuardedMetrics {
  constructor(
    private readonly sink: MetricsSink | undefined,
    private readonly logger: Logger,
  ) {}

  private guard(what: string, call: () => void | Promise<void>): void {
    try {
      const result = call();
      if (result && typeof (result as Promise<void>).then === "function") {
        (result as Promise<void>).catch((err: unknown) => this.failed(what, err));
      }
    } catch (err) {
      this.failed(what, err);
    }
  }

  private failed(what: string, err: unknown): void {
    this.logger.warn({ err: String(err), metrics_call: what }, "metrics sink failed; ignored");
  }

  start(): void {
    const sink = this.sink;
    if (sink?.start) this.guard("start", () => sink.start?.());
  }

  end(): void {
    const sink = this.sink;
    if (sink?.end) this.guard("end", () => sink.end?.());
  }

  emit(name: string, payload: Record<string, unknown>): void {
    const sink = this.sink;
    if (sink) this.guard(name, () => sink.emit(name, payload));
  }
}
