import type { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { startHeartbeatService } from "./heartbeat/service.ts";

/**
 * The long-running parts of a process besides the HTTP server: each starts here and is stopped in
 * reverse order on shutdown. Scheduler, heartbeat timers, alert dispatcher and peer links register
 * themselves in this one place so `serve` and the tests start the same set.
 */
export interface Service {
  name: string;
  /** routes the service serves (heartbeat endpoint, peer protocol, web UI) */
  plugin?: Elysia<any, any, any, any, any, any, any>;
  /** false while the service cannot do its job (reported by /readyz) */
  ready?(): boolean;
  /** stop taking new work, finish in-flight work within `deadlineMs`, flush */
  stop(deadlineMs: number): Promise<void>;
}

export async function startServices(ctx: AppContext): Promise<Service[]> {
  const services: Service[] = [];
  // heartbeat pings and deadlines are the leader's: probes only run active checks
  if (ctx.config.role === "leader") services.push(await startHeartbeatService(ctx));
  return services;
}
