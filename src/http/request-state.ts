import type { Plan, Scope } from "../domain/scopes.ts";
import type { WindowVerdict } from "../lib/fixed-window.ts";

/** Who an API token says the caller is: its account, plan and scopes. */
export interface Caller {
  accountId: number;
  plan: Plan;
  tokenId: number;
  scopes: ReadonlySet<Scope>;
}

/** What the pipeline learned about one request before its handler runs. */
export interface RequestState {
  requestId: string;
  startedAt: number;
  caller?: Caller;
  rateLimit?: WindowVerdict;
  /** the route the request matched (its path pattern names it in metrics) */
  route?: { path: string };
  params?: Record<string, string>;
}

const states = new WeakMap<Request, RequestState>();

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** A client's own X-Request-Id is kept when it is short and plain, so traces can be joined. */
export function stateFor(request: Request): RequestState {
  let s = states.get(request);
  if (!s) {
    s = freshState(request);
    states.set(request, s);
  }
  return s;
}

/**
 * The state of a request no pipeline step will look up again (a native route's): not registered
 * for `stateFor`, which saves a WeakMap entry per request on the ping path.
 */
export function freshState(request: Request): RequestState {
  const given = request.headers.get("x-request-id");
  return { requestId: given !== null && CLIENT_ID.test(given) ? given : crypto.randomUUID(), startedAt: performance.now() };
}
