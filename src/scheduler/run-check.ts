import { failed, type CheckResult } from "../domain/check-result.ts";
import type { MonitorType, ProbeMonitor } from "../domain/monitor.ts";
import type { PatternMatcher } from "../domain/user-patterns.ts";
import { PROBES, syntheticProbe, type Probe, type ProbeContext } from "../probes/index.ts";

/** Which probe runs a monitor: a lookup table by type, plus the synthetic variant of http. */
export interface ProbeTable {
  byType: Partial<Record<MonitorType, Probe>>;
  synthetic: Probe;
}

export const DEFAULT_PROBES: ProbeTable = { byType: PROBES, synthetic: syntheticProbe };

/** Beyond timeout_ms, how long a probe gets before it is aborted, and again before it is given up on. */
export const ABORT_MARGIN_MS = 1000;

export interface RunOptions {
  probes: ProbeTable;
  now: () => number;
  extraCa?: string;
  /** refuse private targets for every monitor (a probe's own flag), besides each monitor's account rule */
  blockPrivateTargets?: boolean;
  /** --rdap-bootstrap, for domain monitors */
  rdapBootstrapUrl?: string;
  /** aborted on shutdown or when the monitor is deleted */
  signal: AbortSignal;
  marginMs?: number;
  /** runs the monitors' regular expressions (pattern-thread.ts) */
  patterns?: PatternMatcher;
}

export function probeFor(m: ProbeMonitor, probes: ProbeTable): Probe | null {
  if (m.monitor_type === "http" && m.synthetic_enabled) return probes.synthetic;
  return probes.byType[m.monitor_type] ?? null;
}

/**
 * Runs one probe. Probes honour timeout_ms themselves; the abort at timeout_ms + margin is the
 * backstop for one that does not, and a probe that ignores even the abort is given up on (its
 * result would come too late to mean anything) with a down result. Never throws.
 */
export async function runProbe(m: ProbeMonitor, opts: RunOptions): Promise<CheckResult> {
  const started = opts.now();
  const probe = probeFor(m, opts.probes);
  if (!probe) return failed(started, "internal_error", `no probe runs monitors of type ${m.monitor_type}`);
  const margin = opts.marginMs ?? ABORT_MARGIN_MS;
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(opts.signal.reason);
  if (opts.signal.aborted) controller.abort(opts.signal.reason);
  else opts.signal.addEventListener("abort", onOuterAbort, { once: true });
  const abortTimer = setTimeout(() => controller.abort(new Error("check timed out")), m.timeout_ms + margin);
  let giveUpTimer: ReturnType<typeof setTimeout> | undefined;
  const giveUp = new Promise<CheckResult>((resolve) => {
    giveUpTimer = setTimeout(
      () => resolve(failed(started, "connection_timeout", `the check did not finish within ${m.timeout_ms} ms`, { latency_ms: opts.now() - started })),
      m.timeout_ms + 2 * margin,
    );
  });
  const ctx: ProbeContext = { signal: controller.signal, now: opts.now, extraCa: opts.extraCa, blockPrivateTargets: m.block_private_targets || opts.blockPrivateTargets === true, rdapBootstrapUrl: opts.rdapBootstrapUrl, patterns: opts.patterns };
  try {
    const run = probe(m, ctx).catch((err: unknown) => failed(started, "internal_error", `probe failed unexpectedly: ${(err as Error)?.message ?? String(err)}`));
    return await Promise.race([run, giveUp]);
  } finally {
    clearTimeout(abortTimer);
    clearTimeout(giveUpTimer);
    opts.signal.removeEventListener("abort", onOuterAbort);
  }
}
