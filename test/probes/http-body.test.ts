/**
 * The http probe's body against real servers that stream: the cap counts decoded bytes and ends the
 * read without failing it, a body is read to its end even once the keyword is found, a corrupt
 * encoding says so, a slow body keeps its status, and follow_redirects false judges the redirect
 * itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { AddressInfo } from "node:net";
import { MAX_BODY_BYTES } from "../../src/net/http-exchange.ts";
import { PROBES } from "../../src/probes/index.ts";
import { context, monitor } from "./fixtures.ts";

// base64 of random bytes: text that gzip shrinks by about a quarter, like a real page
const FIRST_LINE = "<title>status: all systems operational</title>\n";
const bigText = (bytes: number) => randomBytes(Math.ceil((bytes * 3) / 4)).toString("base64").slice(0, bytes);
const BIG_PAGE = gzipSync(FIRST_LINE + bigText(8_400_000));
const BIG_JSON = `{"items":[${Array.from({ length: 120_000 }, (_, i) => `{"id":${i},"name":"item number ${i}"}`).join(",")}],"status":"ok"}`;

let server: http.Server;
let base: string;
const timers = new Set<ReturnType<typeof setInterval>>();

beforeAll(async () => {
  server = http.createServer((req, res) => {
    switch (req.url) {
      case "/big-gzip":
        res.writeHead(200, { "content-type": "text/html", "content-encoding": "gzip", "content-length": BIG_PAGE.length });
        return res.end(BIG_PAGE);
      case "/big-json":
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(BIG_JSON);
      case "/corrupt-gzip":
        res.writeHead(200, { "content-encoding": "gzip" });
        return res.end(Buffer.concat([gzipSync("the keyword is not here").subarray(0, 20), Buffer.from("garbage that is not deflate data")]));
      case "/endless": {
        // the keyword first, then a chunk every 20 ms for as long as the client reads (bounded: 30 s)
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("ready: the keyword is here\n");
        const timer = setInterval(() => {
          res.write(bigText(1024) + "\n");
        }, 20);
        timers.add(timer);
        const stop = () => {
          clearInterval(timer);
          timers.delete(timer);
          res.destroy();
        };
        res.on("close", stop);
        setTimeout(stop, 30_000).unref();
        return;
      }
      case "/pause-after-keyword":
        // the keyword ends the first write; the rest comes a moment later
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("status: ok");
        setTimeout(() => res.end(" and more text\n"), 100).unref();
        return;
      case "/stall":
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("the start of a body that never ends");
        return; // nothing more until the client gives up
      case "/moved":
        res.writeHead(302, { location: "/landing" });
        return res.end("moved");
      case "/landing":
        res.writeHead(200);
        return res.end("landed");
      default:
        res.writeHead(404);
        return res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  for (const t of timers) clearInterval(t);
  server.closeAllConnections();
  server.close();
});

const run = (overrides: Parameters<typeof monitor>[0]) => PROBES.http(monitor({ monitor_type: "http", timeout_ms: 10_000, ...overrides }), context());

describe("the body cap counts decoded bytes", () => {
  test("a 6 MB gzip page (8.4 MB decoded) with its keyword on the first line is up", async () => {
    expect(BIG_PAGE.length).toBeGreaterThan(MAX_BODY_BYTES);
    const r = await run({ target: `${base}/big-gzip`, keyword: "all systems operational" });
    expect(r).toMatchObject({ status: "up", http_code: 200, error_code: null });
  });

  test("a keyword beyond the cap is missing, and the message says only the first bytes are read", async () => {
    const r = await run({ target: `${base}/big-gzip`, keyword: "this text is not in the page" });
    expect(r.error_code).toBe("keyword_missing");
    expect(r.error_message).toContain(`not found in ${MAX_BODY_BYTES} bytes (only the first ${MAX_BODY_BYTES} bytes of the body are read)`);
  });

  test("JSON assertions on a body over the cap say only its first bytes are read, not that it is not JSON", async () => {
    expect(BIG_JSON.length).toBeGreaterThan(MAX_BODY_BYTES);
    const r = await run({ target: `${base}/big-json`, api_json_assertions_json: [{ path: "status", op: "equals", value: "ok" }] });
    expect(r.error_code).toBe("assertion_failed");
    expect(r.error_message).toContain(`only the first ${MAX_BODY_BYTES} bytes of the body are read`);
  });

  test("a corrupt gzip body says it could not be decoded", async () => {
    const r = await run({ target: `${base}/corrupt-gzip`, keyword: "keyword" });
    expect(r.error_code).toBe("keyword_missing");
    expect(r.error_message).toContain("the body could not be decoded: gzip decoding failed");
  });
});

test("with a secret, a keyword written just before the secret's first bytes is still found (docs/monitors.md \"Judged with the secrets masked\")", async () => {
  // the first write ends in "k", which starts the token: the keyword must not be lost with a cut secret's mask
  const r = await run({ target: `${base}/pause-after-keyword`, keyword: "status: ok", api_auth_type: "bearer", api_auth_bearer_token: "kappa-secret-token" });
  expect(r).toMatchObject({ status: "up", http_code: 200 });
});

test("a body that never ends is read until the timeout, which keeps the status code, even once the keyword is seen", async () => {
  for (const keyword of ["ready", null]) {
    const r = await run({ target: `${base}/endless`, keyword, timeout_ms: 500 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", http_code: 200 });
    expect(r.error_message).toContain("timed out reading the body");
  }
});

test("a body that stalls after the status line is a body timeout with the status kept", async () => {
  const r = await run({ target: `${base}/stall`, timeout_ms: 400 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", http_code: 200, resolved_ip: "127.0.0.1" });
  expect(r.error_message).toContain(`timed out reading the body of ${base}/stall: status 200 received`);
});

describe("follow_redirects", () => {
  test("true (the default) follows to the final answer", async () => {
    expect(await run({ target: `${base}/moved`, keyword: "landed" })).toMatchObject({ status: "up", http_code: 200 });
  });

  test("false judges the redirect itself: an expected 302 is met, the default codes are not", async () => {
    expect(await run({ target: `${base}/moved`, follow_redirects: false, expected_http_codes: "302" })).toMatchObject({ status: "up", http_code: 302 });
    const r = await run({ target: `${base}/moved`, follow_redirects: false });
    expect(r).toMatchObject({ status: "down", error_code: "http_error", http_code: 302 });
    expect(r.error_message).toContain("expected status 200-299, got 302");
  });
});
