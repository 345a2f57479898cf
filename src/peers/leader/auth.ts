import { verifyPeerToken } from "../../auth/peer-tokens.ts";
import { ApiError, unauthorized } from "../../http/errors.ts";
import { bearerToken } from "../../auth/token-gate.ts";
import type { AppContext } from "../../context.ts";
import type { PeerRow } from "../../store/tables.ts";
import { loadPeer, type Peer } from "./peer-scope.ts";

function bearer(request: Request): string {
  const token = bearerToken(request.headers.get("authorization"));
  if (!token) throw unauthorized("send a peer token as 'Authorization: Bearer <token>' (from `vigil peer create`)");
  return token;
}

const invalidPeerToken = () =>
  new ApiError(401, "invalid_token", "the peer token is unknown or revoked (API tokens are not accepted here)", undefined, {
    "www-authenticate": 'Bearer realm="vigil-peer", error="invalid_token"',
  });

/**
 * The peer endpoints accept only peer tokens (vglp_…): an API token, however broad its scopes, is a
 * 401 here, as a peer token is on /api/v1 (docs/regions.md "Peer tokens").
 */
export async function authenticatePeer(ctx: AppContext, request: Request): Promise<Peer> {
  const row = await verifyPeerToken(ctx.db, bearer(request));
  if (!row) throw invalidPeerToken();
  if (row.region === ctx.config.region) {
    // two writers of one region would interleave their checks into one region view and count twice
    throw new ApiError(409, "region_conflict", `region "${row.region}" is the leader's own region; create the peer for another region`);
  }
  return loadPeer(ctx.db, row);
}
