/**
 * The http probe's body against real servers that stream: the cap counts decoded bytes, the read
 * stops once the keyword and body text are found, a cut body says so, a slow body keeps its status,
 * and follow_redirects false judges the redirect itself.
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
let endlessWrites = 0;
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
          endlessWrites++;
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

  test("a keyword beyond the cap is missing, and the message says the body was truncated", async () => {
    const r = await run({ target: `${base}/big-gzip`, keyword: "this text is not in the page" });
    expect(r.error_code).toBe("keyword_missing");
    expect(r.error_message).toContain(`not found in ${MAX_BODY_BYTES} bytes (the body was truncated at ${MAX_BODY_BYTES} bytes)`);
  });

  test("JSON assertions on a body over the cap say it was truncated, not that it is not JSON", async () => {
    expect(BIG_JSON.length).toBeGreaterThan(MAX_BODY_BYTES);
    const r = await run({ target: `${base}/big-json`, api_json_assertions_json: [{ path: "status", op: "equals", value: "ok" }] });
    expect(r.error_code).toBe("assertion_failed");
    expect(r.error_message).toContain(`the body was truncated at ${MAX_BODY_BYTES} bytes`);
  });

  test("a corrupt gzip body says it could not be decoded", async () => {
    const r = await run({ target: `${base}/corrupt-gzip`, keyword: "keyword" });
    expect(r.error_code).toBe("keyword_missing");
    expect(r.error_message).toContain("the body could not be decoded: gzip decoding failed");
  });
});

describe("the read stops once the check is settled", () => {
  test("a body that never ends is up as soon as the keyword and the body text are seen", async () => {
    const r = await run({ target: `${base}/endless`, keyword: "ready", api_expected_body_contains: "keyword is here", timeout_ms: 3000 });
    expect(r).toMatchObject({ status: "up", http_code: 200 });
    // it did not read until the timeout: at most a few chunks went out before the connection closed
    expect(endlessWrites).toBeLessThan(50);
  });

  test("with a secret, the read goes on past the keyword as far as the secret is long", async () => {
    // the first write ends in "k", which starts the token: a read that stopped there would mask it as
    // the start of a cut secret, and lose the keyword with it (docs/monitors.md "Judged with the secrets masked")
    const r = await run({ target: `${base}/pause-after-keyword`, keyword: "status: ok", api_auth_type: "bearer", api_auth_bearer_token: "kappa-secret-token" });
    expect(r).toMatchObject({ status: "up", http_code: 200 });
  });

  test("without text to look for, the same body is read until the timeout, which keeps the status code", async () => {
    const r = await run({ target: `${base}/endless`, timeout_ms: 500 });
    expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", http_code: 200 });
    expect(r.error_message).toContain("timed out reading the body");
  });
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
