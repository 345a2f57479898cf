import type { Db } from "./database.ts";
import type { PeerRow } from "./tables.ts";
import { inCodePointOrder } from "./text-match.ts";

/** The accounts a peer serves: every account (`"all"`), or these account ids. */
export type PeerAccountScope = "all" | readonly number[];

/** Inserts a peer with its account scope in one transaction: a peer never exists without one. */
export async function insertPeer(db: Db, p: { region: string; tokenHash: string; label: string | null; accounts: PeerAccountScope; now: number }): Promise<PeerRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("peers")
      .values({ region: p.region, token_hash: p.tokenHash, label: p.label, created_at: p.now, all_accounts: p.accounts === "all" ? 1 : 0 })
      .returningAll()
      .executeTakeFirstOrThrow();
    if (p.accounts !== "all" && p.accounts.length > 0) {
      await trx.insertInto("peer_accounts").values([...new Set(p.accounts)].map((a) => ({ peer_id: row.id, account_id: a }))).execute();
    }
    return row;
  });
}

export async function listPeers(db: Db): Promise<PeerRow[]> {
  return db.selectFrom("peers").selectAll().orderBy("id").execute();
}

/** A page of the peers serving the account, id ascending: those made for it and those for every account. */
export async function listPeersServing(db: Db, accountId: number, page: { limit: number; offset: number }): Promise<{ rows: PeerRow[]; total: number }> {
  const serving = db
    .selectFrom("peers")
    .where((eb) => eb.or([eb("all_accounts", "=", 1), eb("id", "in", eb.selectFrom("peer_accounts").select("peer_id").where("account_id", "=", accountId))]));
  const [{ n }, rows] = await Promise.all([
    serving.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    serving.selectAll().orderBy("id").limit(page.limit).offset(page.offset).execute(),
  ]);
  return { rows, total: Number(n) };
}

/** The account scope of a peer row (one query for a scoped peer, none for an all-accounts one). */
export async function peerAccountScope(db: Db, peer: Pick<PeerRow, "id" | "all_accounts">): Promise<PeerAccountScope> {
  if (peer.all_accounts === 1) return "all";
  const rows = await db.selectFrom("peer_accounts").select("account_id").where("peer_id", "=", peer.id).orderBy("account_id").execute();
  return rows.map((r) => r.account_id);
}

/** peer id → names of the accounts it serves, for `vigil peer list` (peers of every account absent). */
export async function peerAccountNames(db: Db): Promise<Map<number, string[]>> {
  const rows = await db
    .selectFrom("peer_accounts")
    .innerJoin("accounts", "accounts.id", "peer_accounts.account_id")
    .select(["peer_accounts.peer_id", "accounts.name"])
    .orderBy(inCodePointOrder(db, "accounts.name"))
    .execute();
  const out = new Map<number, string[]>();
  for (const r of rows) {
    const list = out.get(r.peer_id) ?? [];
    list.push(r.name);
    out.set(r.peer_id, list);
  }
  return out;
}

export async function findActivePeerByHash(db: Db, tokenHash: string): Promise<PeerRow | undefined> {
  return db.selectFrom("peers").selectAll().where("token_hash", "=", tokenHash).where("revoked_at", "is", null).executeTakeFirst();
}

export async function revokePeer(db: Db, id: number, now: number): Promise<boolean> {
  const r = await db.updateTable("peers").set({ revoked_at: now }).where("id", "=", id).where("revoked_at", "is", null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
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
