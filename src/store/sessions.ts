import type { Db } from "./database.ts";

/** A live session joined with what a request needs: the user and their account. */
export interface SessionRecord {
  id_hash: string;
  user_id: number;
  csrf_token: string;
  created_at: number;
  expires_at: number;
  username: string;
  account_id: number;
  account_name: string;
}

export async function insertSession(db: Db, s: { idHash: string; userId: number; csrfToken: string; now: number; expiresAt: number }): Promise<void> {
  await db.insertInto("sessions").values({ id_hash: s.idHash, user_id: s.userId, csrf_token: s.csrfToken, created_at: s.now, expires_at: s.expiresAt }).execute();
}

/** The session with this id hash, unless it has expired. */
export async function findLiveSession(db: Db, idHash: string, now: number): Promise<SessionRecord | undefined> {
  return db
    .selectFrom("sessions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .innerJoin("accounts as a", "a.id", "u.account_id")
    .select(["s.id_hash", "s.user_id", "s.csrf_token", "s.created_at", "s.expires_at", "u.username", "u.account_id", "a.name as account_name"])
    .where("s.id_hash", "=", idHash)
    .where("s.expires_at", ">", now)
    .executeTakeFirst();
}

export async function extendSession(db: Db, idHash: string, expiresAt: number): Promise<void> {
  await db.updateTable("sessions").set({ expires_at: expiresAt }).where("id_hash", "=", idHash).execute();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom("sessions").where("id_hash", "=", idHash).execute();
}

export async function deleteExpiredSessions(db: Db, now: number): Promise<number> {
  const r = await db.deleteFrom("sessions").where("expires_at", "<=", now).executeTakeFirst();
  return Number(r.numDeletedRows);
}
