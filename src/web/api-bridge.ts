import { ApiError } from "../http/errors.ts";
import type { ApiResponse, HttpVerb } from "../api/route.ts";
import { RouteTable } from "../http/route-table.ts";
import { apiRoutes } from "../api/routes.ts";
import type { AppContext } from "../context.ts";
import { PLANS, SCOPES } from "../domain/scopes.ts";
import { randomToken } from "../lib/tokens.ts";

/**
 * The dashboard's writes and reads go through the API's own handlers, called in-process as the
 * signed-in user's account: the same validators, store functions, slug generation, ownership
 * checks, events (monitor.changed) and log lines, so a form shows exactly the messages the API
 * returns and no rule exists twice. Authentication, plan and rate limit are the pipeline's business
 * for bearer tokens; here the session has already decided (a dashboard user acts on their account
 * with every scope, whatever its plan: the plan gates the API, not the dashboard).
 */
const table = new RouteTable(apiRoutes);

export interface Resource {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
}

export class ApiBridge {
  constructor(private readonly ctx: AppContext, private readonly accountId: number) {}

  async call(method: HttpVerb, path: string, o: { body?: Record<string, unknown>; query?: Record<string, string> } = {}): Promise<ApiResponse> {
    const { route, params } = table.match(method, path);
    if (!route) throw new ApiError(404, "not_found", "endpoint not found");
    const query = new URLSearchParams(o.query ?? {});
    return route.handler(
      {
        params,
        query,
        body: o.body,
        caller: { accountId: this.accountId, plan: PLANS[2], tokenId: 0, scopes: new Set(SCOPES) },
        requestId: `web-${randomToken(9)}`,
        request: new Request(`http://dashboard.invalid${path}`),
      },
      this.ctx,
    );
  }

  async one(method: HttpVerb, path: string, body?: Record<string, unknown>): Promise<Resource> {
    return (await this.call(method, path, { body })).body.data as Resource;
  }

  async list(path: string, query: Record<string, string> = {}): Promise<{ data: Resource[]; total: number }> {
    const res = await this.call("GET", path, { query });
    return { data: res.body.data as Resource[], total: (res.body.pagination as { total: number }).total };
  }

  /** Every item of a paginated list (bounded: at most `maxPages` pages of 100). */
  async all(path: string, query: Record<string, string> = {}, maxPages = 50): Promise<Resource[]> {
    const out: Resource[] = [];
    for (let page = 1; page <= maxPages; page++) {
      const { data, total } = await this.list(path, { ...query, page: String(page), per_page: "100" });
      out.push(...data);
      if (out.length >= total || data.length === 0) break;
    }
    return out;
  }
}

/** A 404 from the API means "not yours or not there": the dashboard answers it as a 404 page. */
export function isNotFound(e: unknown): boolean {
  return e instanceof ApiError && e.status === 404;
}

export function validationDetails(e: unknown): Record<string, string[]> | null {
  return e instanceof ApiError && e.status === 422 ? (e.details ?? {}) : null;
}
