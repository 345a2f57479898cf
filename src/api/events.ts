import { Type } from "@sinclair/typebox";
import { EVENT_KINDS, EventAttributesSchema } from "../domain/event-schema.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { pathId } from "../http/path-id.ts";
import { listMonitorEvents } from "../services/events.ts";
import { list, resource } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { listResponse, PageQuery } from "./schemas.ts";

export const eventRoutes: RouteDef[] = [
  {
    method: "GET",
    path: "/api/v1/monitors/:id/events",
    scope: "checks:read",
    summary: "List a monitor's timeline: pings, state transitions, token rotations, expiry alerts (newest first)",
    tag: "Checks",
    query: Type.Object({ ...PageQuery, kind: enumOf(EVENT_KINDS, { description: "only events of this kind" }) }),
    response: listResponse("event", EventAttributesSchema),
    async handler(req, ctx) {
      const id = pathId(req.params, "monitor");
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const kind = q.oneOf("kind", EVENT_KINDS);
      q.done();
      const { items, total } = await listMonitorEvents(ctx, actorOf(req), id, { kind }, { limit: perPage, offset });
      return list(items.map((e) => resource("event", e.id, e.attributes)), page, perPage, total);
    },
  },
];
