/**
 * A real gRPC health server for grpc probe tests: @grpc/grpc-js with the gRPC project's own health
 * service (grpc-health-check), in this Bun process on 127.0.0.1 and a free port. Statuses are set per
 * service ("" is the server as a whole); a service never set answers NOT_FOUND, as that
 * implementation does. Options: TLS with a certificate from test/helpers/certs.ts, no health service
 * at all (calls answer UNIMPLEMENTED), and a delay before each answer.
 */
import * as grpc from "@grpc/grpc-js";
import { readFileSync } from "node:fs";
import { HealthImplementation, type ServingStatus as ImplementedStatus } from "grpc-health-check";

/** SERVICE_UNKNOWN is in the protocol (Watch uses it) though the implementation's type leaves it out. */
export type ServingStatus = ImplementedStatus | "SERVICE_UNKNOWN";
type HealthHost = Parameters<HealthImplementation["addToServer"]>[0];

export interface GrpcHealthServerOptions {
  /** status per service at start; default `{ "": "SERVING" }` */
  statuses?: Record<string, ServingStatus>;
  tls?: { certPath: string; keyPath: string };
  /** false: the server offers no health service */
  health?: boolean;
  /** ms each Check waits before answering */
  delayMs?: number;
}

export interface GrpcHealthServer {
  port: number;
  /** `127.0.0.1:<port>`, a grpc monitor's target */
  target: string;
  setStatus(service: string, status: ServingStatus): void;
  stop(): Promise<void>;
}

/**
 * @example
 * const server = await startGrpcHealthServer({ statuses: { "": "SERVING", "shop.Cart": "NOT_SERVING" } });
 * server.setStatus("shop.Cart", "SERVING");
 * await server.stop();
 */
export async function startGrpcHealthServer(opts: GrpcHealthServerOptions = {}): Promise<GrpcHealthServer> {
  const server = new grpc.Server();
  const held = new Set<ReturnType<typeof setTimeout>>();
  const health = new HealthImplementation((opts.statuses ?? { "": "SERVING" }) as Record<string, ImplementedStatus>);
  if (opts.health !== false) {
    const delayMs = opts.delayMs ?? 0;
    // the implementation registers its handlers itself; with a delay each Check is held that long first
    const host: HealthHost = {
      addService: (service, handlers) => {
        const check = handlers.check as (call: unknown, callback: unknown) => void;
        const later = (call: unknown, callback: unknown) => {
          const timer = setTimeout(() => {
            held.delete(timer);
            check(call, callback);
          }, delayMs);
          held.add(timer);
        };
        server.addService(service as grpc.ServiceDefinition, delayMs === 0 ? handlers : { ...handlers, check: later });
      },
    };
    health.addToServer(host);
  }
  const credentials = opts.tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: readFileSync(opts.tls.certPath), private_key: readFileSync(opts.tls.keyPath) }])
    : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", credentials, (err, p) => (err ? reject(err) : resolve(p))),
  );
  return {
    port,
    target: `127.0.0.1:${port}`,
    setStatus: (service, status) => health.setStatus(service, status as ImplementedStatus),
    stop: async () => {
      for (const timer of held) clearTimeout(timer);
      server.forceShutdown();
    },
  };
}
