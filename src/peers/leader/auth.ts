import { verifyApiToken } from "../../auth/api-tokens.ts";
import { verifyPeerToken } from "../../auth/peer-tokens.ts";
import { ApiError, insufficientScope, planFeatureDisabled, unauthorized } from "../../api/errors.ts";
import type { AppContext } from "../../context.ts";
import type { PeerRow } from "../../store/tables.ts";

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/;

function bearer(request: Request): string {
  const m = BEARER.exec(request.headers.get("authorization")?.trim() ?? "");
  if (!m) throw unauthorized("send a peer token as 'Authorization: Bearer <token>' (from `vigil peer create`)");
  return m[1]!;
}

const invalidPeerToken = () =>
  new ApiError(401, "invalid_token", "the peer token is unknown or revoked (API tokens are not accepted here)", undefined, {
    "www-authenticate": 'Bearer realm="vigil-peer", error="invalid_token"',
  });

/**
 * The peer endpoints accept only peer tokens (vglp_…): an API token, however broad its scopes, is a
 * 401 here, as a peer token is on /api/v1 (decisions.md "Regions and probe peers").
 */
export async function authenticatePeer(ctx: AppContext, request: Request): Promise<PeerRow> {
  const peer = await verifyPeerToken(ctx.db, bearer(request));
  if (!peer) throw invalidPeerToken();
  if (peer.region === ctx.config.region) {
    // two writers of one region would interleave their checks into one region view and count twice
    throw new ApiError(409, "region_conflict", `region "${peer.region}" is the leader's own region; create the peer for another region`);
  }
  return peer;
}

export type PeersReader = { kind: "peer"; peer: PeerRow } | { kind: "api"; accountId: number };

/**
 * GET /peer/v1/peers is for operators too: a peer token, or an API token with `monitors:read` (on a
 * paid plan, as everywhere in the API). Peers belong to the instance, not to an account.
 */
export async function authenticatePeersReader(ctx: AppContext, request: Request): Promise<PeersReader> {
  const token = bearer(request);
  const peer = await verifyPeerToken(ctx.db, token);
  if (peer) return { kind: "peer", peer };
  const api = await verifyApiToken(ctx.db, token);
  if (!api) throw new ApiError(401, "invalid_token", "the token is unknown or revoked", undefined, { "www-authenticate": 'Bearer realm="vigil", error="invalid_token"' });
  if (api.account.plan === "free") throw planFeatureDisabled();
  if (!api.token.scopes.split(",").includes("monitors:read")) throw insufficientScope("monitors:read");
  return { kind: "api", accountId: api.account.id };
}
