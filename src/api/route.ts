import type { TSchema } from "@sinclair/typebox";
import type { AppContext } from "../context.ts";
import type { Scope } from "../domain/scopes.ts";
import type { Caller } from "../http/request-state.ts";
import type { Actor } from "../services/actor.ts";

export type HttpVerb = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";

export interface ApiRequest {
  params: Record<string, string>;
  /** raw query values; list handlers parse them with api/query.ts */
  query: URLSearchParams;
  /** parsed JSON object for routes that declare a body; undefined otherwise */
  body: Record<string, unknown> | undefined;
  caller: Caller;
  requestId: string;
  request: Request;
}

/** Whom the services act for: the token's account, and this request's id for their log lines. */
export const actorOf = (req: ApiRequest): Actor => ({ accountId: req.caller.accountId, requestId: req.requestId });

/** What a handler returns: the pipeline adds `meta` and the standard headers. */
export interface ApiResponse {
  status?: number;
  body: Record<string, unknown>;
}

export type Handler = (req: ApiRequest, ctx: AppContext) => Promise<ApiResponse> | ApiResponse;

/**
 * One API endpoint: the single source for routing, scope, validation schemas and the OpenAPI
 * operation. Resource files export arrays of these; api/routes.ts lists them, and the pipeline
 * (api/pipeline.ts) and the OpenAPI document (api/openapi.ts) are built from that list.
 */
export interface RouteDef {
  method: HttpVerb;
  /** Elysia-style path, e.g. /api/v1/monitors/:id */
  path: string;
  scope: Scope;
  summary: string;
  tag: string;
  /** JSON Schema (TypeBox) of the query string, for the OpenAPI document */
  query?: TSchema;
  /** JSON Schema (TypeBox) of the body; its presence makes the route parse a JSON body */
  body?: TSchema;
  /** JSON Schema (TypeBox) of the success response body */
  response: TSchema;
  successStatus?: number;
  /** answers 422 validation_error though it takes no body or query: an action whose conditions may not hold */
  refuses?: boolean;
  /** an example request body for docs */
  example?: unknown;
  handler: Handler;
}
