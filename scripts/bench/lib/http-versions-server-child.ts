/**
 * The http-versions bench's servers, in a process of their own so their CPU is not counted as the
 * checks': node:http2 TLS servers answering a page of BYTES bytes that starts with the HTTP version
 * it was asked over, one taking HTTP/1.1 and HTTP/2 (ALPN), one HTTP/2 only. Prints one JSON line
 * `{ both, h2only }` with their ports. Run as `bun http-versions-server-child.ts CERT KEY BYTES`;
 * stops on SIGTERM.
 */
import http2 from "node:http2";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";

const [certPath, keyPath, bytes] = process.argv.slice(2);
const filler = "x".repeat(Math.max(0, Number(bytes) - 4));
const cert = readFileSync(certPath!);
const key = readFileSync(keyPath!);

function serve(allowHTTP1: boolean): Promise<{ port: number; close: () => void }> {
  const server = http2.createSecureServer({ cert, key, allowHTTP1 }, (req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(req.httpVersion + "\n" + filler);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ port: (server.address() as AddressInfo).port, close: () => server.close() })));
}

const both = await serve(true);
const h2only = await serve(false);
console.log(JSON.stringify({ both: both.port, h2only: h2only.port }));
process.on("SIGTERM", () => {
  both.close();
  h2only.close();
  process.exit(0);
});
