/**
 * Whether this instance runs its checks on time (README "State, scheduling and incidents"), as the
 * scheduler's saturation watch (scheduler/saturation.ts) last judged it; read by the logs, /metrics
 * and the dashboard's banner.
 */
export interface SaturationReport {
  saturated: boolean;
  /** epoch ms when the current saturation began; null when not saturated */
  since: number | null;
  bound_ms: number;
  checks_per_sec_asked: number;
  checks_per_sec_started: number;
  in_flight: number;
  max_concurrent: number;
  waiting: number;
  oldest_wait_ms: number;
  /** start lateness p99 over the window, as a histogram bucket bound */
  lateness_p99_ms: number;
  /** the longest start lateness over the window */
  lateness_max_ms: number;
}
