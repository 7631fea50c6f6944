/**
 * `soniq/otel`: OpenTelemetry traces for Soniq's enqueues and attempts, on `@opentelemetry/api`
 * (an optional peer dependency). See docs/tracing.md.
 */
export {
  formatTraceContext,
  type OtelTracingOptions,
  otelTracing,
  type Propagation,
  parseTraceContext,
} from "./tracing.js";
