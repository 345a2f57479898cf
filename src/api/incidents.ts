import { Type } from "@sinclair/typebox";
import { toIso } from "../lib/dates.ts";
import { findIncident, listIncidents } from "../store/incident-queries.ts";
import type { IncidentRow } from "../store/tables.ts";
import { list, resource, single } from "./envelope.ts";
import { notFound } from "../http/errors.ts";
import { pathId } from "../http/path-id.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { DateParam, listResponse, PageQuery, singleResponse } from "./schemas.ts";
import { IncidentAttributesSchema } from "../domain/incident-schema.ts";

export const IncidentListQuery = Type.Object({
  ...PageQuery,
  monitor_id: Type.Integer({ minimum: 1, description: "only this monitor's incidents" }),
  resolved: Type.Boolean({ description: "true: only resolved; false: only open" }),
  from: DateParam("incidents started at or after this time"),
  to: DateParam("incidents started at or before this time"),
});

export function incidentAttributes(r: IncidentRow) {
  return {
    monitor_id: r.monitor_id,
    status: r.status,
    started_at: toIso(r.started_at),
    resolved_at: toIso(r.resolved_at),
    duration_ms: r.duration_ms,
    failure_count: r.failure_count,
    last_error_code: r.last_error_code,
    last_error_message: r.last_error_message,
    last_http_code: r.last_http_code,
    root_check_id: r.root_check_id,
    resolved_check_id: r.resolved_check_id,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

/** Read-only in v1 (api-v1.md "Versioning"): other methods on these paths get 405 from the route table. */
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
      const { rows, total } = await listIncidents(ctx.db, req.caller.accountId, filter, { limit: perPage, offset });
      return list(rows.map((r) => resource("incident", r.id, incidentAttributes(r))), page, perPage, total);
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
      const row = await findIncident(ctx.db, req.caller.accountId, pathId(req.params, "incident"));
      if (!row) throw notFound("incident");
      return single("incident", row.id, incidentAttributes(row));
    },
  },
];
