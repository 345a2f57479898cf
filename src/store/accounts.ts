import type { AccountLimitSettings } from "../domain/plan-limits.ts";
import type { Plan } from "../domain/scopes.ts";
import type { Db } from "./database.ts";
import type { Account } from "./tables.ts";

/** An account's own private-target rule: true blocks, false allows, null follows the instance flag. */
export type PrivateTargetSetting = boolean | null;

const toColumn = (v: PrivateTargetSetting): number | null => (v === null ? null : v ? 1 : 0);

/** An account's own limits (domain/plan-limits.ts); null takes the plan's default. */
export interface LimitSettings {
  maxMonitors?: number | null;
  minIntervalSec?: number | null;
}

export async function createAccount(db: Db, name: string, plan: Plan, now: number, blockPrivateTargets: PrivateTargetSetting = null, limits: LimitSettings = {}): Promise<Account> {
  return db
    .insertInto("accounts")
    .values({ name, plan, created_at: now, block_private_targets: toColumn(blockPrivateTargets), max_monitors: limits.maxMonitors ?? null, min_interval_sec: limits.minIntervalSec ?? null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateAccount(db: Db, id: number, changes: { plan?: Plan; blockPrivateTargets?: PrivateTargetSetting } & LimitSettings): Promise<void> {
  const set: { plan?: Plan; block_private_targets?: number | null; max_monitors?: number | null; min_interval_sec?: number | null } = {};
  if (changes.plan !== undefined) set.plan = changes.plan;
  if (changes.blockPrivateTargets !== undefined) set.block_private_targets = toColumn(changes.blockPrivateTargets);
  if (changes.maxMonitors !== undefined) set.max_monitors = changes.maxMonitors;
  if (changes.minIntervalSec !== undefined) set.min_interval_sec = changes.minIntervalSec;
  if (Object.keys(set).length) await db.updateTable("accounts").set(set).where("id", "=", id).execute();
}

/** The plan and own limits of an account, read at each write they judge: a CLI change holds at once. */
export async function accountLimitSettings(db: Db, id: number): Promise<AccountLimitSettings | undefined> {
  return db.selectFrom("accounts").select(["plan", "max_monitors", "min_interval_sec"]).where("id", "=", id).executeTakeFirst();
}

/** How many monitors the account holds, of every type, paused ones included. */
export async function countAccountMonitors(db: Db, accountId: number): Promise<number> {
  const r = await db.selectFrom("monitors").select((eb) => eb.fn.countAll<number>().as("n")).where("account_id", "=", accountId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function findAccountByName(db: Db, name: string): Promise<Account | undefined> {
  return db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
}

export async function listAccounts(db: Db): Promise<Account[]> {
  return db.selectFrom("accounts").selectAll().orderBy("id").execute();
}

/** Every account's own private-target setting, for the policy cache. */
export async function privateTargetSettings(db: Db): Promise<Map<number, PrivateTargetSetting>> {
  const rows = await db.selectFrom("accounts").select(["id", "block_private_targets"]).execute();
  return new Map(rows.map((r) => [r.id, r.block_private_targets === null ? null : r.block_private_targets === 1]));
}

export async function countAccounts(db: Db): Promise<number> {
  const r = await db.selectFrom("accounts").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(r.n);
}
