import type { Db } from "./database.ts";
import type { PeerRow } from "./tables.ts";

export async function insertPeer(db: Db, p: { region: string; tokenHash: string; label: string | null; now: number }): Promise<PeerRow> {
  return db
    .insertInto("peers")
    .values({ region: p.region, token_hash: p.tokenHash, label: p.label, created_at: p.now })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listPeers(db: Db): Promise<PeerRow[]> {
  return db.selectFrom("peers").selectAll().orderBy("id").execute();
}

export async function findActivePeerByHash(db: Db, tokenHash: string): Promise<PeerRow | undefined> {
  return db.selectFrom("peers").selectAll().where("token_hash", "=", tokenHash).where("revoked_at", "is", null).executeTakeFirst();
}

export async function revokePeer(db: Db, id: number, now: number): Promise<boolean> {
  const r = await db.updateTable("peers").set({ revoked_at: now }).where("id", "=", id).where("revoked_at", "is", null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
