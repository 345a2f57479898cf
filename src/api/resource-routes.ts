import { Type, type TSchema } from "@sinclair/typebox";
import type { AppContext } from "../context.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { Scope } from "../domain/scopes.ts";
import { pathId } from "../http/path-id.ts";
import type { Actor } from "../services/actor.ts";
import type { Item, Listed } from "../services/items.ts";
import type { WriteInput } from "../services/write-input.ts";
import { list, resource, single, type ResourceType } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { deletedResponse, ExternalIdQuery, listResponse, PageQuery, singleResponse, writeBody } from "./schemas.ts";

type Params = Record<string, string>;

/**
 * A resource the API lists, creates, reads, changes and deletes with the same envelopes, paging,
 * validation and tenancy as every other (docs/api-rules.md): what differs between resources is
 * said here, the five routes are built by `resourceRoutes`. `P` is the record a nested resource
 * lives under (a status page's updates), read from the path before anything else.
 */
export interface ResourceSpec<A, F, P = undefined> {
  /** the collection's path; an item's is `${path}/:${idParam}` */
  path: string;
  /** the item's path parameter (default "id") */
  idParam?: string;
  /** what an unknown id in the path is called in the 404 ("group", "status page update") */
  noun: string;
  type: ResourceType;
  tag: string;
  scopes: { read: Scope; write: Scope };
  /** the attributes as responses show them */
  attributes: TSchema;
  /** the attributes a create and an update take (wrapped in either body form, docs/api-rules.md "Writes: flat or JSON:API") */
  createAttributes: TSchema;
  updateAttributes: TSchema;
  /** the list's query string, paging included */
  listQuery: TSchema;
  /** the list's filters, read from the query after the page */
  filters: (q: QueryReader) => F;
  summaries: { list: string; create: string; get: string; update: string; remove: string };
  examples: { create: unknown; update: unknown };
  parent?: (params: Params) => P;
  list(ctx: AppContext, actor: Actor, window: PageWindow, filters: F, parent: P): Promise<Listed<A>>;
  create(ctx: AppContext, actor: Actor, input: WriteInput | undefined, parent: P): Promise<Item<A>>;
  get(ctx: AppContext, actor: Actor, id: number, parent: P): Promise<Item<A>>;
  update(ctx: AppContext, actor: Actor, id: number, input: WriteInput | undefined, parent: P): Promise<Item<A>>;
  remove(ctx: AppContext, actor: Actor, id: number, parent: P): Promise<void>;
}

/** The list of a resource filtered by nothing but its external_id (docs/api-rules.md "Query parameters"). */
export const BY_EXTERNAL_ID = {
  listQuery: Type.Object({ ...PageQuery, ...ExternalIdQuery }),
  filters: (q: QueryReader) => ({ externalId: q.string("external_id") }),
};

export interface ResourceRoutes<A> {
  /** list, create, get, update, delete, in the order the OpenAPI document shows them */
  routes: RouteDef[];
  /** the envelope of one item, for a resource's routes of its own */
  one(item: Item<A>, status?: number): ReturnType<typeof single>;
  /** the item's id in the path (404 when it is not one) */
  itemId(params: Params): number;
}

export function resourceRoutes<A, F, P = undefined>(spec: ResourceSpec<A, F, P>): ResourceRoutes<A> {
  const { type, tag, scopes, summaries, examples } = spec;
  const idParam = spec.idParam ?? "id";
  const itemPath = `${spec.path}/:${idParam}`;
  const parentOf = (params: Params) => (spec.parent ? spec.parent(params) : (undefined as P));
  const itemId = (params: Params) => pathId(params, spec.noun, idParam);
  const one = (item: Item<A>, status?: number) => single(type, item.id, item.attributes, status);
  const response = singleResponse(type, spec.attributes);
  const routes: RouteDef[] = [
    {
      method: "GET",
      path: spec.path,
      scope: scopes.read,
      summary: summaries.list,
      tag,
      query: spec.listQuery,
      response: listResponse(type, spec.attributes),
      async handler(req, ctx) {
        const q = new QueryReader(req.query);
        const { page, perPage, offset } = q.page();
        const filters = spec.filters(q);
        q.done();
        const { items, total } = await spec.list(ctx, actorOf(req), { limit: perPage, offset }, filters, parentOf(req.params));
        return list(items.map((i) => resource(type, i.id, i.attributes)), page, perPage, total);
      },
    },
    {
      method: "POST",
      path: spec.path,
      scope: scopes.write,
      summary: summaries.create,
      tag,
      body: writeBody(type, spec.createAttributes),
      response,
      successStatus: 201,
      example: examples.create,
      async handler(req, ctx) {
        return one(await spec.create(ctx, actorOf(req), req.body, parentOf(req.params)), 201);
      },
    },
    {
      method: "GET",
      path: itemPath,
      scope: scopes.read,
      summary: summaries.get,
      tag,
      response,
      async handler(req, ctx) {
        const parent = parentOf(req.params);
        return one(await spec.get(ctx, actorOf(req), itemId(req.params), parent));
      },
    },
    {
      method: "PATCH",
      path: itemPath,
      scope: scopes.write,
      summary: summaries.update,
      tag,
      body: writeBody(type, spec.updateAttributes),
      response,
      example: examples.update,
      async handler(req, ctx) {
        const parent = parentOf(req.params);
        return one(await spec.update(ctx, actorOf(req), itemId(req.params), req.body, parent));
      },
    },
    {
      method: "DELETE",
      path: itemPath,
      scope: scopes.write,
      summary: summaries.remove,
      tag,
      response: deletedResponse(type),
      async handler(req, ctx) {
        const parent = parentOf(req.params);
        const id = itemId(req.params);
        await spec.remove(ctx, actorOf(req), id, parent);
        return single(type, id, { deleted: true });
      },
    },
  ];
  return { routes, one, itemId };
}
