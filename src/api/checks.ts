import { Type } from "@sinclair/typebox";
import { CHECK_STATUSES } from "../domain/check-result.ts";
import { CheckAttributesSchema } from "../domain/check-schema.ts";
import { enumOf } from "../domain/schema-parts.ts";
import { pathId } from "../http/path-id.ts";
import { listChecks } from "../services/checks.ts";
import { list, resource } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { DateParam, listResponse, PageQuery } from "./schemas.ts";

export const CheckListQuery = Type.Object({
  ...PageQuery,
  status: enumOf(CHECK_STATUSES),
  from: DateParam("checks at or after this time"),
  to: DateParam("checks at or before this time"),
  region: Type.String({ maxLength: 63, description: "extension: only checks run by this region" }),
});

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
      const { items, total } = await listChecks(ctx, actorOf(req), id, filter, { limit: perPage, offset });
      return list(items.map((c) => resource("check", c.id, c.attributes)), page, perPage, total);
    },
  },
];
