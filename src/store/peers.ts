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

export async function findPeer(db: Db, id: number): Promise<PeerRow | undefined> {
  return db.selectFrom("peers").selectAll().where("id", "=", id).executeTakeFirst();
}

/** What the leader learned at a peer's latest contact; fields left undefined keep their value. */
export interface PeerContact {
  lastSeenAt: number;
  lagMs?: number | null;
  skewMs?: number | null;
  queueLength?: number | null;
}

export async function recordPeerContact(db: Db, id: number, c: PeerContact): Promise<void> {
  const set: Record<string, number | null> = { last_seen_at: c.lastSeenAt };
  if (c.lagMs !== undefined) set.last_lag_ms = c.lagMs;
  if (c.skewMs !== undefined) set.last_skew_ms = c.skewMs;
  if (c.queueLength !== undefined) set.queue_length = c.queueLength;
  await db.updateTable("peers").set(set).where("id", "=", id).execute();
}
