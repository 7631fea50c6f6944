/** Soniq settings shared by the in-process adapter and the CLI worker module (no heavy imports). */
import type { SoniqOptions } from "soniq";

/** PostgreSQL schema of the Soniq measurements. */
export const SONIQ_SCHEMA = "bench_soniq";
/** PostgreSQL schema of the baseline's measurements (`--baseline`). */
export const SONIQ_BASELINE_SCHEMA = "bench_soniq_baseline";
/** PostgreSQL schema of the measurements with the prefetch window off (`soniq-pg-prefetch0`). */
export const SONIQ_NO_PREFETCH_SCHEMA = "bench_soniq_prefetch0";
/** PostgreSQL schema of the measurements with `resultRetention: 0` (`soniq-pg-retention0`). */
export const SONIQ_RETENTION0_SCHEMA = "bench_soniq_retention0";
/** The one job every Soniq measurement enqueues. */
export const SONIQ_JOB = "bench.task";
/** The `flow` workload's job with a per-key concurrency limit. */
export const SONIQ_KEYED_JOB = "bench.keyed";

/**
 * Instance options: the documented defaults except `logLevel: "warn"`, so no line is written per
 * job (the default `info` logs every completion; the peers run without per-job logs too).
 * `logLevel` is only changed by the profiling script, to measure what per-job logging costs.
 * `prefetch` is given only by the `…-prefetch0` variants (0: the window off, to show what it buys);
 * `resultRetention` only by `soniq-pg-retention0` (0: finished jobs are not kept).
 */
export function soniqOptions(
  databaseUrl: string,
  logLevel = "warn",
  schema = SONIQ_SCHEMA,
  prefetch?: number,
  resultRetention?: number,
): SoniqOptions {
  // The level is validated by Soniq itself (an unknown one is an INVALID_OPTION error).
  return {
    databaseUrl,
    schema,
    logLevel: logLevel as SoniqOptions["logLevel"],
    ...(prefetch === undefined ? {} : { prefetch }),
    ...(resultRetention === undefined ? {} : { resultRetention }),
  };
}
