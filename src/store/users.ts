import type { Db } from "./database.ts";
import type { UserRow } from "./tables.ts";

/** Dashboard users: one account each; usernames are unique across the instance. */
export type UserWithAccount = UserRow & { account_name: string };

export async function insertUser(db: Db, u: { accountId: number; username: string; passwordHash: string; now: number }): Promise<UserRow> {
  return db
    .insertInto("users")
    .values({ account_id: u.accountId, username: u.username, password_hash: u.passwordHash, created_at: u.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findUserByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return db.selectFrom("users").selectAll().where("username", "=", username).executeTakeFirst();
}

export async function countUsers(db: Db): Promise<number> {
  const r = await db.selectFrom("users").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listUsers(db: Db): Promise<UserWithAccount[]> {
  return db.selectFrom("users as u").innerJoin("accounts as a", "a.id", "u.account_id").selectAll("u").select("a.name as account_name").orderBy("u.id").execute();
}

/** Deletes a user; their sessions go with them (ON DELETE CASCADE). */
export async function deleteUserByUsername(db: Db, username: string): Promise<boolean> {
  const r = await db.deleteFrom("users").where("username", "=", username).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * The first-run setup's insert: only while no user exists at all, checked in the same transaction
 * as the insert, so two setup forms submitted at once create one user. Null when one exists.
 */
export async function insertFirstUser(db: Db, u: { accountId: number; username: string; passwordHash: string; now: number }): Promise<UserRow | null> {
  return db.transaction().execute(async (trx) => {
    if ((await countUsers(trx)) > 0) return null;
    return insertUser(trx, u);
  });
}
