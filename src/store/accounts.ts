import type { Plan } from "../domain/scopes.ts";
import type { Db } from "./database.ts";
import type { Account } from "./tables.ts";

/** An account's own private-target rule: true blocks, false allows, null follows the instance flag. */
export type PrivateTargetSetting = boolean | null;

const toColumn = (v: PrivateTargetSetting): number | null => (v === null ? null : v ? 1 : 0);

export async function createAccount(db: Db, name: string, plan: Plan, now: number, blockPrivateTargets: PrivateTargetSetting = null): Promise<Account> {
  return db.insertInto("accounts").values({ name, plan, created_at: now, block_private_targets: toColumn(blockPrivateTargets) }).returningAll().executeTakeFirstOrThrow();
}

export async function updateAccount(db: Db, id: number, changes: { plan?: Plan; blockPrivateTargets?: PrivateTargetSetting }): Promise<void> {
  const set: { plan?: Plan; block_private_targets?: number | null } = {};
  if (changes.plan !== undefined) set.plan = changes.plan;
  if (changes.blockPrivateTargets !== undefined) set.block_private_targets = toColumn(changes.blockPrivateTargets);
  if (Object.keys(set).length) await db.updateTable("accounts").set(set).where("id", "=", id).execute();
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
