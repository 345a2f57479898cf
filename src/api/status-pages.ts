import { Type } from "@sinclair/typebox";
import type { AppContext } from "../context.ts";
import { firstFreeSlug, slugify } from "../domain/slug.ts";
import { needsAccessToken, StatusPageAttributesSchema, StatusPageWriteAttributesSchema, validateStatusPageWrite } from "../domain/status-page-schema.ts";
import { toIso } from "../lib/dates.ts";
import { randomToken } from "../lib/tokens.ts";
import {
  deleteStatusPage,
  findStatusPage,
  insertStatusPage,
  listStatusPages,
  monitorIdsByPage,
  ownedMonitorIds,
  slugsLike,
  statusPageValueTaken,
  UniqueValueTaken,
  updateStatusPage,
  type StatusPageColumns,
} from "../store/status-pages.ts";
import type { StatusPageRow } from "../store/tables.ts";
import { list, resource, single } from "./envelope.ts";
import { notFound, validationError } from "../http/errors.ts";
import { pathId } from "../http/path-id.ts";
import { attributesOf } from "../services/write-input.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { deletedResponse, listResponse, PageQuery, singleResponse, writeBody } from "./schemas.ts";

const BASE = "/api/v1/status-pages";
const TAG = "Status pages";
const TAKEN = "has already been taken";

export function statusPageAttributes(r: StatusPageRow, monitorIds: number[]) {
  return {
    name: r.name,
    slug: r.slug,
    headline: r.headline,
    description: r.description,
    is_public: r.is_public === 1,
    is_enabled: r.is_enabled === 1,
    is_token_protected: r.is_token_protected === 1,
    access_token: r.access_token,
    public_theme: r.public_theme,
    custom_domain: r.custom_domain,
    monitor_ids: monitorIds,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

async function present(ctx: AppContext, row: StatusPageRow, status = 200) {
  const ids = await monitorIdsByPage(ctx.db, [row.id]);
  return single("status_page", row.id, statusPageAttributes(row, ids.get(row.id) ?? []), status);
}

function toColumns(changes: Record<string, unknown>): StatusPageColumns {
  const cols: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(changes)) {
    if (k === "monitor_ids") continue;
    cols[k] = typeof v === "boolean" ? (v ? 1 : 0) : v;
  }
  return cols as StatusPageColumns;
}

/** The checks that need the store: monitor ownership and instance-wide uniqueness. */
async function checkReferences(ctx: AppContext, accountId: number, changes: Record<string, unknown>, details: Record<string, string[]>, exceptId?: number): Promise<void> {
  const add = (k: string, m: string) => void (details[k] ??= []).push(m);
  const ids = changes.monitor_ids as number[] | undefined;
  if (ids?.length) {
    const owned = await ownedMonitorIds(ctx.db, accountId, ids);
    const missing = ids.filter((id) => !owned.has(id));
    if (missing.length) add("monitor_ids", `monitor ${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist in this account`);
  }
  if (typeof changes.slug === "string" && (await statusPageValueTaken(ctx.db, "slug", changes.slug, exceptId))) add("slug", TAKEN);
  if (typeof changes.custom_domain === "string" && (await statusPageValueTaken(ctx.db, "custom_domain", changes.custom_domain, exceptId))) add("custom_domain", TAKEN);
}

function takenError(err: unknown): never {
  if (err instanceof UniqueValueTaken) throw validationError({ [err.column]: [TAKEN] });
  throw err;
}

export const statusPageRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "status_pages:read",
    summary: "List status pages (id ascending)",
    tag: TAG,
    query: Type.Object({ ...PageQuery, q: Type.String({ maxLength: 200, description: "case-insensitive substring of the name" }) }),
    response: listResponse("status_page", StatusPageAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const search = q.string("q");
      q.done();
      const { rows, total } = await listStatusPages(ctx.db, req.caller.accountId, { q: search }, { limit: perPage, offset });
      const ids = await monitorIdsByPage(ctx.db, rows.map((r) => r.id));
      return list(rows.map((r) => resource("status_page", r.id, statusPageAttributes(r, ids.get(r.id) ?? []))), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "status_pages:write",
    summary: "Create a status page",
    tag: TAG,
    body: writeBody("status_page", StatusPageWriteAttributesSchema),
    response: singleResponse("status_page", StatusPageAttributesSchema),
    successStatus: 201,
    example: { name: "Acme Status", headline: "All systems", monitor_ids: [1, 2] },
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const { changes, details } = validateStatusPageWrite(attributesOf(req.body, "status_page"), ctx.config);
      await checkReferences(ctx, accountId, changes, details);
      if (Object.keys(details).length) throw validationError(details);
      if (needsAccessToken(changes)) changes.access_token = randomToken(24);
      const explicitSlug = typeof changes.slug === "string";
      // A generated slug that loses a race to a concurrent insert is retried with the next suffix.
      for (let attempt = 0; ; attempt++) {
        if (!explicitSlug) {
          const base = slugify(changes.name as string);
          const slug = firstFreeSlug(base, await slugsLike(ctx.db, base));
          if (!slug) throw validationError({ slug: ["could not be generated from name: too many pages share it; send a slug"] });
          changes.slug = slug;
        }
        try {
          const row = await insertStatusPage(ctx.db, { accountId, cols: toColumns(changes) as StatusPageColumns & { name: string; slug: string }, monitorIds: (changes.monitor_ids as number[]) ?? [], now: ctx.clock.now() });
          return present(ctx, row, 201);
        } catch (err) {
          if (!explicitSlug && attempt < 5 && err instanceof UniqueValueTaken && err.column === "slug") continue;
          takenError(err);
        }
      }
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
      const row = await findStatusPage(ctx.db, req.caller.accountId, pathId(req.params, "status page"));
      if (!row) throw notFound("status page");
      return present(ctx, row);
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
      const accountId = req.caller.accountId;
      const id = pathId(req.params, "status page");
      const row = await findStatusPage(ctx.db, accountId, id);
      if (!row) throw notFound("status page");
      const current = statusPageAttributes(row, []);
      const { changes, details } = validateStatusPageWrite(attributesOf(req.body, "status_page", id), ctx.config, current);
      await checkReferences(ctx, accountId, changes, details, id);
      if (Object.keys(details).length) throw validationError(details);
      if (needsAccessToken(changes, current)) changes.access_token = randomToken(24);
      if (Object.keys(changes).length === 0) return present(ctx, row);
      try {
        const after = await updateStatusPage(ctx.db, { accountId, id, cols: toColumns(changes), monitorIds: changes.monitor_ids as number[] | undefined, now: ctx.clock.now() });
        if (!after) throw notFound("status page");
        return present(ctx, after);
      } catch (err) {
        takenError(err);
      }
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
      const id = pathId(req.params, "status page");
      if (!(await deleteStatusPage(ctx.db, req.caller.accountId, id))) throw notFound("status page");
      return single("status_page", id, { deleted: true });
    },
  },
];
