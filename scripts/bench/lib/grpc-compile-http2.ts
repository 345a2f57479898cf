/**
 * Built with `bun build --compile` by the grpc-clients bench and run as `probe HOST:PORT [tls CA_FILE]`:
 * one check with Vigil's grpc probe (node:http2), printed as a JSON line.
 */
import { readFileSync } from "node:fs";
import { grpcProbe } from "../../../src/probes/grpc.ts";
import { context, monitor } from "../../../test/probes/fixtures.ts";

const [target, tls, caFile] = process.argv.slice(2);
const r = await grpcProbe(monitor({ target: target!, grpc_tls: tls === "tls" }), context({ extraCa: caFile ? readFileSync(caFile, "utf8") : undefined }));
console.log(JSON.stringify({ ok: r.status === "up", status: r.status, error: r.error_message, ssl_not_after: r.ssl_not_after }));
