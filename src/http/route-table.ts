/** What a table needs of a route: the API's RouteDef, or any route the server answers. */
export type Routed = { method: string; path: string };

interface CompiledRoute<R extends Routed> {
  def: R;
  pattern: RegExp;
  names: string[];
}

/**
 * Matches a path to the API's routes before the body is read, so the pipeline can answer 404/405
 * and check scope in the documented order (authentication, plan, rate limit, scope, handler). The
 * server keeps one of every route it serves, to tell a wrong method on a known path (405) from an
 * unknown path (404).
 */
export class RouteTable<R extends Routed> {
  private readonly routes: CompiledRoute<R>[];
  constructor(defs: readonly R[]) {
    this.routes = defs.map((def) => {
      const names: string[] = [];
      const source = def.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:(\w+)/g, (_, n: string) => {
        names.push(n);
        return "([^/]+)";
      });
      return { def, pattern: new RegExp(`^${source}/?$`), names };
    });
  }

  /**
   * `route` when method and path match; `allow` lists the methods of a path matched by another
   * method, HEAD beside GET (a GET route answers HEAD).
   */
  match(method: string, path: string): { route?: R; params: Record<string, string>; allow: string[] } {
    const allow: string[] = [];
    for (const r of this.routes) {
      const m = r.pattern.exec(path);
      if (!m) continue;
      if (r.def.method === method || (method === "HEAD" && r.def.method === "GET")) {
        const params: Record<string, string> = {};
        r.names.forEach((n, i) => (params[n] = safeDecode(m[i + 1]!)));
        return { route: r.def, params, allow };
      }
      allow.push(r.def.method);
    }
    if (allow.includes("GET")) allow.splice(allow.indexOf("GET") + 1, 0, "HEAD");
    return { params: {}, allow: [...new Set(allow)] };
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
