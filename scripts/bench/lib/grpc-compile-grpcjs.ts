/**
 * Built with `bun build --compile` by the grpc-clients bench and run as `probe HOST:PORT [tls CA_FILE]`:
 * one check with the @grpc/grpc-js candidate, printed as a JSON line.
 */
import { lookup } from "node:dns/promises";
import { readFileSync } from "node:fs";
import { grpcJsCheck } from "./grpc-js-check.ts";

const [target, tls, caFile] = process.argv.slice(2);
const [host, port] = target!.split(":");
// the probe connects to the address it resolved and judged, so the candidate is given one too
const { address } = await lookup(host!, { family: 4 });
const answer = await grpcJsCheck({ ip: address, host: host!, port: Number(port), service: "", tls: tls === "tls", ca: caFile ? readFileSync(caFile, "utf8") : undefined, timeoutMs: 3000 });
console.log(JSON.stringify({ ok: answer === "SERVING", answer }));
