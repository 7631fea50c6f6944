/** What a workload is: metrics it produces and one measurement of one library. */
import type { AdapterFactory } from "../adapters/types.js";
import type { BenchConfig } from "../config.js";

export interface MetricSpec {
  /** Stable key (also in the JSON output). */
  key: string;
  /** Row label in the table. */
  label: string;
  unit: string;
  better: "higher" | "lower";
  /**
   * Set for percentiles: the table's central value is this quantile of the raw values of all
   * rounds pooled (Sample.raw), the range the spread of the per-round values.
   */
  pooledQuantile?: number;
  /** The cell also gives the largest raw value of all rounds (`max …`): timed reads. */
  showMax?: boolean;
}

/** One value of one metric from one round. `capped`: a time box cut the measurement short. */
export interface Sample {
  value: number;
  capped?: boolean;
  note?: string;
  /** The individual observations behind `value` (e.g. latency samples of the round). */
  raw?: number[];
}

export interface WorkloadContext {
  config: BenchConfig;
  /** Progress line on standard error. */
  log(message: string): void;
}

export interface Workload {
  id: string;
  /**
   * A heading when the workload's rows get a table of their own below the main one (history);
   * absent: its rows are in the main table.
   */
  section?(config: BenchConfig): string;
  /** In how many rounds (the first ones) it runs; absent: every round. */
  rounds?(config: BenchConfig): number;
  metrics(config: BenchConfig): MetricSpec[];
  /** Measures one library once; returns a sample per metric key it could measure. */
  run(factory: AdapterFactory, ctx: WorkloadContext): Promise<Record<string, Sample>>;
}
