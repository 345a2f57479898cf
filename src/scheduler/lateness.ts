/**
 * Lateness of runs (actual start minus due time) as a fixed-bucket histogram: constant memory
 * however many runs, cheap to publish as metrics. Percentiles are bucket upper bounds.
 */
export const LATENESS_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000] as const;

export interface LatenessSummary {
  runs: number;
  skipped: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** cumulative counts per upper bound (Prometheus style); the last, Infinity, equals runs */
  buckets: { le: number; count: number }[];
  sum_ms: number;
}

export class LatenessHistogram {
  private counts = new Array<number>(LATENESS_BUCKETS_MS.length + 1).fill(0);
  private runs = 0;
  private skipped = 0;
  private max = 0;
  private sum = 0;

  observe(latenessMs: number): void {
    const v = Math.max(0, latenessMs);
    this.counts[bucketOf(v)]!++;
    this.runs++;
    this.sum += v;
    if (v > this.max) this.max = v;
  }

  skip(): void {
    this.skipped++;
  }

  summary(): LatenessSummary {
    let cum = 0;
    const buckets = this.counts.map((c, i) => ({ le: i < LATENESS_BUCKETS_MS.length ? LATENESS_BUCKETS_MS[i]! : Infinity, count: (cum += c) }));
    return { runs: this.runs, skipped: this.skipped, p50_ms: this.quantile(0.5), p99_ms: this.quantile(0.99), max_ms: this.max, buckets, sum_ms: this.sum };
  }

  private quantile(q: number): number {
    return bucketQuantile(this.counts, this.runs, this.max, q);
  }
}

/** The index of the bucket a lateness falls in (the last one is the overflow bucket). */
export function bucketOf(latenessMs: number): number {
  let i = 0;
  while (i < LATENESS_BUCKETS_MS.length && latenessMs > LATENESS_BUCKETS_MS[i]!) i++;
  return i;
}

/** Quantile `q` of per-bucket counts, as the holding bucket's upper bound (at most `max`, the largest value seen). */
export function bucketQuantile(counts: readonly number[], runs: number, max: number, q: number): number {
  if (runs === 0) return 0;
  const rank = Math.ceil(q * runs);
  let cum = 0;
  for (let i = 0; i < counts.length; i++) {
    cum += counts[i]!;
    // the overflow bucket has no upper bound: report the largest value seen
    if (cum >= rank) return i < LATENESS_BUCKETS_MS.length ? Math.min(LATENESS_BUCKETS_MS[i]!, max) : max;
  }
  return max;
}
