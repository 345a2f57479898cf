/**
 * The probe contract: `(monitor, ctx) → CheckResult`. A probe never touches the store or a server,
 * never throws (failures become a down result with an error_code), and honours both
 * `monitor.timeout_ms` and `ctx.signal`.
 */
import type { CheckResult } from "../domain/check-result.ts";
import type { ProbeMonitor } from "../domain/monitor.ts";
import type { PatternMatcher } from "../domain/user-patterns.ts";

export interface ProbeContext {
  /** aborted by the scheduler on shutdown or when the monitor is deleted */
  signal: AbortSignal;
  /** epoch ms; injected so expiry rules are testable */
  now: () => number;
  /** PEM text of --extra-ca, trusted in addition to the system roots */
  extraCa?: string;
  /** refuse targets that resolve to loopback, private or link-local addresses */
  blockPrivateTargets?: boolean;
  /** --rdap-bootstrap: where domain monitors find RDAP servers; absent: IANA's bootstrap file */
  rdapBootstrapUrl?: string;
  /**
   * runs the monitor's regular expressions: on a server, a worker thread with the check's deadline
   * (scheduler/pattern-thread.ts); absent, the calling thread (tools and tests)
   */
  patterns?: PatternMatcher;
}

export type Probe = (monitor: ProbeMonitor, ctx: ProbeContext) => Promise<CheckResult>;


