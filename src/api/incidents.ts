import { Type } from "@sinclair/typebox";
import { IncidentAttributesSchema } from "../domain/incident-schema.ts";
import { pathId } from "../http/path-id.ts";
import { getIncident, listIncidents } from "../services/incidents.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { DateParam, listResponse, PageQuery, singleResponse } from "./schemas.ts";

export const IncidentListQuery = Type.Object({
  ...PageQuery,
  monitor_id: Type.Integer({ minimum: 1, description: "only this monitor's incidents" }),
  resolved: Type.Boolean({ description: "true: only resolved; false: only open" }),
  from: DateParam("incidents started at or after this time"),
  to: DateParam("incidents started at or before this time"),
});

/** Read-only in v1 (docs/api.md "Incidents"): other methods on these paths get 405 from the route table. */
export const incidentRoutes: RouteDef[] = [
  {
    method: "GET",
    path: "/api/v1/incidents",
    scope: "incidents:read",
    summary: "List incidents (started_at descending, then id descending)",
    tag: "Incidents",
    query: IncidentListQuery,
    response: listResponse("incident", IncidentAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const filter = { monitorId: q.positiveInt("monitor_id"), resolved: q.bool("resolved"), from: q.date("from"), to: q.date("to") };
      q.done();
      const { items, total } = await listIncidents(ctx, actorOf(req), filter, { limit: perPage, offset });
      return list(items.map((i) => resource("incident", i.id, i.attributes)), page, perPage, total);
    },
  },
  {
    method: "GET",
    path: "/api/v1/incidents/:id",
    scope: "incidents:read",
    summary: "Get an incident",
    tag: "Incidents",
    response: singleResponse("incident", IncidentAttributesSchema),
    async handler(req, ctx) {
      const incident = await getIncident(ctx, actorOf(req), pathId(req.params, "incident"));
      return single("incident", incident.id, incident.attributes);
    },
  },
];
