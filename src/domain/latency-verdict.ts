/**
 * Latency measured while this instance was saturated includes our own queueing and event-loop
 * delays, so it says little about the target (README "State, scheduling and incidents"). Such a
 * check keeps its latency_ms but is not degraded for it: the latency reason leaves
 * degraded_reason (the check is up when no other reason is left) and error_message says what was
 * measured and why it was not judged.
 */
import { latencyReason } from "./cert-expiry.ts";
import type { CheckResult } from "./check-result.ts";

/** How probes join several degraded reasons into one degraded_reason. */
const REASON_SEPARATOR = "; ";

/**
 * `result` without the latency verdict the probe drew from it (api_max_latency_ms `maxMs`), or
 * `result` itself when latency did not degrade it. `why` ends the note: "measured while ...".
 */
export function setAsideLatencyVerdict(result: CheckResult, maxMs: number | null, why: string): CheckResult {
  const slow = latencyReason(result.latency_ms, maxMs);
  if (result.status !== "degraded" || slow === null || result.degraded_reason === null) return result;
  const reasons = result.degraded_reason.split(REASON_SEPARATOR);
  const rest = reasons.filter((r) => r !== slow);
  if (rest.length === reasons.length) return result;
  const note = `${slow} not judged: ${why}`;
  return {
    ...result,
    status: rest.length > 0 ? "degraded" : "up",
    degraded_reason: rest.length > 0 ? rest.join(REASON_SEPARATOR) : null,
    error_message: result.error_message ? `${result.error_message}; ${note}` : note,
  };
}
