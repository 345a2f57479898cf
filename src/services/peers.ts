import type { AppContext } from "../context.ts";
import { peerAttributes, type PeerAttributes } from "../domain/peer-schema.ts";
import { listPeersServing } from "../store/peers.ts";
import type { Actor } from "./actor.ts";
import type { Listed, PageWindow } from "./items.ts";

/**
 * The probe peers serving the actor's account, with their last contact: those created for it and
 * those created for every account. Another account's peers are not shown (docs/regions.md "Peer
 * tokens").
 */
export async function listPeers(ctx: AppContext, actor: Actor, window: PageWindow): Promise<Listed<PeerAttributes>> {
  const { rows, total } = await listPeersServing(ctx.db, actor.accountId, window);
  const now = ctx.clock.now();
  return { items: rows.map((p) => ({ id: p.id, attributes: peerAttributes(p, now) })), total };
}
