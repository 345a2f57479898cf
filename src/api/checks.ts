import { Type } from "@sinclair/typebox";
import { CHECK_STATUSES } from "../domain/check-result.ts";
import { toIso } from "../lib/dates.ts";
import { listChecks } from "../store/check-queries.ts";
import { findMonitor } from "../store/monitors.ts";
import type { CheckRow } from "../store/tables.ts";
import { list, resource } from "./envelope.ts";
import { notFound } from "../http/errors.ts";
import { pathId } from "../http/path-id.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { DateParam, listResponse, PageQuery } from "./schemas.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { CheckAttributesSchema } from "../domain/check-schema.ts";

export const CheckListQuery = Type.Object({
  ...PageQuery,
  status: enumOf(CHECK_STATUSES),
  from: DateParam("checks at or after this time"),
  to: DateParam("checks at or before this time"),
  region: Type.String({ maxLength: 63, description: "extension: only checks run by this region" }),
});

function parseJson(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export function checkAttributes(r: CheckRow) {
  return {
    monitor_id: r.monitor_id,
    status: r.status,
    checked_at: toIso(r.checked_at),
    latency_ms: r.latency_ms,
    http_code: r.http_code,
    error_code: r.error_code,
    error_message: r.error_message,
    degraded_reason: r.degraded_reason,
    resolved_ip: r.resolved_ip,
    ssl_not_after: toIso(r.ssl_not_after),
    dns_answer: parseJson(r.dns_answer) as string[] | null,
    synthetic_trace_json: parseJson(r.synthetic_trace_json),
    region: r.region,
    timings: r.dns_ms === null && r.connect_ms === null && r.tls_ms === null && r.ttfb_ms === null ? null : { dns_ms: r.dns_ms, connect_ms: r.connect_ms, tls_ms: r.tls_ms, ttfb_ms: r.ttfb_ms },
  };
}

export const checkRoutes: RouteDef[] = [
  {
    method: "GET",
    path: "/api/v1/monitors/:id/checks",
    scope: "checks:read",
    summary: "List a monitor's checks (newest first)",
    tag: "Checks",
    query: CheckListQuery,
    response: listResponse("check", CheckAttributesSchema),
    async handler(req, ctx) {
      const id = pathId(req.params, "monitor");
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const filter = { status: q.oneOf("status", CHECK_STATUSES), from: q.date("from"), to: q.date("to"), region: q.string("region", 63) };
      q.done();
      if (!(await findMonitor(ctx.db, req.caller.accountId, id))) throw notFound("monitor");
      await ctx.pings?.settle(id);
      const { rows, total } = await listChecks(ctx.db, id, filter, { limit: perPage, offset });
      return list(rows.map((r) => resource("check", r.id, checkAttributes(r))), page, perPage, total);
    },
  },
];
