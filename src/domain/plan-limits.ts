/**
 * How much one account may ask of the instance (README "Security", Limits): how many monitors it
 * may hold and how often its monitors may be checked. Each plan has defaults; the operator sets an
 * account's own with `vigil account update NAME --max-monitors N --min-interval-sec S`.
 */
import type { Plan } from "./scopes.ts";

export interface AccountLimits {
  /** monitors of every type, paused ones included; null: no limit */
  maxMonitors: number | null;
  /** the shortest interval_sec of a checked monitor (heartbeat monitors are not checked) */
  minIntervalSec: number;
}

export const PLAN_LIMITS: Readonly<Record<Plan, Readonly<AccountLimits>>> = {
  free: { maxMonitors: 50, minIntervalSec: 60 },
  pro: { maxMonitors: 1000, minIntervalSec: 10 },
  enterprise: { maxMonitors: null, minIntervalSec: 10 },
};

/** What an account's row says, each column null when it takes the plan's default. */
export interface AccountLimitSettings {
  plan: Plan;
  max_monitors: number | null;
  min_interval_sec: number | null;
}

export function limitsOf(a: AccountLimitSettings): AccountLimits {
  const plan = PLAN_LIMITS[a.plan];
  return { maxMonitors: a.max_monitors ?? plan.maxMonitors, minIntervalSec: a.min_interval_sec ?? plan.minIntervalSec };
}

/** The 422 message on interval_sec under the account's minimum. */
export function intervalBelowMinimum(a: AccountLimitSettings): string {
  const { minIntervalSec } = limitsOf(a);
  const whose = a.min_interval_sec === null ? `the ${a.plan} plan's` : "this account's";
  return `must be at least ${minIntervalSec} (${whose} minimum check interval)`;
}

/** The 422 message when the account already holds its most monitors. */
export function monitorLimitReached(a: AccountLimitSettings, max: number): string {
  const whose = a.max_monitors === null ? `the ${a.plan} plan's limit` : "this account's limit";
  return `this account already holds ${max} monitor${max === 1 ? "" : "s"}, ${whose}; delete one, or ask the operator to raise it`;
}
