/**
 * The shapes `Soniq`'s constructor and its read methods take and return: the instance options
 * (every setting plus wiring), an `enqueueMany` item, and stored jobs and dead letters with their
 * JSON parsed.
 */
import type { Backend, DeadLetterRow, JobRow } from "./backends/contract/index.js";
import type { EnqueueOptions } from "./jobs/enqueue-options.js";
import type { Logger } from "./observability/logger.js";
import type { MetricsSink } from "./observability/metrics.js";
import type { Tracing } from "./observability/tracing.js";
import type { SoniqSettingsInput } from "./settings.js";

/**
 * Options of `new Soniq(...)`: every setting (declared in `SETTINGS`, src/settings.ts, whose
 * generated comments editors show on each field; see {@link SoniqSettingsInput}) plus wiring.
 */
export interface SoniqOptions extends SoniqSettingsInput {
  /** A pino logger to use instead of Soniq's own (JSON lines on standard error). */
  logger?: Logger;
  /**
   * Receives Soniq's events (`shutdown_nack`, `job_done`, …; see docs/events.md) as one
   * subscriber of {@link Soniq.events}; its errors never strand a job.
   */
  metrics?: MetricsSink;
  /**
   * Traces enqueues and attempts (e.g. `otelTracing()` from `soniq/otel`): a producer span at
   * enqueue whose context is stored with the job, a consumer span per attempt.
   */
  tracing?: Tracing;
  /** Where `SONIQ_*` variables are read from. Default `process.env`. */
  env?: Record<string, string | undefined>;
  /**
   * A backend instance to use instead of the one `databaseUrl` names — for tests (e.g. a
   * `MemoryBackend`).
   * @internal The backend interface is not a stable public API and may change in any release
   * (docs/backends.md); do not implement a custom store against it.
   */
  backend?: Backend;
}

/** One item of {@link Soniq.enqueueMany}. */
export interface EnqueueManyItem {
  name: string;
  args: unknown;
  options?: Omit<EnqueueOptions, "connection">;
}

/** A stored job with its arguments and result parsed from JSON. */
export interface Job extends Omit<JobRow, "args" | "result"> {
  args: unknown;
  result: unknown;
}

/** A dead-letter entry with its arguments parsed from JSON. */
export interface DeadLetterJob extends Omit<DeadLetterRow, "args"> {
  args: unknown;
}
