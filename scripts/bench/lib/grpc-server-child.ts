/**
 * The grpc-clients bench's server, in a process of its own so its CPU is not counted as the
 * clients': a plaintext and a TLS health server (test/helpers/grpc-health-server.ts), printing one
 * JSON line `{ plain, tls }` with their ports. Run as `bun grpc-server-child.ts CERT KEY`; stops on SIGTERM.
 */
import { startGrpcHealthServer } from "../../../test/helpers/grpc-health-server.ts";

const [certPath, keyPath] = process.argv.slice(2);
const statuses = { "": "SERVING", down: "NOT_SERVING" } as const;
const plain = await startGrpcHealthServer({ statuses });
const tls = await startGrpcHealthServer({ statuses, tls: { certPath: certPath!, keyPath: keyPath! } });
console.log(JSON.stringify({ plain: plain.port, tls: tls.port }));
process.on("SIGTERM", async () => {
  await Promise.all([plain.stop(), tls.stop()]);
  process.exit(0);
});
