import { Type } from "@sinclair/typebox";
import { STATUS_PAGE_REQUIRED, StatusPageAttributesSchema, StatusPageWriteAttributesSchema } from "../domain/status-page-schema.ts";
import { createStatusPage, deleteStatusPage, getStatusPage, listStatusPages, updateStatusPage, verifyCustomDomain } from "../services/status-pages.ts";
import { resourceRoutes } from "./resource-routes.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { ExternalIdQuery, PageQuery, requiring, singleResponse } from "./schemas.ts";

const pages = resourceRoutes({
  path: "/api/v1/status-pages",
  noun: "status page",
  type: "status_page",
  tag: "Status pages",
  scopes: { read: "status_pages:read", write: "status_pages:write" },
  attributes: StatusPageAttributesSchema,
  createAttributes: requiring(StatusPageWriteAttributesSchema, STATUS_PAGE_REQUIRED),
  updateAttributes: StatusPageWriteAttributesSchema,
  listQuery: Type.Object({ ...PageQuery, ...ExternalIdQuery, q: Type.String({ maxLength: 200, description: "case-insensitive substring of the name" }) }),
  filters: (q) => ({ q: q.string("q"), externalId: q.string("external_id") }),
  summaries: {
    list: "List status pages (id ascending)",
    create: "Create a status page",
    get: "Get a status page",
    update: "Update a status page (only the attributes sent change)",
    remove: "Delete a status page",
  },
  examples: { create: { name: "Acme Status", headline: "All systems", monitor_ids: [1, 2] }, update: { is_token_protected: true } },
  list: (ctx, actor, window, filters) => listStatusPages(ctx, actor, filters, window),
  create: createStatusPage,
  get: getStatusPage,
  update: updateStatusPage,
  remove: deleteStatusPage,
});

export const statusPageRoutes: RouteDef[] = [
  ...pages.routes,
  {
    method: "POST",
    path: "/api/v1/status-pages/:id/custom-domain/verify",
    scope: "status_pages:write",
    summary: "Verify the page's custom_domain: its TXT record custom_domain_verification must be published; then the page serves there (422 while it is not)",
    tag: "Status pages",
    response: singleResponse("status_page", StatusPageAttributesSchema),
    refuses: true,
    async handler(req, ctx) {
      return pages.one(await verifyCustomDomain(ctx, actorOf(req), pages.itemId(req.params)));
    },
  },
];
