import type { Elysia } from "elysia";

/** What Bun.serve tells a native route about the server: the peer address of a request. */
export interface ServerInfo {
  requestIP(r: Request): { address: string } | null;
}

/** A hot path given to Bun.serve's own router, dispatched before Elysia sees the request. */
export type NativeRoute = (request: Request & { params: Record<string, string> }, server: ServerInfo) => Response | Promise<Response>;

/**
 * One long-running part of a process besides the HTTP server (scheduler, heartbeat timers, alert
 * dispatcher, peer links, web UI). start-services.ts starts them; each is stopped in reverse order on
 * shutdown. A leaf, so a service and the server that serves its routes import it, not each other.
 */
export interface Service {
  name: string;
  /** routes the service serves (heartbeat endpoint, peer protocol, web UI) */
  plugin?: Elysia<any, any, any, any, any, any, any>;
  /** hot paths given to Bun.serve's own router ahead of Elysia (the ping endpoint), path → handler */
  routes?: Record<string, NativeRoute>;
  /** false while the service cannot do its job (reported by /readyz) */
  ready?(): boolean;
  /** what /readyz reports of the service beside readiness (the scheduler: how many monitors it checks) */
  status?(): Record<string, string | number | boolean | null | string[]>;
  /** the page a browser gets for an address nothing serves (the web UI's), in place of the JSON error */
  notFoundPage?(request: Request): Promise<Response>;
  /** the server is about to stop accepting: end long-held requests (peer long-polls) now */
  drain?(): void;
  /** stop taking new work, finish in-flight work within `deadlineMs`, flush */
  stop(deadlineMs: number): Promise<void>;
}
