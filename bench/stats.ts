/** Small statistics over samples: quantiles with linear interpolation, median and range. */

/** The `q` quantile (0..1) of `values` (unsorted), interpolating between neighbours. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

/** Median, minimum and maximum of the samples (one per round). */
export function summarize(values: readonly number[]): Summary {
  return {
    median: quantile(values, 0.5),
    min: Math.min(...values),
    max: Math.max(...values),
    n: values.length,
  };
}
