import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashToken } from "../../src/lib/tokens.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, PASSWORD, signedInClient, unescape, WebClient } from "./helpers.ts";

describe("first-run setup", () => {
  let s: TestServer;
  beforeAll(async () => (s = await startTestServer()));
  afterAll(() => s.stop());

  test("with no user, / and /login lead to /setup; a forged or tokenless setup is refused; a good one signs in", async () => {
    const c = new WebClient(s.url);
    expect((await c.get("/")).res.headers.get("location")).toBe("/setup");
    expect((await c.get("/login")).res.headers.get("location")).toBe("/setup");
    const setup = await c.get("/setup");
    expect(setup.res.status).toBe(200);
    expect(setup.text).toContain("Welcome to Vigil");
    const fields = { username: "admin", password: PASSWORD, password2: PASSWORD };
    // another origin, with the right token and cookie: refused
    expect((await c.post("/setup", fields, { headers: { origin: "http://evil.example" } })).res.status).toBe(403);
    // no CSRF field: refused
    expect((await c.post("/setup", fields, { csrf: null })).res.status).toBe(403);
    // a token that is not the cookie's: refused
    expect((await c.post("/setup", fields, { csrf: "x".repeat(32) })).res.status).toBe(403);
    // neither Origin nor Referer: refused
    const bare = await fetch(s.url + "/setup", { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", cookie: c.cookieHeader() }, body: new URLSearchParams({ ...fields, _csrf: c.lastCsrf! }) });
    expect(bare.status).toBe(403);
    // validation: mismatched and too short passwords
    expect((await c.post("/setup", { ...fields, password2: "something else entirely" })).res.status).toBe(422);
    const short = await c.post("/setup", { username: "admin", password: "short", password2: "short" });
    expect(short.res.status).toBe(422);
    expect(short.text).toContain("Password must be at least 10 characters");
    const ok = await c.post("/setup", fields);
    expect(ok.res.status).toBe(303);
    expect(ok.res.headers.get("location")).toBe("/");
    expect(c.cookies.has("vigil_session")).toBe(true);
    const home = await c.get("/");
    expect(home.res.status).toBe(200);
    expect(home.text).toContain("admin · default");
    // the user is in account default with an argon2id hash
    const user = await s.ctx.db.selectFrom("users").selectAll().executeTakeFirstOrThrow();
    expect(user.password_hash).toStartWith("$argon2id$");
  });

  test("once a user exists the setup screen is gone, for GET and POST", async () => {
    const c = new WebClient(s.url);
    expect((await c.get("/setup")).res.headers.get("location")).toBe("/login");
    await c.get("/login");
    const again = await c.post("/setup", { username: "intruder", password: PASSWORD, password2: PASSWORD });
    expect(again.res.headers.get("location")).toBe("/login");
    const n = await s.ctx.db.selectFrom("users").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(1);
  });
});

// These tests share one server, so one sign-in limiter: they stay under its 10 wrong passwords per
// user name and address (only failures count).
describe("sign-in, sessions, sign-out", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await addUser(s, "alice");
  });
  afterAll(() => s.stop());

  test("signed out, a dashboard page redirects to /login with a local next; an outside next is ignored", async () => {
    const c = new WebClient(s.url);
    expect((await c.get("/status-pages?x=1")).res.headers.get("location")).toBe("/login?next=%2Fstatus-pages%3Fx%3D1");
    await c.get("/login");
    for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example"]) {
      const r = await c.post("/login", { username: "alice", password: PASSWORD, next });
      expect(r.res.headers.get("location")).toBe("/");
      c.cookies.delete("vigil_session");
      await c.get("/login");
    }
  });

  test("the session cookie is HttpOnly, SameSite=Lax, not Secure on plain http; only its hash is stored", async () => {
    const c = new WebClient(s.url);
    await c.get("/login");
    const r = await c.post("/login", { username: "alice", password: PASSWORD, next: "/tokens" });
    expect(r.res.status).toBe(303);
    expect(r.res.headers.get("location")).toBe("/tokens");
    const set = r.res.headers.getSetCookie().find((x) => x.startsWith("vigil_session="))!;
    expect(set).toContain("HttpOnly");
    expect(set).toContain("SameSite=Lax");
    expect(set).toContain("Path=/");
    expect(set).toMatch(/Max-Age=2592000/);
    expect(set).not.toContain("Secure");
    const id = c.cookies.get("vigil_session")!;
    expect(id.length).toBeGreaterThanOrEqual(40);
    const rows = await s.ctx.db.selectFrom("sessions").selectAll().execute();
    expect(rows.some((x) => x.id_hash === id)).toBe(false);
    expect(rows.some((x) => x.id_hash === hashToken(id))).toBe(true);
  });

  test("a wrong password or an unknown user gets the same message and 401", async () => {
    const c = new WebClient(s.url);
    await c.get("/login");
    const a = await c.post("/login", { username: "alice", password: "not the password" });
    const b = await c.post("/login", { username: "nobody", password: "not the password" });
    expect(a.res.status).toBe(401);
    expect(b.res.status).toBe(401);
    expect(a.text).toContain("Wrong username or password.");
    expect(b.text).toContain("Wrong username or password.");
    expect(c.cookies.has("vigil_session")).toBe(false);
  });

  test("sign-out ends the session server-side; the old cookie no longer works", async () => {
    const c = await signedInClient(s, "alice");
    const old = c.cookies.get("vigil_session")!;
    // sign-out needs the CSRF token too
    expect((await c.post("/logout", {}, { csrf: "wrong" })).res.status).toBe(403);
    const out = await c.post("/logout", {});
    expect(out.res.headers.get("location")).toBe("/login");
    const replay = await fetch(s.url + "/", { redirect: "manual", headers: { cookie: `vigil_session=${old}` } });
    expect(replay.status).toBe(303);
    expect(replay.headers.get("location")).toStartWith("/login");
  });

});

describe("the path to return to after sign-in", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await addUser(s, "bob");
  });
  afterAll(() => s.stop());

  test("next keeps a same-site path's percent-encoding as sent; NUL, control and bidi characters fall back to / (never a 500)", async () => {
    const anon = new WebClient(s.url);
    const cases: [string, string][] = [
      ["/%C3%A9", "/%C3%A9"], ["%2F%25C3%25A9", "/%C3%A9"], ["/monitors%3Fq%3D%25C3%25A9", "/monitors?q=%C3%A9"], ["/a%20b", "/"],
      ["/%00", "/"], ["/x%00y", "/"], ["/%0D%0ASet-Cookie:x=1", "/"], ["/%09/evil.example", "/"], ["/%7F", "/"], ["/%C2%85", "/"],
      ["/%E2%80%AE", "/"], ["/abc%E2%80%AEgpj.exe", "/"], ["/%E2%81%A6x", "/"], ["/%E2%80%8F", "/"], ["/%EF%BB%BF", "/"],
      ["%2F%2Fevil.example", "/"], ["/%5Cevil.example", "/"], ["https%3A%2F%2Fevil.example", "/"], ["", "/"],
    ];
    // signed out: the form carries the cleaned next
    for (const [given, want] of cases) {
      const { res, text } = await anon.get(`/login?next=${given}`);
      const carried = unescape(/name="next" value="([^"]*)"/.exec(text)?.[1] ?? "(none)");
      expect({ given, status: res.status, carried }).toEqual({ given, status: 200, carried: want });
    }
    const c = await signedInClient(s, "bob");
    // signed in: /login sends the visitor on at once
    for (const [given, want] of cases) {
      const { res } = await c.get(`/login?next=${given}`);
      expect({ given, status: res.status, location: res.headers.get("location") }).toEqual({ given, status: 303, location: want });
    }
    // the form's next, as a browser posts it back
    for (const [next, want] of [["/é", "/%C3%A9"], ["/%C3%A9", "/%C3%A9"], ["/\u0000", "/"], ["/\u202e", "/"], ["/a\r\nx: y", "/"]] as const) {
      const p = new WebClient(s.url);
      await p.get("/login");
      const r = await p.post("/login", { username: "bob", password: PASSWORD, next });
      expect({ next, status: r.res.status, location: r.res.headers.get("location") }).toEqual({ next, status: 303, location: want });
    }
  });
});

// Where a browser goes: the Location resolved against the page it is on. Decided on the normalised
// path, so every spelling of "/../" before a second slash is caught, not one string.
describe("next= cannot leave the site, whatever dot segments or encodings it uses", () => {
  let s: TestServer;
  const users = ["dot0", "dot1", "dot2", "dot3"];
  beforeAll(async () => {
    // a trusted proxy, so each sign-in below can come from its own client address (the limit is per IP and per user)
    s = await startTestServer(["--trusted-proxy", "127.0.0.1"]);
    for (const u of users) await addUser(s, u);
  });
  afterAll(() => s.stop());

  // [next as the server receives it, the Location it must answer]
  const cases: [string, string][] = [
    ["/..//evil.com", "/"],
    ["/%2e%2e//evil.com", "/"],
    ["/%2E%2E//evil.com", "/"],
    ["/.%2e//evil.com", "/"],
    ["/%2e.//evil.com", "/"],
    ["/./..//evil.com", "/"],
    ["/a/../..//evil.com/x", "/"],
    ["/a/b/../../..//evil.com", "/"],
    ["/..//evil.com/?x=1#y", "/"],
    ["//evil.com", "/"],
    ["/\\evil.com", "/"],
    ["/..\\evil.com", "/"],
    ["https://evil.com", "/"],
    ["http:evil.com", "/"],
    ["\t//evil.com", "/"],
    ["/\t/evil.com", "/"],
    ["/\n/evil.com", "/"],
    ["/.\t./\n/evil.com", "/"],
    // same-site paths that only look odd: sent on normalised, still on this site
    ["/%5cevil.com", "/%5cevil.com"],
    ["/..%2f/evil.com", "/..%2f/evil.com"],
    ["/monitors/3?x=1", "/monitors/3?x=1"],
    ["/monitors/3/../4", "/monitors/4"],
    ["/status-pages/./2/edit#updates", "/status-pages/2/edit#updates"],
  ];
  const ORIGIN = "http://vigil.invalid";

  test("a real sign-in POST answers the normalised same-site path or /", async () => {
    let i = 0;
    for (const [next, want] of cases) {
      const c = new WebClient(s.url);
      const ip = { "x-forwarded-for": `198.51.100.${++i}` };
      await c.get("/login", ip);
      const r = await c.post("/login", { username: users[i % users.length]!, password: PASSWORD, next }, { headers: ip });
      const location = r.res.headers.get("location");
      expect({ next, status: r.res.status, location }).toEqual({ next, status: 303, location: want });
      expect(new URL(location!, ORIGIN).origin).toBe(ORIGIN);
    }
  });

  test("GET /login of a signed-in user sends them to the same place", async () => {
    const c = await signedInClient(s, users[0]!);
    for (const [next, want] of cases) {
      const { res } = await c.get(`/login?${new URLSearchParams({ next })}`);
      const location = res.headers.get("location");
      expect({ next, status: res.status, location }).toEqual({ next, status: 303, location: want });
      expect(new URL(location!, ORIGIN).origin).toBe(ORIGIN);
    }
  });

  test("signed out, the sign-in form carries the cleaned path, never the raw one", async () => {
    const anon = new WebClient(s.url);
    for (const [next, want] of cases) {
      const { text } = await anon.get(`/login?${new URLSearchParams({ next })}`);
      expect({ next, carried: unescape(/name="next" value="([^"]*)"/.exec(text)?.[1] ?? "(none)") }).toEqual({ next, carried: want });
    }
  });
});

describe("sessions and CSRF", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await addUser(s, "alice");
  });
  afterAll(() => s.stop());

  test("sessions slide: a use late in the lifetime pushes the expiry out to 30 days again", async () => {
    const c = await signedInClient(s, "alice");
    const idHash = hashToken(c.cookies.get("vigil_session")!);
    const soon = Date.now() + 2 * 86_400_000;
    await s.ctx.db.updateTable("sessions").set({ expires_at: soon }).where("id_hash", "=", idHash).execute();
    expect((await c.get("/")).res.status).toBe(200);
    const row = await s.ctx.db.selectFrom("sessions").select("expires_at").where("id_hash", "=", idHash).executeTakeFirstOrThrow();
    expect(row.expires_at).toBeGreaterThan(Date.now() + 29 * 86_400_000);
  });

  test("an expired session is refused", async () => {
    const c = await signedInClient(s, "alice");
    await s.ctx.db.updateTable("sessions").set({ expires_at: Date.now() - 1 }).where("id_hash", "=", hashToken(c.cookies.get("vigil_session")!)).execute();
    expect((await c.get("/")).res.headers.get("location")).toStartWith("/login");
  });

  test("dashboard forms without the session's CSRF token, or from another origin, are refused with 403", async () => {
    const c = await signedInClient(s, "alice");
    const attrs = { monitor_type: "http", name: "csrf probe", target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000" };
    const cases = [
      await c.post("/monitors", attrs, { csrf: null }),
      await c.post("/monitors", attrs, { csrf: "forged-token-forged-token" }),
      await c.post("/monitors", attrs, { headers: { origin: "http://evil.example" } }),
      await c.post("/tokens", { label: "x", scopes: "monitors:read" }, { headers: { origin: "null" } }),
    ];
    for (const r of cases) {
      expect(r.res.status).toBe(403);
      expect(r.text).toContain("Request refused");
    }
    const { rows } = { rows: await s.ctx.db.selectFrom("monitors").select("name").where("name", "=", "csrf probe").execute() };
    expect(rows).toHaveLength(0);
    // a Referer of this origin stands in for a missing Origin
    const viaReferer = await fetch(s.url + "/monitors", {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: c.cookieHeader(), referer: s.url + "/monitors/new?type=http" },
      body: new URLSearchParams({ ...attrs, _csrf: c.lastCsrf! }),
    });
    expect(viaReferer.status).toBe(303);
  });
});

describe("sign-in rate limit", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
    await addUser(s, "bob");
  });
  afterAll(() => s.stop());

  test("after 10 wrong passwords for one username from one address in 5 minutes the 11th is refused with 429 and a clear message, even with the right password", async () => {
    const c = new WebClient(s.url);
    await c.get("/login");
    for (let i = 0; i < 10; i++) expect((await c.post("/login", { username: "bob", password: `wrong-${i}-password` })).res.status).toBe(401);
    const limited = await c.post("/login", { username: "bob", password: PASSWORD });
    expect(limited.res.status).toBe(429);
    expect(Number(limited.res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.text).toContain("Too many wrong sign-ins from your address");
    expect(c.cookies.has("vigil_session")).toBe(false);
  });
  // the other limits (per address, IPv6 /64, only failures count): sign-in-limits.test.ts
});

describe("Secure cookies follow the scheme", () => {
  test("with an https base URL, session and CSRF cookies are Secure", async () => {
    const s = await startTestServer(["--base-url", "https://status.example.com"]);
    try {
      const c = new WebClient(s.url);
      const setup = await c.get("/setup");
      expect(setup.res.headers.getSetCookie()[0]).toContain("; Secure");
      // the origin check accepts the base URL's origin (a browser behind a TLS proxy sends it)
      const r = await c.post("/setup", { username: "admin", password: PASSWORD, password2: PASSWORD }, { headers: { origin: "https://status.example.com" } });
      expect(r.res.status).toBe(303);
      expect(r.res.headers.getSetCookie().find((x) => x.startsWith("vigil_session="))).toContain("; Secure");
    } finally {
      await s.stop();
    }
  });
});
