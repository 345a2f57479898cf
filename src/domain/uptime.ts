/**
 * Uptime maths: rollup buckets, latency percentiles and uptime ratios. Pure, so the store computes
 * buckets and the status pages read figures by the same rules.
 */
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export type Granularity = "h" | "d";

/** Start of the UTC hour / day holding `t`. Days are UTC days, the same for every viewer. */
export function bucketStart(t: number, g: Granularity): number {
  const size = g === "h" ? HOUR_MS : DAY_MS;
  return Math.floor(t / size) * size;
}

export function bucketSize(g: Granularity): number {
  return g === "h" ? HOUR_MS : DAY_MS;
}

/** Nearest-rank percentile of an ascending list (p in 0..100); null for an empty list. */
export function percentile(sortedAsc: readonly number[], p: number): number | null {
  if (sortedAsc.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sortedAsc.length));
  return sortedAsc[Math.min(rank, sortedAsc.length) - 1]!;
}

export interface CheckSample {
  status: string;
  latency_ms: number | null;
}

/** One rollup bucket's figures (mirrors check_rollups). */
export interface BucketSummary {
  up_count: number;
  degraded_count: number;
  down_count: number;
  latency_count: number;
  latency_sum: number;
  latency_min: number | null;
  latency_max: number | null;
  latency_p50: number | null;
  latency_p95: number | null;
  latency_p99: number | null;
}

/** Summarises raw checks into one bucket. Latency counts every check that measured one. */
export function summarize(samples: readonly CheckSample[]): BucketSummary {
  let up = 0;
  let degraded = 0;
  let down = 0;
  const latencies: number[] = [];
  for (const s of samples) {
    if (s.status === "up") up++;
    else if (s.status === "degraded") degraded++;
    else if (s.status === "down") down++;
    if (s.latency_ms !== null) latencies.push(s.latency_ms);
  }
  latencies.sort((a, b) => a - b);
  return {
    up_count: up,
    degraded_count: degraded,
    down_count: down,
    latency_count: latencies.length,
    latency_sum: latencies.reduce((a, b) => a + b, 0),
    latency_min: latencies.length ? latencies[0]! : null,
    latency_max: latencies.length ? latencies[latencies.length - 1]! : null,
    latency_p50: percentile(latencies, 50),
    latency_p95: percentile(latencies, 95),
    latency_p99: percentile(latencies, 99),
  };
}

export interface UptimeCounts {
  up: number;
  degraded: number;
  down: number;
}

export interface Uptime extends UptimeCounts {
  total: number;
  /** share of checks that were not down ((up + degraded) / total); null with no checks */
  uptime: number | null;
}

/** A degraded check still answered, so it counts as available; only down counts against uptime. */
export function uptimeOf(c: UptimeCounts): Uptime {
  const total = c.up + c.degraded + c.down;
  return { ...c, total, uptime: total === 0 ? null : (c.up + c.degraded) / total };
}

export interface RangePiece {
  from: number;
  to: number;
  source: "d" | "h" | "raw";
}

/**
 * Splits [from, to) into the coarsest pieces available: whole UTC days before `dailyUntil` from
 * daily rollups, whole hours before `hourlyUntil` from hourly rollups, the rest (partial hours at
 * the edges, the hours not rolled up yet) from raw checks.
 */
export function splitRange(from: number, to: number, hourlyUntil: number, dailyUntil: number): RangePiece[] {
  const out: RangePiece[] = [];
  const push = (p: RangePiece) => {
    if (p.to <= p.from) return;
    const last = out[out.length - 1];
    if (last && last.source === p.source && last.to === p.from) last.to = p.to;
    else out.push(p);
  };
  let t = from;
  for (let guard = 0; t < to && guard < 1_000_000; guard++) {
    if (t % DAY_MS === 0 && t + DAY_MS <= to && t + DAY_MS <= dailyUntil) {
      push({ from: t, to: t + DAY_MS, source: "d" });
      t += DAY_MS;
    } else if (t % HOUR_MS === 0 && t + HOUR_MS <= to && t + HOUR_MS <= hourlyUntil) {
      push({ from: t, to: t + HOUR_MS, source: "h" });
      t += HOUR_MS;
    } else {
      const nextHour = bucketStart(t, "h") + HOUR_MS;
      const end = Math.min(to, nextHour);
      push({ from: t, to: end, source: "raw" });
      t = end;
    }
  }
  return out;
}
