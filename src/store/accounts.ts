import type { Plan } from "../domain/scopes.ts";
import type { Db } from "./database.ts";
import type { Account } from "./tables.ts";

export async function createAccount(db: Db, name: string, plan: Plan, now: number): Promise<Account> {
  return db.insertInto("accounts").values({ name, plan, created_at: now }).returningAll().executeTakeFirstOrThrow();
}

export async function findAccountByName(db: Db, name: string): Promise<Account | undefined> {
  return db.selectFrom("accounts").selectAll().where("name", "=", name).executeTakeFirst();
}

export async function listAccounts(db: Db): Promise<Account[]> {
  return db.selectFrom("accounts").selectAll().orderBy("id").execute();
}

export async function countAccounts(db: Db): Promise<number> {
  const r = await db.selectFrom("accounts").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(r.n);
}
