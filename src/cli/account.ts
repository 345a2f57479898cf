import { limitsOf, PLAN_LIMITS } from "../domain/plan-limits.ts";
import { PLANS, type Plan } from "../domain/scopes.ts";
import { toIso } from "../lib/dates.ts";
import { createAccount, findAccountByName, listAccounts, updateAccount, type LimitSettings, type PrivateTargetSetting } from "../store/accounts.ts";
import type { Account } from "../store/tables.ts";
import { openCommandStore, parseCommand, table, UsageError, type CliIo } from "./io.ts";

export const ACCOUNT_HELP = `Usage:
  vigil account create NAME --plan free|pro|enterprise [PRIVATE] [LIMITS] [--data DIR]   create an account; prints its id
  vigil account update NAME [--plan PLAN] [PRIVATE] [LIMITS] [--data DIR]                change an account
  vigil account list [--data DIR]                                                         list accounts

PRIVATE, whether the account's checks and notifications may reach private, loopback and link-local
addresses (a running server applies a change within seconds):
  --block-private-targets      refuse them for this account
  --allow-private-targets      allow them for this account
  --private-targets-default    follow the server's --block-private-targets (what a new account does)

LIMITS, what the account's monitors may ask (a running server applies a change from its next write):
  --max-monitors N|default       monitors it may hold, paused ones included (0-10000000)
  --min-interval-sec S|default   the shortest interval_sec of its checked monitors (10-86400)
  default takes the plan's: ${PLANS.map((p) => `${p} ${describeMax(PLAN_LIMITS[p].maxMonitors)} monitors, ${PLAN_LIMITS[p].minIntervalSec} s`).join("; ")}.

Accounts are tenants: nothing of one is visible to another. The API is open to pro and enterprise plans.`;

const LIMIT_OPTIONS = {
  "max-monitors": { type: "string" },
  "min-interval-sec": { type: "string" },
} as const;

/** "default" (the plan's: null), an integer within bounds, or a usage error naming the flag. */
function limitValue(values: Record<string, unknown>, flag: keyof typeof LIMIT_OPTIONS, min: number, max: number): number | null | undefined {
  const v = values[flag];
  if (v === undefined) return undefined;
  if (v === "default") return null;
  if (typeof v !== "string" || !/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`--${flag} must be an integer from ${min} to ${max}, or default`);
  return Number(v);
}

function limitSettings(values: Record<string, unknown>): LimitSettings {
  return { maxMonitors: limitValue(values, "max-monitors", 0, 10_000_000), minIntervalSec: limitValue(values, "min-interval-sec", 10, 86_400) };
}

function describeMax(max: number | null): string {
  return max === null ? "unlimited" : String(max);
}

/** "50 (plan)" when the plan's default applies, "200" when the account has its own. */
function describeLimits(a: Account): { monitors: string; interval: string } {
  const l = limitsOf(a);
  return {
    monitors: `${describeMax(l.maxMonitors)}${a.max_monitors === null ? " (plan)" : ""}`,
    interval: `${l.minIntervalSec} s${a.min_interval_sec === null ? " (plan)" : ""}`,
  };
}

const PRIVATE_OPTIONS = {
  "block-private-targets": { type: "boolean" },
  "allow-private-targets": { type: "boolean" },
  "private-targets-default": { type: "boolean" },
} as const;

/** The private-target flags given, or undefined for none; two at once is a usage error. */
function privateSetting(values: Record<string, unknown>): PrivateTargetSetting | undefined {
  const given = Object.keys(PRIVATE_OPTIONS).filter((k) => values[k] === true);
  if (given.length > 1) throw new UsageError(`--${given.join(" and --")} contradict each other; give one`);
  if (given[0] === "block-private-targets") return true;
  if (given[0] === "allow-private-targets") return false;
  if (given[0] === "private-targets-default") return null;
  return undefined;
}

function parsePlan(plan: unknown): Plan {
  if (typeof plan !== "string" || !(PLANS as readonly string[]).includes(plan)) throw new UsageError("--plan must be free, pro or enterprise");
  return plan as Plan;
}

const describeSetting = (v: number | null) => (v === null ? "instance default" : v === 1 ? "blocked" : "allowed");

export async function accountCommand(args: string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = args;
  if (!sub || sub === "--help" || sub === "-h") return io.out(ACCOUNT_HELP), sub ? 0 : 2;
  if (sub === "create") {
    const { values, positionals } = parseCommand(rest, { plan: { type: "string" }, ...PRIVATE_OPTIONS, ...LIMIT_OPTIONS }, 1);
    if (values.help) return io.out(ACCOUNT_HELP), 0;
    const name = positionals[0];
    if (!name) throw new UsageError("account create needs a NAME");
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) throw new UsageError("NAME must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
    const plan = parsePlan(values.plan);
    const blockPrivate = privateSetting(values) ?? null;
    const limits = limitSettings(values);
    const store = await openCommandStore(values, io.env);
    try {
      if (await findAccountByName(store.db, name)) {
        io.err(`error: an account named "${name}" already exists`);
        return 1;
      }
      const account = await createAccount(store.db, name, plan, Date.now(), blockPrivate, limits);
      io.out(String(account.id));
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "update") {
    const { values, positionals } = parseCommand(rest, { plan: { type: "string" }, ...PRIVATE_OPTIONS, ...LIMIT_OPTIONS }, 1);
    if (values.help) return io.out(ACCOUNT_HELP), 0;
    const name = positionals[0];
    if (!name) throw new UsageError("account update needs a NAME");
    const plan = values.plan === undefined ? undefined : parsePlan(values.plan);
    const blockPrivate = privateSetting(values);
    const limits = limitSettings(values);
    if (plan === undefined && blockPrivate === undefined && limits.maxMonitors === undefined && limits.minIntervalSec === undefined) {
      throw new UsageError("account update needs --plan, --max-monitors, --min-interval-sec or one of --block-private-targets, --allow-private-targets, --private-targets-default");
    }
    const store = await openCommandStore(values, io.env);
    try {
      const account = await findAccountByName(store.db, name);
      if (!account) {
        io.err(`error: no account named "${name}"`);
        return 1;
      }
      await updateAccount(store.db, account.id, { plan, blockPrivateTargets: blockPrivate, ...limits });
      const after = (await findAccountByName(store.db, name))!;
      const l = describeLimits(after);
      io.out(`updated ${after.name}: plan ${after.plan}, private targets ${describeSetting(after.block_private_targets)}, at most ${l.monitors} monitors, interval at least ${l.interval}`);
      return 0;
    } finally {
      await store.close();
    }
  }
  if (sub === "list") {
    const { values } = parseCommand(rest, {});
    if (values.help) return io.out(ACCOUNT_HELP), 0;
    const store = await openCommandStore(values, io.env);
    try {
      const rows = await listAccounts(store.db);
      table(
        io,
        ["ID", "NAME", "PLAN", "PRIVATE TARGETS", "MAX MONITORS", "MIN INTERVAL", "CREATED"],
        rows.map((a) => [a.id, a.name, a.plan, describeSetting(a.block_private_targets), describeLimits(a).monitors, describeLimits(a).interval, toIso(a.created_at)]),
      );
      return 0;
    } finally {
      await store.close();
    }
  }
  throw new UsageError(`unknown account command "${sub}"`);
}
