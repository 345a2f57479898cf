import { Type } from "@sinclair/typebox";
import { STATUS_PAGE_REQUIRED, StatusPageAttributesSchema, StatusPageWriteAttributesSchema } from "../domain/status-page-schema.ts";
import { pathId } from "../http/path-id.ts";
import { createStatusPage, deleteStatusPage, getStatusPage, listStatusPages, updateStatusPage, verifyCustomDomain, type StatusPageItem } from "../services/status-pages.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { deletedResponse, ExternalIdQuery, listResponse, PageQuery, requiring, singleResponse, writeBody } from "./schemas.ts";

const BASE = "/api/v1/status-pages";
const TAG = "Status pages";

const one = (p: StatusPageItem, status?: number) => single("status_page", p.id, p.attributes, status);
const pageId = (params: Record<string, string>) => pathId(params, "status page");

export const statusPageRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "status_pages:read",
    summary: "List status pages (id ascending)",
    tag: TAG,
    query: Type.Object({ ...PageQuery, ...ExternalIdQuery, q: Type.String({ maxLength: 200, description: "case-insensitive substring of the name" }) }),
    response: listResponse("status_page", StatusPageAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const search = q.string("q");
      const externalId = q.string("external_id");
      q.done();
      const { items, total } = await listStatusPages(ctx, actorOf(req), { q: search, externalId }, { limit: perPage, offset });
      return list(items.map((p) => resource("status_page", p.id, p.attributes)), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "status_pages:write",
    summary: "Create a status page",
    tag: TAG,
    body: writeBody("status_page", requiring(StatusPageWriteAttributesSchema, STATUS_PAGE_REQUIRED)),
    response: singleResponse("status_page", StatusPageAttributesSchema),
    successStatus: 201,
    example: { name: "Acme Status", headline: "All systems", monitor_ids: [1, 2] },
    async handler(req, ctx) {
      return one(await createStatusPage(ctx, actorOf(req), req.body), 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    scope: "status_pages:read",
    summary: "Get a status page",
    tag: TAG,
    response: singleResponse("status_page", StatusPageAttributesSchema),
    async handler(req, ctx) {
      return one(await getStatusPage(ctx, actorOf(req), pageId(req.params)));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "status_pages:write",
    summary: "Update a status page (only the attributes sent change)",
    tag: TAG,
    body: writeBody("status_page", StatusPageWriteAttributesSchema),
    response: singleResponse("status_page", StatusPageAttributesSchema),
    example: { is_token_protected: true },
    async handler(req, ctx) {
      return one(await updateStatusPage(ctx, actorOf(req), pageId(req.params), req.body));
    },
  },
  {
    method: "POST",
    path: `${BASE}/:id/custom-domain/verify`,
    scope: "status_pages:write",
    summary: "Verify the page's custom_domain: its TXT record custom_domain_verification must be published; then the page serves there (422 while it is not)",
    tag: TAG,
    response: singleResponse("status_page", StatusPageAttributesSchema),
    refuses: true,
    async handler(req, ctx) {
      return one(await verifyCustomDomain(ctx, actorOf(req), pageId(req.params)));
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:id`,
    scope: "status_pages:write",
    summary: "Delete a status page",
    tag: TAG,
    response: deletedResponse("status_page"),
    async handler(req, ctx) {
      const id = pageId(req.params);
      await deleteStatusPage(ctx, actorOf(req), id);
      return single("status_page", id, { deleted: true });
    },
  },
];
