import type { Scope } from "../domain/scopes.ts";
import type { Db } from "./database.ts";
import type { Account, ApiTokenRow } from "./tables.ts";

export async function insertApiToken(
  db: Db,
  t: { accountId: number; tokenHash: string; scopes: readonly Scope[]; label: string | null; now: number },
): Promise<ApiTokenRow> {
  return db
    .insertInto("api_tokens")
    .values({ account_id: t.accountId, token_hash: t.tokenHash, scopes: t.scopes.join(","), label: t.label, created_at: t.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface TokenWithAccount {
  token: ApiTokenRow;
  account: Account;
}

/**
 * Looks a presented token up by its hash. The hash is the index key, so the lookup itself leaks
 * nothing about the secret's prefix; there is no byte-wise comparison of the secret to time.
 */
export async function findActiveTokenByHash(db: Db, tokenHash: string): Promise<TokenWithAccount | undefined> {
  const row = await db
    .selectFrom("api_tokens as t")
    .innerJoin("accounts as a", "a.id", "t.account_id")
    .select([
      "t.id", "t.account_id", "t.label", "t.token_hash", "t.scopes", "t.created_at", "t.last_used_at", "t.revoked_at",
      "a.name as account_name", "a.plan as account_plan", "a.created_at as account_created_at", "a.block_private_targets as account_block_private_targets",
      "a.max_monitors as account_max_monitors", "a.min_interval_sec as account_min_interval_sec",
    ])
    .where("t.token_hash", "=", tokenHash)
    .where("t.revoked_at", "is", null)
    .executeTakeFirst();
  if (!row) return undefined;
  const { account_name, account_plan, account_created_at, account_block_private_targets, account_max_monitors, account_min_interval_sec, ...token } = row;
  const account = { id: token.account_id, name: account_name, plan: account_plan, created_at: account_created_at, block_private_targets: account_block_private_targets, max_monitors: account_max_monitors, min_interval_sec: account_min_interval_sec };
  return { token, account };
}

export async function listApiTokens(db: Db, accountId?: number): Promise<(ApiTokenRow & { account_name: string })[]> {
  let q = db.selectFrom("api_tokens as t").innerJoin("accounts as a", "a.id", "t.account_id").selectAll("t").select("a.name as account_name");
  if (accountId !== undefined) q = q.where("t.account_id", "=", accountId);
  return q.orderBy("t.id").execute();
}

export async function revokeApiToken(db: Db, id: number, now: number, accountId?: number): Promise<boolean> {
  let q = db.updateTable("api_tokens").set({ revoked_at: now }).where("id", "=", id).where("revoked_at", "is", null);
  if (accountId !== undefined) q = q.where("account_id", "=", accountId);
  const r = await q.executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** When the token was last used, for people reading `token list`. */
export async function touchApiToken(db: Db, id: number, at: number): Promise<void> {
  await db.updateTable("api_tokens").set({ last_used_at: at }).where("id", "=", id).execute();
}
