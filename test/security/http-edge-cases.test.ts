/**
 * Every request gets an answer (README "API behaviour", and "Security": Limits). A body over the
 * limit, whatever its size or framing, is a 413 with the JSON error body, and a client still sending
 * reads it: the server reads and drops the rest until the client is done (the connection stays
 * usable) or --idle-timeout passes, instead of resetting the connection. A method Bun hands us gets
 * 405 with Allow on a known path and 404 elsewhere. The log says what happened. Raw sockets, because
 * fetch sends an unknown method as GET and stops sending its body at the first answer.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { issuePeerToken } from "../../src/auth/peer-tokens.ts";
import { rawExchange, type BodyPlan, type RawExchange } from "../helpers/raw-http.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, type WebClient } from "../web/helpers.ts";

const IDLE_SEC = 5;
const MiB = 1024 * 1024;
let s: TestServer;
let pingToken: string;
let peerToken: string;
let web: WebClient;

beforeAll(async () => {
  s = await startTestServer(["--idle-timeout", String(IDLE_SEC)]);
  const job = await s.api("POST", "/api/v1/monitors", { name: "job", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000 });
  pingToken = job.json.data.attributes.heartbeat_token;
  peerToken = (await issuePeerToken(s.ctx.db, { region: "eu", label: "edge", accounts: "all", now: Date.now() })).token;
  await addUser(s, "edge");
  web = await signedInClient(s, "edge");
});
afterAll(() => s?.stop());

const apiHeaders = () => ({ authorization: `Bearer ${s.token}`, "content-type": "application/json" });

/** What a client read: a status line, the error code of a JSON body, and no reset before it. */
function seen(x: RawExchange) {
  let code: unknown = null;
  try {
    code = JSON.parse(x.answer?.text ?? "").error?.code ?? null;
  } catch {}
  return { status: x.answer?.status ?? null, json: (x.answer?.headers["content-type"] ?? "").startsWith("application/json"), code, errorBeforeAnswer: x.errorBeforeAnswer };
}

const TOO_LARGE = { status: 413, json: true, code: "payload_too_large", errorBeforeAnswer: null };

function logsSince(from: number) {
  return s.logs.slice(from);
}

test("a body over 1 MiB on /api/v1 is a 413 with the JSON error body whatever its size or framing, read while the client is still sending", async () => {
  const from = s.logs.length;
  const bodies: Record<string, BodyPlan & { total: number }> = {
    "Content-Length just over 2 MiB": { framing: "length", total: 2 * MiB + 1 },
    "Content-Length 3 MB": { framing: "length", total: 3_000_000 },
    "Content-Length 50 MB": { framing: "length", total: 50_000_000 },
    "chunked, 5 MB": { framing: "chunked", total: 5_000_000 },
  };
  for (const [what, body] of Object.entries(bodies)) {
    const x = await rawExchange(s.port, { method: "POST", path: "/api/v1/monitors", headers: apiHeaders(), body });
    expect({ what, ...seen(x) }).toEqual({ what, ...TOO_LARGE });
    // answered early, so a client that watches for the answer can stop; one that does not sends
    // its whole body, which the server reads and drops
    if (body.total === 50_000_000) expect(x.sentAtAnswer).toBeLessThan(body.total);
    expect({ what, sent: x.sent }).toEqual({ what, sent: body.total });
  }
  const lines = logsSince(from).filter((l) => l.msg === "request" && l.path === "/api/v1/monitors");
  expect(lines.map((l) => l.status)).toEqual([413, 413, 413, 413]);
  expect(logsSince(from).filter((l) => l.msg === "unexpected failure")).toEqual([]);
}, 60_000);

test("a ping body far over the limit is a 413 with the JSON error body whatever its size or framing, and is logged", async () => {
  const from = s.logs.length;
  const bodies: Record<string, BodyPlan & { total: number }> = {
    "Content-Length 12 MB": { framing: "length", total: 12_000_000 },
    "Content-Length 50 MB": { framing: "length", total: 50_000_000 },
    "chunked, 16 MB": { framing: "chunked", total: 16_000_000 },
  };
  for (const [what, body] of Object.entries(bodies)) {
    const x = await rawExchange(s.port, { method: "POST", path: `/h/${pingToken}`, body });
    expect({ what, ...seen(x) }).toEqual({ what, ...TOO_LARGE });
  }
  const refused = logsSince(from).filter((l) => l.msg === "ping refused");
  expect(refused.map((l) => [l.status, l.code, l.path])).toEqual(Array(3).fill([413, "payload_too_large", "/h/<token>"]));
  expect(s.logText()).not.toContain(pingToken);
  expect(logsSince(from).filter((l) => l.msg === "unexpected failure")).toEqual([]);
}, 60_000);

test("after a 413 the server reads and drops the rest of the body: the same connection then answers the next request", async () => {
  const x = await rawExchange(s.port, {
    method: "POST",
    path: "/api/v1/monitors",
    headers: apiHeaders(),
    body: { framing: "length", total: 3_000_000 },
    then: "GET /healthz HTTP/1.1\r\nhost: localhost\r\n\r\n",
  });
  expect(seen(x)).toEqual(TOO_LARGE);
  expect(x.sent).toBe(3_000_000);
  expect(x.second?.status).toBe(200);
});

test("a client that goes on sending after its 413 is cut off by the server once --idle-timeout has passed", async () => {
  // 64 KiB every 50 ms: 50 MB would take the client about 40 s
  const x = await rawExchange(s.port, { method: "POST", path: "/api/v1/monitors", headers: apiHeaders(), body: { framing: "length", total: 50_000_000 }, everyMs: 50, deadlineMs: 120_000 });
  expect(seen(x)).toEqual(TOO_LARGE);
  expect(x.closedByServer).toBe(true);
  expect(x.sent).toBeLessThan(50_000_000);
}, 150_000);

test("a client that closes its connection mid-body is logged as such, not as an unexpected failure", async () => {
  const from = s.logs.length;
  // a few pieces of a 1 MB body, then the client gives up
  const x = await rawExchange(s.port, { method: "POST", path: "/api/v1/monitors", headers: apiHeaders(), body: { framing: "length", total: 1_000_000 }, everyMs: 50, deadlineMs: 400 });
  expect(x.answer).toBeNull();
  const line = await waitFor(() => logsSince(from).find((l) => l.msg === "request body cut short: the client closed the connection"));
  expect(line).toMatchObject({ method: "POST", path: "/api/v1/monitors", status: 400 });
  expect(logsSince(from).filter((l) => l.msg === "unexpected failure")).toEqual([]);
}, 20_000);

test("PROPFIND, PURGE, M-SEARCH and QUERY get 405 with Allow on a known path and 404 elsewhere, with the JSON error body", async () => {
  const from = s.logs.length;
  const paths: [string, number, string | undefined][] = [
    ["/api/v1/monitors", 405, "GET, HEAD, POST"],
    [`/h/${pingToken}`, 405, "GET, HEAD, POST"],
    ["/", 405, "GET, HEAD"],
    ["/login", 405, "GET, HEAD, POST"],
    ["/api/v1/openapi.json", 405, "GET, HEAD"],
    ["/api/v1/unknown", 404, undefined],
    ["/no-such-page", 404, undefined],
  ];
  for (const method of ["PROPFIND", "PURGE", "M-SEARCH", "QUERY"]) {
    for (const [path, status, allow] of paths) {
      const x = await rawExchange(s.port, { method, path, headers: { authorization: `Bearer ${s.token}`, "content-length": "0" } });
      const want = { status, json: true, code: status === 405 ? "method_not_allowed" : "not_found", errorBeforeAnswer: null };
      expect({ method, path, ...seen(x), allow: x.answer?.headers.allow }).toEqual({ method, path, ...want, allow });
    }
  }
  expect(logsSince(from).filter((l) => l.msg === "ping refused").map((l) => l.status)).toEqual([405, 405, 405, 405]);
});

// Bun 1.4.5 closes the connection, without a byte, on a method of letters and hyphens outside its
// own table of 35 (FOO, BREW, get): its router finds no handler and closes before any of our code
// runs, and Bun.serve has no option to change that (oven-sh/bun#6556; the parser's hook for such
// requests is set only by node:http servers, see README "API behaviour"). These tests say what we
// want and are marked failing until Bun answers such methods; then drop `.failing`.
test.failing("FOO gets a status line too (Bun closes the connection first: oven-sh/bun#6556)", async () => {
  for (const path of ["/api/v1/monitors", `/h/${pingToken}`, "/", "/api/v1/unknown"]) {
    const x = await rawExchange(s.port, { method: "FOO", path, headers: { authorization: `Bearer ${s.token}`, "content-length": "0" } });
    expect({ path, status: x.answer?.status ?? null }).toEqual({ path, status: path === "/api/v1/unknown" ? 404 : 405 });
  }
});

test.failing("a bare Bun.serve never sees FOO either: the connection closes before fetch runs", async () => {
  let reached = false;
  const bare = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => {
      reached = true;
      return new Response("{}", { status: 405, headers: { allow: "GET" } });
    },
  });
  try {
    const x = await rawExchange(bare.port!, { method: "FOO", path: "/", headers: { "content-length": "0" } });
    expect({ status: x.answer?.status ?? null, reached }).toEqual({ status: 405, reached: true });
  } finally {
    bare.stop(true);
  }
});

/** A path of the route list with its parameters filled in, and the credentials that reach its body reader. */
function target(route: { method: string; path: string }): { method: string; path: string; headers: Record<string, string> } {
  // ids of nothing: a DELETE must not remove what the other routes need
  const path = route.path.replace(":token", pingToken).replace(":action", "fail").replace(/:\w+/g, "999999");
  const method = route.method === "ALL" ? "POST" : route.method;
  if (path.startsWith("/api/v1")) return { method, path, headers: apiHeaders() };
  if (path.startsWith("/peer/v1")) return { method, path, headers: { authorization: `Bearer ${peerToken}`, "content-type": "application/json" } };
  return { method, path, headers: { cookie: web.cookieHeader(), origin: s.url, "content-type": "application/x-www-form-urlencoded" } };
}

// Bun closes the connection as soon as the answer is written when the client asked for that
// (Connection: close, what Python's urllib sends) or speaks HTTP/1.0; a client still sending its body
// then reads EPIPE or a reset instead of the answer. On a busy server the answer is ready before the
// body is in; the pauses between pieces make that happen every time. The server reads and drops the
// rest of the body before it answers (up to a bound), so the connection closes on a client done sending.
const closingClient = async (r: { method: string; path: string; headers: Record<string, string> }, version: "1.0" | "1.1") => {
  const total = 2_000_000;
  const x = await rawExchange(s.port, { ...r, version, headers: { ...r.headers, ...(version === "1.1" ? { connection: "close" } : {}) }, body: { framing: "length", total }, everyMs: 5, deadlineMs: 20_000 });
  return !x.answer || x.errorBeforeAnswer || x.sent !== total ? `${r.method} ${r.path}: status ${x.answer?.status ?? "none"}, ${x.sent} of ${total} bytes sent, ${x.errorBeforeAnswer ?? "no error before the answer"}` : null;
};

test("a client still sending a 2 MB body when the answer is ready, on a connection that closes after it, gets the answer after its whole body, on every route", async () => {
  const routes = [
    ...s.instance.routes.map(target),
    // what a fuzzer sent besides the route list: paths and methods that are no route at all
    { method: "PUT", path: "/s/some-page", headers: {} },
    { method: "PATCH", path: "/api/v1/notification-channels", headers: apiHeaders() },
    { method: "POST", path: "//", headers: {} },
  ].filter((r) => r.method !== "GET" && r.method !== "HEAD");
  expect(routes.length).toBeGreaterThan(40);
  const cut: string[] = [];
  for (let i = 0; i < routes.length; i += 8) {
    const batch = await Promise.all(routes.slice(i, i + 8).map((r) => closingClient(r, "1.1")));
    cut.push(...batch.filter((c): c is string => c !== null));
  }
  // HTTP/1.0 says nothing of the connection in its headers: it closes after every answer
  for (const r of routes.filter((r) => ["/api/v1/monitors", "/s/some-page", "/login", "/h/:token"].some((p) => r.path === p.replace(":token", pingToken)))) {
    const c = await closingClient(r, "1.0");
    if (c) cut.push(`HTTP/1.0 ${c}`);
  }
  expect(cut).toEqual([]);
  expect(s.logs.filter((l) => l.msg === "unexpected failure")).toEqual([]);
}, 120_000);

// Bun reads and drops a GET's or HEAD's body itself (the handler's Request has none), then closes
// such a connection at once: a client still sending its body reads a reset. Nothing of ours can read
// that body first. Marked failing until Bun drains it before closing; then drop `.failing`.
test.failing("GET / and GET // with a 2 MB body on a connection that closes after the answer (Bun closes on the client still sending)", async () => {
  const cut = (await Promise.all([{ method: "GET", path: "/", headers: {} }, { method: "GET", path: "//", headers: {} }].map((r) => closingClient(r, "1.1")))).filter((c) => c !== null);
  expect(cut).toEqual([]);
});

test("no route reads a whole body without a limit: every route answers a chunked body that never ends", async () => {
  const routes = s.instance.routes;
  expect(routes.length).toBeGreaterThan(50);
  const unanswered: string[] = [];
  const answered: Record<string, number> = {};
  // 24 MiB, beyond every limit, and never the last chunk: a route that reads to the end never answers
  const body: BodyPlan = { framing: "chunked", total: 24 * MiB, unterminated: true };
  for (let i = 0; i < routes.length; i += 8) {
    await Promise.all(
      routes.slice(i, i + 8).map(async (route) => {
        const x = await rawExchange(s.port, { ...target(route), body, stopOnAnswer: true, headersOnly: true, deadlineMs: 15_000 });
        if (x.answer) answered[`${route.method} ${route.path}`] = x.answer.status;
        else unanswered.push(`${route.method} ${route.path} (${Math.round(x.sent / MiB)} MiB sent, ${x.errorBeforeAnswer ?? "no error"})`);
      }),
    );
  }
  expect(unanswered).toEqual([]);
  // the readers with a limit were reached, not only refusals before the body: the API's, the
  // peers', the ping's, and the web forms' (a form over its limit cannot be read, so it is refused)
  expect(answered).toMatchObject({ "POST /api/v1/monitors": 413, "ALL /peer/v1/results": 413, "ALL /h/:token": 413, "POST /login": 403, "POST /monitors": 400 });
  expect(s.logs.filter((l) => l.msg === "unexpected failure")).toEqual([]);
}, 120_000);
