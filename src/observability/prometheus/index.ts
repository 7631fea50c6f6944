/**
 * `soniq/prometheus`: Soniq's metrics for Prometheus, built with `prom-client` from the instance's
 * events (docs/metrics.md), and the HTTP handler that serves them with the health probes.
 */
export {
  DRAIN_BUCKETS,
  DURATION_BUCKETS,
  type PrometheusMetrics,
  type PrometheusOptions,
  type PrometheusSource,
  prometheusMetrics,
  UNKNOWN_JOB,
  WAIT_BUCKETS,
} from "./exporter.js";
