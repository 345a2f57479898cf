import type { Db } from "../../store/database.ts";
import { peerAccountScope } from "../../store/peers.ts";
import type { PeerRow } from "../../store/tables.ts";

/**
 * An authenticated peer: its row and the accounts its token was created for. A peer is sent the
 * monitors of those accounts only and may report only for them (README "Multi-region").
 */
export interface Peer extends PeerRow {
  /** the ids of the accounts this peer serves, or null: every account (`--all-accounts`) */
  readonly accountIds: ReadonlySet<number> | null;
}

export async function loadPeer(db: Db, row: PeerRow): Promise<Peer> {
  const scope = await peerAccountScope(db, row);
  return { ...row, accountIds: scope === "all" ? null : new Set(scope) };
}

export function servesAccount(peer: Pick<Peer, "accountIds">, accountId: number): boolean {
  return peer.accountIds === null || peer.accountIds.has(accountId);
}
