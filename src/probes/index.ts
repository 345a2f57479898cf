/**
 * Lookup table from monitor_type to probe (style.md: a table, not an if-chain). Heartbeat monitors
 * are pushed, not probed, so they have no entry. Each probe is wrapped so that even a bug inside it
 * yields a down result instead of an exception reaching the scheduler.
 */
import { failed } from "../domain/check-result.ts";
import type { MonitorType } from "../domain/monitor.ts";
import { dnsProbe } from "./dns.ts";
import { dockerProbe } from "./docker.ts";
import { domainProbe } from "./domain.ts";
import { grpcProbe } from "./grpc.ts";
import { httpProbe } from "./http.ts";
import { mysqlProbe } from "./mysql.ts";
import { pingProbe } from "./ping.ts";
import { postgresProbe } from "./postgres.ts";
import { redisProbe } from "./redis.ts";
import { smtpProbe } from "./smtp.ts";
import { sslProbe } from "./ssl.ts";
import { tcpProbe } from "./tcp.ts";
import { websocketProbe } from "./websocket.ts";
import { maskText, secretsOf } from "./request-auth.ts";
import type { Probe } from "./types.ts";

export type { Probe, ProbeContext } from "./types.ts";
export { syntheticProbe } from "./synthetic.ts";
export { createPingProbe } from "./ping.ts";

function neverThrows(probe: Probe): Probe {
  return async (monitor, ctx) => {
    const started = ctx.now();
    try {
      return await probe(monitor, ctx);
    } catch (err) {
      return failed(started, "internal_error", maskText(`probe failed unexpectedly: ${(err as Error)?.message ?? String(err)}`, secretsOf(monitor)));
    }
  };
}

export const PROBES: Record<Exclude<MonitorType, "heartbeat">, Probe> = {
  http: neverThrows(httpProbe),
  tcp: neverThrows(tcpProbe),
  dns: neverThrows(dnsProbe),
  ssl: neverThrows(sslProbe),
  ping: neverThrows(pingProbe),
  websocket: neverThrows(websocketProbe),
  grpc: neverThrows(grpcProbe),
  smtp: neverThrows(smtpProbe),
  postgres: neverThrows(postgresProbe),
  mysql: neverThrows(mysqlProbe),
  redis: neverThrows(redisProbe),
  docker: neverThrows(dockerProbe),
  domain: neverThrows(domainProbe),
};
