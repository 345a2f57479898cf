/**
 * The http probe's verdicts where they once differed from curl and blackbox_exporter, against real
 * servers (docs/monitors.md, "HTTP answers"): answer headers up to 256 KiB, servers that speak only
 * HTTP/2, bodies cut short, deflate raw or zlib-wrapped, and chains of up to 15 redirects.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import net from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { MAX_REDIRECTS } from "../../src/domain/monitor.ts";
import { PROBES } from "../../src/probes/index.ts";
import { makeCerts, type TestCerts } from "../helpers/certs.ts";
import { context, monitor } from "./fixtures.ts";

/** What a raw server writes for a path, once it has read the request. */
type Script = (socket: net.Socket) => void;

const head = (status: string, fields: Record<string, string> | string[]) =>
  `HTTP/1.1 ${status}\r\n${(Array.isArray(fields) ? fields : Object.entries(fields).map(([k, v]) => `${k}: ${v}`)).map((l) => `${l}\r\n`).join("")}\r\n`;

const KEYWORD = "all systems operational";
const BODY = `<title>status: ${KEYWORD}</title>`;
const cookie20k = `session=${"c".repeat(20 * 1024)}`;
/** 250 fields of 1 KiB: 250 KiB of headers in all */
const manyFields = Array.from({ length: 250 }, (_, i) => `x-filler-${i}: ${"f".repeat(1000)}`);
const overLimit = Array.from({ length: 270 }, (_, i) => `x-filler-${i}: ${"f".repeat(1000)}`);

const RAW: Record<string, Script> = {
  "/big-cookie": (s) => s.end(head("200 OK", [`set-cookie: ${cookie20k}`, `content-length: ${BODY.length}`]) + BODY),
  "/many-headers": (s) => s.end(head("200 OK", [...manyFields, `content-length: ${BODY.length}`]) + BODY),
  "/too-many-headers": (s) => s.end(head("200 OK", [...overLimit, `content-length: ${BODY.length}`]) + BODY),
  "/short-length": (s) => s.end(head("200 OK", { "content-length": String(BODY.length + 500) }) + BODY),
  "/short-length-bare": (s) => s.end(head("200 OK", { "content-length": "500" }) + "the first part"),
  "/no-last-chunk": (s) => s.end(head("200 OK", { "transfer-encoding": "chunked" }) + `${BODY.length.toString(16)}\r\n${BODY}\r\n`),
  "/reset-mid-body": (s) => {
    s.write(head("200 OK", { "content-length": "5000" }) + BODY);
    setTimeout(() => s.resetAndDestroy(), 20);
  },
  "/short-gzip": (s) => {
    const gz = gzipSync(BODY + "x".repeat(2000));
    s.end(Buffer.concat([Buffer.from(head("200 OK", { "content-encoding": "gzip", "content-length": String(gz.length) })), gz.subarray(0, 30)]));
  },
  "/close-delimited": (s) => s.end(head("200 OK", { connection: "close" }) + BODY),
  "/deflate-raw": (s) => {
    const d = deflateRawSync(BODY);
    s.end(Buffer.concat([Buffer.from(head("200 OK", { "content-encoding": "deflate", "content-length": String(d.length) })), d]));
  },
  "/deflate-zlib": (s) => {
    const d = deflateSync(BODY);
    s.end(Buffer.concat([Buffer.from(head("200 OK", { "content-encoding": "deflate", "content-length": String(d.length) })), d]));
  },
};

/** A server that answers each path with its script, over a socket, as no HTTP library would. */
function startRawServer(): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
    let got = "";
    s.on("data", (c) => {
      if (got.includes("\r\n\r\n")) return;
      got += c.toString("latin1");
      if (!got.includes("\r\n\r\n")) return;
      const path = /^[A-Z]+ (\S+)/.exec(got)?.[1] ?? "/";
      const hop = /^\/hop\/(\d+)$/.exec(path);
      if (hop) {
        const n = Number(hop[1]);
        return void s.end(n > 0 ? head("302 Found", { location: `/hop/${n - 1}`, "content-length": "0" }) : head("200 OK", { "content-length": String(BODY.length) }) + BODY);
      }
      (RAW[path] ?? ((x: net.Socket) => x.end(head("404 Not Found", { "content-length": "0" }))))(s);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
        close: () => {
          for (const s of sockets) s.destroy();
          server.close();
        },
      }),
    ),
  );
}

interface H2Server { url: string; versions: string[]; close: () => void }

/** node:http2's TLS server: HTTP/2 only (ALPN h2), or also HTTP/1.1 with `allowHTTP1`. */
async function startH2Server(certs: TestCerts, allowHTTP1: boolean): Promise<H2Server> {
  const versions: string[] = [];
  const server = http2.createSecureServer({ cert: readFileSync(certs.certPath), key: readFileSync(certs.keyPath), allowHTTP1 });
  server.on("request", (req, res) => {
    versions.push(req.httpVersion);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const stream = req.stream as http2.ServerHttp2Stream | undefined;
      switch (req.url) {
        case "/echo":
          res.writeHead(200, { "content-type": "application/json" });
          return res.end(JSON.stringify({ method: req.method, body: Buffer.concat(chunks).toString(), authority: req.headers[":authority"] ?? req.headers.host, agent: req.headers["user-agent"] }));
        case "/big-headers":
          // 20 KiB in one cookie, and 250 KiB in all
          res.writeHead(200, { "set-cookie": [cookie20k, ...Array.from({ length: 5 }, (_, i) => `c${i}=${"v".repeat(46 * 1024)}`)] });
          return res.end(BODY);
        case "/short-length":
          stream!.respond({ ":status": 200, "content-length": String(BODY.length + 500) });
          return stream!.end(BODY);
        case "/session-gone":
          stream!.respond({ ":status": 200 });
          stream!.write(BODY);
          return void setTimeout(() => stream!.session?.destroy(), 20);
        case "/then-goaway":
          // a whole answer, then the server closes the session as it shuts down: not a cut
          stream!.respond({ ":status": 200, "content-length": String(BODY.length) });
          stream!.end(BODY);
          return void stream!.session?.close();
        default:
          res.writeHead(200, { "content-type": "text/html" });
          return res.end(BODY);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { url: `https://localhost:${(server.address() as net.AddressInfo).port}`, versions, close: () => server.close() };
}

let raw: Awaited<ReturnType<typeof startRawServer>>;
let dir: string;
let certs: TestCerts;
let h2only: H2Server;
let both: H2Server;

beforeAll(async () => {
  raw = await startRawServer();
  dir = mkdtempSync(join(tmpdir(), "vigil-http-verdicts-"));
  certs = makeCerts(dir);
  h2only = await startH2Server(certs, false);
  both = await startH2Server(certs, true);
});
afterAll(() => {
  raw.close();
  h2only.close();
  both.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (overrides: Parameters<typeof monitor>[0], ctx = context({ extraCa: certs.caPem })) => PROBES.http(monitor({ monitor_type: "http", timeout_ms: 5000, ...overrides }), ctx);

describe("answer headers up to 256 KiB in all are read", () => {
  test("a 20 KiB Set-Cookie is up", async () => {
    expect(await run({ target: `${raw.url}/big-cookie`, keyword: KEYWORD })).toMatchObject({ status: "up", http_code: 200, error_code: null });
  });

  test("250 KiB of headers in 250 fields is up", async () => {
    expect(await run({ target: `${raw.url}/many-headers`, keyword: KEYWORD })).toMatchObject({ status: "up", http_code: 200, error_code: null });
  });

  test("more than 256 KiB is down, and the message says so", async () => {
    const r = await run({ target: `${raw.url}/too-many-headers` });
    expect(r).toMatchObject({ status: "down", error_code: "http_error" });
    expect(r.error_message).toContain("response headers of");
    expect(r.error_message).toContain("are over 256 KiB");
  });
});

describe("servers that speak only HTTP/2 are checked over HTTP/2", () => {
  test("an ALPN-h2-only server is up, its certificate and address read", async () => {
    const r = await run({ target: `${h2only.url}/`, keyword: KEYWORD });
    expect(r).toMatchObject({ status: "up", http_code: 200, error_code: null, resolved_ip: "127.0.0.1" });
    expect(r.ssl_not_after).toBeGreaterThan(Date.now());
    expect(r.timings).toMatchObject({ connect_ms: expect.any(Number), tls_ms: expect.any(Number), ttfb_ms: expect.any(Number) });
    expect(h2only.versions.at(-1)).toBe("2.0");
  });

  test("the method, body, authority and user agent reach it", async () => {
    const r = await run({
      target: `${h2only.url}/echo`, method: "POST", api_body: "payload",
      api_json_assertions_json: [
        { path: "method", op: "equals", value: "POST" },
        { path: "body", op: "equals", value: "payload" },
        { path: "authority", op: "equals", value: new URL(h2only.url).host },
        { path: "agent", op: "contains", value: "Vigil" },
      ],
    });
    expect(r.error_message).toBeNull();
    expect(r.status).toBe("up");
  });

  test("its answer headers are read up to 256 KiB too", async () => {
    expect(await run({ target: `${h2only.url}/big-headers`, keyword: KEYWORD })).toMatchObject({ status: "up", error_code: null });
  });

  test("a server that takes both is checked over HTTP/1.1, the cheaper per check", async () => {
    expect(await run({ target: `${both.url}/`, keyword: KEYWORD })).toMatchObject({ status: "up", error_code: null });
    expect(both.versions.at(-1)).toBe("1.1");
  });

  test("the private-target guard covers it", async () => {
    const r = await run({ target: `${h2only.url}/` }, context({ extraCa: certs.caPem, blockPrivateTargets: true }));
    expect(r).toMatchObject({ status: "down", error_code: "target_blocked" });
  });

  test("a stream that ends before its Content-Length, or whose session goes mid-body, is body_truncated", async () => {
    const short = await run({ target: `${h2only.url}/short-length`, keyword: KEYWORD });
    expect(short).toMatchObject({ status: "down", error_code: "body_truncated", http_code: 200 });
    expect(short.error_message).toContain(`ended after ${BODY.length} of the ${BODY.length + 500} bytes its Content-Length announced`);
    const gone = await run({ target: `${h2only.url}/session-gone`, keyword: KEYWORD });
    expect(gone).toMatchObject({ status: "down", error_code: "body_truncated", http_code: 200 });
    expect(gone.error_message).toContain(`the HTTP/2 stream of ${h2only.url}/session-gone was cut after ${BODY.length} bytes of body`);
  });

  test("a whole answer followed by the server closing its session is up", async () => {
    expect(await run({ target: `${h2only.url}/then-goaway`, keyword: KEYWORD })).toMatchObject({ status: "up", error_code: null });
  });
});

describe("a body that ends before its Content-Length or its last chunk is body_truncated", () => {
  test.each([
    ["/short-length", KEYWORD, `ended after ${BODY.length} of the ${BODY.length + 500} bytes its Content-Length announced`],
    ["/short-length", null, `ended after ${BODY.length} of the ${BODY.length + 500} bytes its Content-Length announced`],
    ["/short-length-bare", null, "ended after 14 of the 500 bytes its Content-Length announced"],
    ["/no-last-chunk", KEYWORD, `ended before its last chunk, after ${BODY.length} bytes`],
    ["/no-last-chunk", null, "ended before its last chunk"],
    ["/reset-mid-body", KEYWORD, `ended after ${BODY.length} of the 5000 bytes its Content-Length announced`],
    ["/short-gzip", KEYWORD, "ended after 30 of the"],
  ])("%s with keyword %p", async (path, keyword, words) => {
    const r = await run({ target: `${raw.url}${path}`, keyword });
    expect(r).toMatchObject({ status: "down", error_code: "body_truncated", http_code: 200, resolved_ip: "127.0.0.1" });
    expect(r.error_message).toContain(`the body of ${raw.url}${path} `);
    expect(r.error_message).toContain(words);
  });

  test("a body that ends with the connection, when nothing announced its length, is whole", async () => {
    expect(await run({ target: `${raw.url}/close-delimited`, keyword: KEYWORD })).toMatchObject({ status: "up", error_code: null });
  });

  test("a synthetic step whose answer is cut short fails with body_truncated", async () => {
    const r = await run({ synthetic_enabled: true, synthetic_steps_json: { steps: [{ name: "page", url: `${raw.url}/short-length` }] } });
    expect(r).toMatchObject({ status: "down", error_code: "body_truncated" });
    expect(r.error_message).toStartWith('step "page" failed: the body of');
  });
});

describe("Content-Encoding: deflate is read raw or zlib-wrapped", () => {
  test.each(["/deflate-raw", "/deflate-zlib"])("%s", async (path) => {
    expect(await run({ target: `${raw.url}${path}`, keyword: KEYWORD })).toMatchObject({ status: "up", error_code: null });
  });
});

describe(`redirects: up to ${MAX_REDIRECTS} are followed`, () => {
  test.each([11, 15])("a chain of %i is up", async (hops) => {
    expect(await run({ target: `${raw.url}/hop/${hops}`, keyword: KEYWORD })).toMatchObject({ status: "up", http_code: 200, error_code: null });
  });

  test("a chain of 16 is too_many_redirects", async () => {
    const r = await run({ target: `${raw.url}/hop/16` });
    expect(r).toMatchObject({ status: "down", error_code: "too_many_redirects", http_code: 302 });
    expect(r.error_message).toBe("more than 15 redirects, last to /hop/0");
  });
});
