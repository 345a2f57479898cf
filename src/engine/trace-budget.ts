import type { AppContext } from "../context.ts";
import { toIso } from "../lib/dates.ts";
import { boundTrace, type BoundedTrace } from "../domain/trace-bounds.ts";

const MIB = 1024 * 1024;

/**
 * The trace a check stores: within one check's bound, then within what is left of its account's
 * hourly budget (--trace-budget-mib, README "Security"), local checks and probe peers' alike. Past
 * the budget a trace keeps its steps' outline, and says until when. The budget is counted in memory
 * by each instance, so it starts afresh on a restart and several instances each grant one.
 */
export function traceToStore(ctx: AppContext, accountId: number, trace: unknown): BoundedTrace {
  const perCheck = boundTrace(trace);
  if (perCheck.trace === null) return perCheck;
  const now = ctx.clock.now();
  const budget = ctx.config.traceBudgetBytes;
  const window = ctx.traceBytes.peek(accountId, budget, now);
  let kept = perCheck;
  if (perCheck.bytes > window.remaining) {
    const what = `this account's ${budget / MIB} MiB of traces per hour (until ${toIso(window.resetAt)})`;
    kept = boundTrace(perCheck.trace, { bytes: window.remaining, what });
    if (window.remaining > 0) {
      ctx.log.child("engine").warn("trace budget reached: this account's traces keep their steps' outline until the hour is over", { account_id: accountId, budget_bytes: budget, until: toIso(window.resetAt) });
    }
  }
  ctx.traceBytes.spend(accountId, kept.bytes, now);
  return kept;
}
