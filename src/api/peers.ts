import { Type } from "@sinclair/typebox";
import { PeerAttributesSchema } from "../domain/peer-schema.ts";
import { listPeers } from "../services/peers.ts";
import { list, resource } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { listResponse, PageQuery } from "./schemas.ts";

const TYPE = "peer";

/**
 * The probe peers an account's checks run on, for whoever operates them: beside the peer protocol's
 * paths, but read with an API token and answered by this pipeline, so it meets the API's rules
 * (plan, rate limit, scope, tenancy) like every other route (docs/regions.md "Peer tokens").
 */
export const peerRoutes: RouteDef[] = [
  {
    method: "GET",
    path: "/peer/v1/peers",
    scope: "monitors:read",
    summary: "List the probe peers serving this account, with their last contact (id ascending)",
    tag: "Peers",
    query: Type.Object({ ...PageQuery }),
    response: listResponse(TYPE, PeerAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      q.done();
      const { items, total } = await listPeers(ctx, actorOf(req), { limit: perPage, offset });
      return list(items.map((p) => resource(TYPE, p.id, p.attributes)), page, perPage, total);
    },
  },
];
