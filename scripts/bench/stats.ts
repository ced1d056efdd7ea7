/** Small numeric helpers for the benchmark: percentiles, rounding, a monotonic clock. */

/** Milliseconds from a monotonic clock (never goes backwards, unlike Date.now). */
export function nowMs(): number {
  return performance.now();
}

/** The p-th percentile (0..100) by nearest rank; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Rounds to `digits` decimals, keeping NaN as null so the JSON stays valid. */
export function round(value: number, digits = 2): number | null {
  if (!Number.isFinite(value)) return null;
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}

export interface LatencySummary {
  n: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
  meanMs: number | null;
  minMs: number | null;
  maxMs: number | null;
}

export function summarize(samples: readonly number[]): LatencySummary {
  const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
  return {
    n: samples.length,
    p50Ms: round(percentile(samples, 50)),
    p95Ms: round(percentile(samples, 95)),
    p99Ms: round(percentile(samples, 99)),
    meanMs: round(mean),
    minMs: round(Math.min(...samples)),
    maxMs: round(Math.max(...samples)),
  };
}

/** a / b, or null when either side is missing. */
export function ratio(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null || b === 0) return null;
  return round(a / b, 3);
}
