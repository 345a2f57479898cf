import { hashToken, randomToken } from "../lib/tokens.ts";
import type { Db } from "../store/database.ts";
import { findActivePeerByHash, insertPeer, type PeerAccountScope } from "../store/peers.ts";
import type { PeerRow } from "../store/tables.ts";
import { PEER_TOKEN_PREFIX } from "./api-tokens.ts";

/** A new peer for `region`, serving the given accounts (or all); its token is returned only here. */
export async function issuePeerToken(db: Db, o: { region: string; label: string | null; accounts: PeerAccountScope; now: number }): Promise<{ token: string; row: PeerRow }> {
  const token = randomToken(32, PEER_TOKEN_PREFIX);
  const row = await insertPeer(db, { ...o, tokenHash: hashToken(token) });
  return { token, row };
}

/** Peer tokens and API tokens are not interchangeable: each verifier refuses the other's prefix. */
export async function verifyPeerToken(db: Db, presented: string): Promise<PeerRow | undefined> {
  if (!presented.startsWith(PEER_TOKEN_PREFIX) || presented.length > 200) return undefined;
  return findActivePeerByHash(db, hashToken(presented));
}
