import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MONITOR_TYPES } from "../../src/domain/monitor.ts";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { addUser, formErrors, signedInClient, unescape, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
let target: HttpTarget;
beforeAll(async () => {
  s = await startTestServer();
  target = await startHttpTarget({ "/health": () => new Response("ok"), "/hook": () => new Response("thanks") });
  await addUser(s, "admin");
  c = await signedInClient(s, "admin");
});
afterAll(async () => {
  await s.stop();
  await target.close();
});

const idFrom = (location: string | null) => Number(/\/monitors\/(\d+)/.exec(location ?? "")![1]);

/** Every visible form control has a label pointing at it. */
function expectLabelled(html: string): void {
  for (const m of html.matchAll(/<(input|select|textarea)\b([^>]*)>/g)) {
    const attrs = m[2]!;
    if (/type="hidden"/.test(attrs)) continue;
    const id = /id="([^"]+)"/.exec(attrs)?.[1];
    expect(id).toBeTruthy();
    expect(html).toContain(`for="${id}"`);
  }
}

describe("every dashboard page", () => {
  test("carries the security headers and is never cached or framed", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "headers" }));
    for (const path of ["/", "/monitors/new", "/monitors/new?type=http", `/monitors/${m}`, `/monitors/${m}/edit`, `/monitors/${m}/delete`, "/status-pages", "/status-pages/new", "/tokens", "/channels", "/channels/new?type=webhook", "/groups", "/?tag=x&group_id=1"]) {
      const { res, text } = await c.get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("strict-origin-when-cross-origin");
      expect(res.headers.get("cache-control")).toBe("private, no-store");
      expect(text).not.toMatch(/<script(?![^>]*src=)/); // no inline script
      expect(text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[^"']*\.(css|js|woff2?)/); // nothing from a CDN
      expectLabelled(text);
    }
  });

  test("assets are embedded, content-hashed and cached for a year", async () => {
    const { text } = await c.get("/");
    const css = /href="(\/assets\/[^"]+\/dashboard\.css)"/.exec(text)![1]!;
    const js = /src="(\/assets\/[^"]+\/app\.js)"/.exec(text)![1]!;
    for (const path of [css, js]) {
      const res = await fetch(s.url + path);
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect((await res.text()).length).toBeGreaterThan(500);
    }
    expect((await fetch(s.url + "/assets/x/nothing.css")).status).toBe(404);
  });

  test("a favicon at /favicon.svg and /favicon.ico (an SVG at both), linked from every page", async () => {
    for (const path of ["/favicon.svg", "/favicon.ico"]) {
      const res = await fetch(s.url + path);
      expect({ path, status: res.status, type: res.headers.get("content-type") }).toEqual({ path, status: 200, type: "image/svg+xml" });
      expect(await res.text()).toStartWith("<svg");
    }
    expect((await c.get("/")).text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    expect(await (await fetch(s.url + "/login")).text()).toContain('<link rel="icon" href="/favicon.svg"');
  });

  test("another account's monitor is a 404 page", async () => {
    const other = await makeAccount(s.ctx, "elsewhere");
    const theirs = await createMonitor(s, httpAttrs({ name: "theirs" }), other.token);
    expect((await c.get(`/monitors/${theirs}`)).res.status).toBe(404);
    expect((await c.get(`/monitors/${theirs}/live`)).res.status).toBe(404); // the live parts too
    expect((await c.post(`/monitors/${theirs}/pause`, {})).res.status).toBe(404);
    expect((await c.get("/monitors/abc")).res.status).toBe(404);
  });
});

describe("monitor forms", () => {
  test.each(MONITOR_TYPES.map((t) => [t]))("the %s form shows that type's fields", async (type) => {
    const { res, text } = await c.get(`/monitors/new?type=${type}`);
    expect(res.status).toBe(200);
    expect(text).toContain(`name="monitor_type" value="${type}"`);
    const has = (n: string) => text.includes(`name="${n}"`);
    expect(has("name")).toBe(true);
    // a heartbeat waits for pings: nothing to check every so often, nothing to time out
    expect(has("interval_sec") && has("timeout_ms")).toBe(type !== "heartbeat");
    // what only API clients set, and the API's own words, stay off the form
    expect(has("editor_ui_profile")).toBe(false);
    const shown = text.replace(/<[^>]*>/g, " ");
    for (const jargon of ["null", "interval_sec", "× 1000", "Editor profile", "Synthetic trace body detail", "Group id", "write-only"]) expect(shown).not.toContain(jargon);
    expect(has("target")).toBe(type !== "heartbeat");
    expect(has("expected_http_codes")).toBe(type === "http");
    expect(has("dns_record_type")).toBe(type === "dns");
    expect(has("heartbeat_period_sec")).toBe(type === "heartbeat");
    expect(has("tls_verify")).toBe(["http", "ssl", "websocket", "grpc", "smtp"].includes(type));
    expect(has("api_auth_bearer_token")).toBe(type === "http");
    // the HTTP method is asked of http monitors only (the API accepts it on every type)
    expect(has("method")).toBe(type === "http");
    expect(has("synthetic_trace_body_detail")).toBe(type === "http");
    expect(has("api_headers_json")).toBe(type === "http" || type === "websocket");
    expect(has("ws_send") && has("ws_expect")).toBe(type === "websocket");
    expect(has("grpc_service") && has("grpc_tls")).toBe(type === "grpc");
    expect(has("smtp_security")).toBe(type === "smtp");
    expect(has("ssl_expiry_warn_days")).toBe(["http", "ssl", "smtp"].includes(type));
    expect(has("db_password")).toBe(["postgres", "mysql", "redis"].includes(type));
    expect(has("db_query") && has("db_tls")).toBe(type === "postgres" || type === "mysql");
    expect(has("redis_username")).toBe(type === "redis");
    expect(has("docker_host")).toBe(type === "docker");
    expect(has("domain_expiry_warn_days")).toBe(type === "domain");
    expect(has("api_max_latency_ms")).toBe(type !== "heartbeat");
  });

  test("an http form has one authentication section: the kind picked, each kind's fields under it, the stored secret kept when left empty", async () => {
    const form = await c.get("/monitors/new?type=http");
    const section = form.text.slice(form.text.indexOf("data-auth-section"), form.text.indexOf("</details>", form.text.indexOf("data-auth-section")));
    expect(section).toContain('<option value="none" selected>');
    // without script every kind's fields show under the kind's name, with a note; the script hides the others
    expect(section).toContain("Only the fields of the kind chosen above are used.");
    expect(section).toMatch(/data-auth="basic"[\s\S]*name="api_auth_basic_user"[\s\S]*name="api_auth_basic_pass"[\s\S]*data-auth="bearer"[\s\S]*name="api_auth_bearer_token"[\s\S]*data-auth="api_key"[\s\S]*name="api_auth_api_key_header"[\s\S]*name="api_auth_api_key_value"/);
    // the secrets are nowhere else on the form
    expect(form.text.split('name="api_auth_bearer_token"').length).toBe(2);
    const r = await c.post("/monitors", { monitor_type: "http", name: "signed in", target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000", api_auth_type: "basic", api_auth_basic_user: "ops", api_auth_basic_pass: "basic-s3cret" });
    expect(r.res.status).toBe(303);
    const id = idFrom(r.res.headers.get("location"));
    const edit = await c.get(`/monitors/${id}/edit`);
    expect(edit.text).toContain('<option value="basic" selected>');
    expect(edit.text).toMatch(/<details open><summary>Authentication \(<span data-auth-label>User name and password/);
    expect(edit.text).not.toContain("basic-s3cret");
    expect(edit.text).toMatch(/id="f-api_auth_basic_pass-hint">stored; leave empty to keep it</);
    expect((await c.post(`/monitors/${id}`, { name: "signed in", target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000", api_auth_type: "basic", api_auth_basic_user: "ops", api_auth_basic_pass: "" })).res.status).toBe(303);
    expect((await c.get(`/monitors/${id}/edit`)).text).toMatch(/id="f-api_auth_basic_pass-hint">stored; leave empty to keep it</);
  });

  test("a heartbeat is created from its form without an interval or timeout, and an edit keeps the ones set through the API", async () => {
    const r = await c.post("/monitors", { monitor_type: "heartbeat", name: "nightly backup", heartbeat_period_sec: "86400", heartbeat_grace_sec: "600" });
    expect(r.res.status).toBe(303);
    const id = idFrom(r.res.headers.get("location"));
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ heartbeat_period_sec: 86400, heartbeat_grace_sec: 600 });
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { interval_sec: 120, timeout_ms: 2000 })).status).toBe(200);
    expect((await c.post(`/monitors/${id}`, { name: "nightly backup", heartbeat_period_sec: "86400", heartbeat_grace_sec: "900" })).res.status).toBe(303);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ interval_sec: 120, timeout_ms: 2000, heartbeat_grace_sec: 900 });
  });

  test("a redis monitor's form asks for the password (never shown back) and the user name, in words, and not for an HTTP method", async () => {
    const form = await c.get("/monitors/new?type=redis");
    expect(form.text).toMatch(/<label for="f-db_password">Password<\/label>[\s\S]*?<input type="password" id="f-db_password" name="db_password" value=""/);
    expect(form.text).toContain('<label for="f-redis_username">User name</label>');
    expect(form.text).not.toContain("HTTP method");
    const r = await c.post("/monitors", { monitor_type: "redis", name: "cache", target: "redis://127.0.0.1:9/0", interval_sec: "60", timeout_ms: "5000", db_password: "redis-s3cret-pw", redis_username: "vigil" });
    expect(r.res.status).toBe(303);
    const id = idFrom(r.res.headers.get("location"));
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ monitor_type: "redis", redis_username: "vigil", target: "redis://127.0.0.1:9/0" });
    const edit = await c.get(`/monitors/${id}/edit`);
    expect(edit.text).toContain("stored; leave empty to keep it");
    expect(edit.text).not.toContain("redis-s3cret-pw");
    // a new host needs the password again: the form says so next to the password field
    const moved = await c.post(`/monitors/${id}`, { name: "cache", target: "redis://127.0.0.2:9/0", interval_sec: "60", timeout_ms: "5000", db_password: "", redis_username: "vigil" });
    expect(moved.res.status).toBe(422);
    expect(formErrors(moved.text).db_password?.[0]).toContain("must be sent again");
  });

  test.each([
    ["http", { name: "", target: "ftp://example.com", interval_sec: "5", timeout_ms: "90000", expected_http_codes: "abc", api_headers_json: "{not json" }],
    ["http", { name: "x", target: "http://127.0.0.1:9/", interval_sec: "30", timeout_ms: "30000", api_auth_type: "bearer" }],
    ["http", { name: "head", target: "http://127.0.0.1:9/", interval_sec: "30", timeout_ms: "3000", method: "HEAD", keyword: "welcome" }],
    ["tcp", { name: "db", target: "", interval_sec: "60", timeout_ms: "1000", port: "70000" }],
    ["dns", { name: "dns", target: "not a host!", interval_sec: "sixty", timeout_ms: "1000", dns_resolver: "nope" }],
    ["heartbeat", { name: "job", interval_sec: "60", timeout_ms: "1000", heartbeat_period_sec: "0", heartbeat_schedule: "every day", heartbeat_timezone: "Mars/Base" }],
  ] as [string, Record<string, string>][])("a bad %s form shows, next to each field, the messages the API gives for the same values", async (type, fields) => {
    const page = await c.post("/monitors", { monitor_type: type, ...fields });
    expect(page.res.status).toBe(422);
    const shown = formErrors(page.text);
    // the same values through the API (numbers as numbers where they parse, JSON that does not parse as its text)
    const body: Record<string, unknown> = { monitor_type: type };
    for (const [k, v] of Object.entries(fields)) {
      if (v === "") continue;
      body[k] = /^\d+$/.test(v) && k !== "name" ? Number(v) : v;
    }
    if (type === "http" && "name" in fields && fields.name === "") delete body.name;
    const api = await s.api("POST", "/api/v1/monitors", body);
    expect(api.status).toBe(422);
    const details = api.json.error.details as Record<string, string[]>;
    expect(Object.keys(shown).sort()).toEqual(Object.keys(details).sort());
    for (const [attr, messages] of Object.entries(details)) {
      const onForm = shown[attr]!.map(unescape);
      expect(onForm).toHaveLength(messages.length);
      messages.forEach((m, i) => expect(onForm[i]).toEndWith(` ${m}`));
    }
    // the values typed are kept
    if (fields.target) expect(page.text).toContain(`value="${fields.target.replace(/!/g, "!")}"`);
    expect(page.text).toContain('role="alert"');
    expect(page.text).toContain('aria-invalid="true"');
  });

  test("a valid http form creates the monitor and opens its detail; the name is escaped everywhere", async () => {
    const name = `Shop <script>alert("x")</script>`;
    const r = await c.post("/monitors", { monitor_type: "http", name, target: `${target.url}/health`, interval_sec: "60", timeout_ms: "5000", method: "GET", tls_verify: "true" });
    expect(r.res.status).toBe(303);
    const id = idFrom(r.res.headers.get("location"));
    const api = await s.api("GET", `/api/v1/monitors/${id}`);
    expect(api.json.data.attributes).toMatchObject({ name, target: `${target.url}/health`, interval_sec: 60, timeout_ms: 5000, tls_verify: true, is_in_maintenance: false });
    const detail = await c.get(`/monitors/${id}?msg=created`);
    expect(detail.text).toContain("Shop &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(detail.text).not.toContain("<script>alert");
    expect(detail.text).toContain("Created.");
    const list = await c.get("/");
    expect(list.text).toContain("Shop &lt;script&gt;");
    expect(list.text).not.toContain("<script>alert");
    // the first check runs at once: the detail shows it with its latency chart
    await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status === "up");
    const after = await c.get(`/monitors/${id}`);
    expect(after.text).toContain('<svg class="chart"');
    expect(after.text).toMatch(/<td class="num" data-label="Latency">\d+ ms<\/td><td class="num" data-label="HTTP">200<\/td>/);
  });

  test("edit keeps a stored secret when its field is left empty, and pause, resume and delete (with a confirm page) work", async () => {
    const r = await c.post("/monitors", { monitor_type: "http", name: "authed", target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000", api_auth_type: "bearer", api_auth_bearer_token: "s3cret-value" });
    const id = idFrom(r.res.headers.get("location"));
    const edit = await c.get(`/monitors/${id}/edit`);
    expect(edit.text).toContain("stored; leave empty to keep it");
    expect(edit.text).not.toContain("s3cret-value");
    const form = new URLSearchParams();
    for (const m of edit.text.matchAll(/<input type="(?:text|number)" id="f-[a-z_]+" name="([a-z_]+)" value="([^"]*)"/g)) form.set(m[1]!, unescape(m[2]!));
    for (const m of edit.text.matchAll(/<select id="f-[a-z_]+" name="([a-z_]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
      const o = /<option(?: value="([^"]*)")? selected>([^<]*)</.exec(m[2]!);
      form.set(m[1]!, o?.[1] ?? o?.[2] ?? "");
    }
    for (const m of edit.text.matchAll(/<input type="checkbox" id="f-[a-z_]+" name="([a-z_]+)" value="true" checked/g)) form.set(m[1]!, "true");
    form.set("name", "authed renamed");
    const saved = await c.post(`/monitors/${id}`, form);
    expect(saved.res.status).toBe(303);
    const row = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.name).toBe("authed renamed");
    expect(row.api_auth_bearer_token_enc).not.toBeNull();

    expect((await c.post(`/monitors/${id}/pause`, {})).res.headers.get("location")).toBe(`/monitors/${id}?msg=paused`);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.is_paused).toBe(true);
    expect((await c.get(`/monitors/${id}`)).text).toContain("Resume");
    await c.post(`/monitors/${id}/resume`, {});
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.is_paused).toBe(false);

    const confirm = await c.get(`/monitors/${id}/delete`);
    expect(confirm.text).toContain("Delete <strong>authed renamed</strong>?");
    const del = await c.post(`/monitors/${id}/delete`, {});
    expect(del.res.headers.get("location")).toBe("/?msg=deleted");
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).status).toBe(404);
  });

  test("a heartbeat monitor's detail shows the ping URL, the timeline of pings and transitions, and rotates the token", async () => {
    const r = await c.post("/monitors", { monitor_type: "heartbeat", name: "nightly backup", interval_sec: "3600", timeout_ms: "1000", heartbeat_grace_sec: "60" });
    const id = idFrom(r.res.headers.get("location"));
    const token = (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.heartbeat_token as string;
    const pingUrl = `${s.url}/h/${token}`; // no --base-url: the address this client used
    let detail = await c.get(`/monitors/${id}`);
    expect(detail.text).toContain(`value="${pingUrl}"`);
    expect(detail.text).toContain("No pings yet");
    expect((await fetch(`${s.url}/h/${token}`)).status).toBe(200);
    await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status === "up");
    detail = await c.get(`/monitors/${id}`);
    expect(detail.text).toContain("ping <strong>accepted</strong>");
    expect(detail.text).toMatch(/Unknown<\/span> → <span class="st st-up">/);
    const rotated = await c.post(`/monitors/${id}/rotate-token`, {});
    expect(rotated.res.headers.get("location")).toBe(`/monitors/${id}?msg=rotated`);
    expect((await fetch(`${s.url}/h/${token}`)).status).toBe(404);
    detail = await c.get(`/monitors/${id}`);
    expect(detail.text).not.toContain(`value="${pingUrl}"`);
    expect(detail.text).toContain("ping URL rotated");
  });

  test("a failure's output is on the monitor page: the first 10 KiB of what the job sent, escaped", async () => {
    const r = await c.post("/monitors", { monitor_type: "heartbeat", name: "nightly dump", interval_sec: "3600", timeout_ms: "1000" });
    const id = idFrom(r.res.headers.get("location"));
    const token = (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.heartbeat_token as string;
    const log = "pg_dump: error: <connection refused>\n" + "x".repeat(200_000);
    expect((await fetch(`${s.url}/h/${token}/1`, { method: "POST", body: log })).status).toBe(200);
    const detail = await c.get(`/monitors/${id}`);
    expect(detail.text).toContain("Output (first 10 KiB of 201 KB)");
    expect(detail.text).toContain("pg_dump: error: &lt;connection refused&gt;");
    expect(detail.text).not.toContain("x".repeat(10_241));
  });
});

describe("status page editor", () => {
  test("creates a page with chosen monitors, shows the API's messages, edits and deletes it", async () => {
    const m1 = await createMonitor(s, httpAttrs({ name: "Editor A" }));
    const m2 = await createMonitor(s, httpAttrs({ name: "Editor B" }));
    const created = await c.post("/status-pages", { name: "Team status", slug: "", headline: "All good", public_theme: "dark", is_public: "true", is_enabled: "true", monitor_ids: [String(m2), String(m1)] });
    expect(created.res.status).toBe(303);
    const pageId = Number(/\/status-pages\/(\d+)\/edit/.exec(created.res.headers.get("location")!)![1]);
    const api = (await s.api("GET", `/api/v1/status-pages/${pageId}`)).json.data.attributes;
    expect(api).toMatchObject({ name: "Team status", slug: "team-status", public_theme: "dark", monitor_ids: [m2, m1] }); // as submitted
    const pub = await fetch(`${s.url}/s/team-status`);
    expect(pub.status).toBe(200);
    expect(await pub.text()).toContain("Editor A");

    // a taken slug and a bad token: the API's messages, on the form
    const bad = await c.post("/status-pages", { name: "Dup", slug: "team-status", access_token: "short", public_theme: "light" });
    expect(bad.res.status).toBe(422);
    const apiBad = await s.api("POST", "/api/v1/status-pages", { name: "Dup", slug: "team-status", access_token: "short" });
    const shown = formErrors(bad.text);
    for (const [k, msgs] of Object.entries(apiBad.json.error.details as Record<string, string[]>)) expect(unescape(shown[k]![0]!)).toEndWith(msgs[0]!);

    const edited = await c.post(`/status-pages/${pageId}`, { name: "Team status", slug: "team-status", public_theme: "light", is_public: "true", is_enabled: "true", is_token_protected: "true", access_token: "", monitor_ids: [String(m1)] });
    expect(edited.res.status).toBe(303);
    const after = (await s.api("GET", `/api/v1/status-pages/${pageId}`)).json.data.attributes;
    expect(after.is_token_protected).toBe(true);
    expect(after.access_token).toBeTruthy(); // generated
    expect(after.monitor_ids).toEqual([m1]);
    const editPage = await c.get(`/status-pages/${pageId}/edit`);
    expect(editPage.text).toContain(`/s/team-status?token=${after.access_token}`);

    expect((await c.get(`/status-pages/${pageId}/delete`)).text).toContain("Delete <strong>Team status</strong>?");
    expect((await c.post(`/status-pages/${pageId}/delete`, {})).res.headers.get("location")).toBe("/status-pages?msg=deleted");
    expect((await fetch(`${s.url}/s/team-status`)).status).toBe(404);
  });
});

describe("API tokens", () => {
  test("create with scopes shows the token once; it works on the API; revoke stops it", async () => {
    const created = await c.post("/tokens", { label: "ci <bot>", scopes: ["monitors:read", "checks:read"] });
    // redirected (303), the token shown once on the page it leads to, not in its address
    expect(created.res.status).toBe(303);
    expect(created.res.headers.get("location")).toBe("/tokens");
    const shown = await c.get("/tokens");
    const token = /id="flash-secret" class="mono" readonly value="(vgl_[^"]+)"/.exec(shown.text)![1]!;
    expect(shown.text).toContain("ci &lt;bot&gt;");
    expect(s.logText()).not.toContain(token);
    expect((await s.api("GET", "/api/v1/monitors", undefined, { token })).status).toBe(200);
    expect((await s.api("POST", "/api/v1/monitors", httpAttrs(), { token })).status).toBe(403);
    // a reload shows the list without the token and creates no other
    const list = await c.get("/tokens");
    expect(list.text).not.toContain(token);
    expect((await s.ctx.db.selectFrom("api_tokens").select("id").where("label", "=", "ci <bot>").execute()).length).toBe(1);
    expect(list.text).toContain("monitors:read, checks:read");
    const row = await s.ctx.db.selectFrom("api_tokens").select("id").where("label", "=", "ci <bot>").executeTakeFirstOrThrow();
    expect((await c.post(`/tokens/${row.id}/revoke`, {})).res.headers.get("location")).toBe("/tokens?msg=revoked");
    expect((await s.api("GET", "/api/v1/monitors", undefined, { token })).status).toBe(401);
    // no scope chosen: refused with a message
    const none = await c.post("/tokens", { label: "empty" });
    expect(none.res.status).toBe(422);
    expect(none.text).toContain("Choose at least one scope.");
    expect(none.text).toContain('id="form-errors"'); // the summary the script moves the focus to
    // a NUL in the label: refused, as every stored text (docs/api-rules.md "Text")
    const nul = await c.post("/tokens", { label: "ci\u0000bot", scopes: ["monitors:read"] });
    expect(nul.res.status).toBe(422);
    expect(nul.text).toContain("The label must not contain the NUL character (U+0000).");
    // another account's token cannot be revoked from here
    const other = await makeAccount(s.ctx, "tok-other");
    const theirs = await s.ctx.db.selectFrom("api_tokens").select("id").where("account_id", "=", other.accountId).executeTakeFirstOrThrow();
    expect((await c.post(`/tokens/${theirs.id}/revoke`, {})).res.status).toBe(404);
    expect((await s.api("GET", "/api/v1/monitors", undefined, { token: other.token })).status).toBe(200);
  });
});

describe("results carried over a redirect", () => {
  test("a new token is shown to the session that created it, once: not to another session of the same user", async () => {
    const other = await signedInClient(s, "admin");
    const created = await c.post("/tokens", { label: "once", scopes: ["monitors:read"] });
    expect(created.res.status).toBe(303);
    expect((await other.get("/tokens")).text).not.toContain('id="flash-secret"');
    const mine = await c.get("/tokens");
    expect(mine.text).toMatch(/id="flash-secret" class="mono" readonly value="vgl_/);
    expect((await c.get("/tokens")).text).not.toContain('id="flash-secret"');
    // stored sealed, and gone once read
    expect((await s.ctx.db.selectFrom("kv").select("key").where("key", "like", "web-flash:%").execute()).length).toBe(0);
  });

  test("a flash nobody came back for is swept; what is stored is sealed, never the token itself", async () => {
    const { sweepFlashes, FLASH_TTL_MS } = await import("../../src/auth/session-flash.ts");
    await c.post("/tokens", { label: "left", scopes: ["monitors:read"] });
    const rows = await s.ctx.db.selectFrom("kv").select(["key", "value"]).where("key", "like", "web-flash:%").execute();
    expect(rows.length).toBe(1);
    expect(rows[0]!.value).not.toContain("vgl_");
    expect(await sweepFlashes(s.ctx)).toBe(0); // not expired yet
    const clock = { now: () => Date.now() + FLASH_TTL_MS + 1 };
    expect(await sweepFlashes({ ...s.ctx, clock } as typeof s.ctx)).toBe(1);
    expect((await c.get("/tokens")).text).not.toContain('id="flash-secret"');
  });
});

describe("notification channels", () => {
  test("create a webhook, send a test to a local receiver, see the API's messages for bad input, delete", async () => {
    const bad = await c.post("/channels", { channel_type: "webhook", name: "hook", url: "not-a-url", is_enabled: "true" });
    expect(bad.res.status).toBe(422);
    expect(unescape(formErrors(bad.text).url![0]!)).toBe("URL must be an absolute http(s) URL of at most 2048 characters");
    const created = await c.post("/channels", { channel_type: "webhook", name: "hook", url: `${target.url}/hook`, secret: "signing-key-123", is_enabled: "true" });
    expect(created.res.headers.get("location")).toBe("/channels?msg=created");
    const ch = (await s.api("GET", "/api/v1/notification-channels")).json.data.find((x: any) => x.attributes.name === "hook");
    // the path of a webhook URL may hold its credential: shown masked, kept as stored
    expect(ch.attributes.url).toBe(`${target.url}/***`);
    const before = target.requests.filter((r) => r.path === "/hook").length;
    const tested = await c.post(`/channels/${ch.id}/test`, {});
    expect(tested.res.status).toBe(303);
    expect(tested.res.headers.get("location")).toBe("/channels");
    expect((await c.get("/channels")).text).toContain("Test sent to hook (answer 200).");
    expect(target.requests.filter((r) => r.path === "/hook").length).toBe(before + 1);
    // a reload of the page shown after the test sends nothing and no longer says so
    expect((await c.get("/channels")).text).not.toContain("Test sent to hook");
    expect(target.requests.filter((r) => r.path === "/hook").length).toBe(before + 1);
    const edit = await c.get(`/channels/${ch.id}/edit`);
    expect(edit.text).toContain("stored; leave empty to keep it");
    expect(edit.text).not.toContain("signing-key-123");
    expect(edit.text).toContain("shown without its path and query; leave it as is to keep the stored URL");
    // saving the form as shown keeps the stored URL: the next test still reaches /hook
    const saved = await c.post(`/channels/${ch.id}`, { name: "hook", url: `${target.url}/***`, is_enabled: "true" });
    expect(saved.res.headers.get("location")).toBe("/channels?msg=saved");
    await c.post(`/channels/${ch.id}/test`, {});
    expect(target.requests.filter((r) => r.path === "/hook").length).toBe(before + 2);
    expect((await c.post(`/channels/${ch.id}/delete`, {})).res.headers.get("location")).toBe("/channels?msg=deleted");
    expect((await s.api("GET", `/api/v1/notification-channels/${ch.id}`)).status).toBe(404);
  });

  test("each type's form shows only its fields; secrets, the multi-line Apprise URLs too, are never filled in", async () => {
    const names = (html: string) => [...html.matchAll(/<(?:input|textarea|select)\b[^>]*\bname="([a-z_]+)"/g)].map((m) => m[1]).filter((n) => n !== "_csrf" && n !== "channel_type");
    const common = ["name", "is_enabled", "default_for_new_monitors"];
    const expected: Record<string, string[]> = {
      matrix: [...common, "url", "matrix_room_id", "matrix_access_token"],
      mattermost: [...common, "url"],
      rocketchat: [...common, "url"],
      google_chat: [...common, "url"],
      pagerduty: [...common, "url", "pagerduty_routing_key"],
      opsgenie: [...common, "url", "opsgenie_api_key"],
      homeassistant: [...common, "url", "homeassistant_token", "homeassistant_service"],
      signal: [...common, "url", "signal_number", "signal_recipients"],
      apprise: [...common, "url", "apprise_urls"],
    };
    const list = await c.get("/channels");
    for (const [type, fields] of Object.entries(expected)) {
      expect(list.text).toContain(`href="/channels/new?type=${type}"`);
      const page = await c.get(`/channels/new?type=${type}`);
      expect(page.res.status).toBe(200);
      expect({ type, fields: names(page.text) }).toEqual({ type, fields });
      expectLabelled(page.text);
    }
    expect((await c.get("/channels/new?type=google_chat")).text).toContain("<h1>New Google Chat channel</h1>");

    // apprise: several URLs in a text area, write-only, kept when left empty
    const appriseUrls = `json://${target.url.slice(7)}/hook\njson://${target.url.slice(7)}/hook`;
    const created = await c.post("/channels", { channel_type: "apprise", name: "many", url: "", apprise_urls: appriseUrls, is_enabled: "true" });
    expect(created.res.headers.get("location")).toBe("/channels?msg=created");
    const ch = (await s.api("GET", "/api/v1/notification-channels?per_page=100")).json.data.find((x: any) => x.attributes.name === "many");
    const edit = await c.get(`/channels/${ch.id}/edit`);
    expect(edit.text).toMatch(/<textarea id="f-apprise_urls" name="apprise_urls"[^>]*><\/textarea>/);
    expect(edit.text).toContain("stored; leave empty to keep it");
    expect(edit.text).not.toContain("/hook");
    expect((await c.post(`/channels/${ch.id}`, { name: "many renamed", url: "", apprise_urls: "", is_enabled: "true" })).res.headers.get("location")).toBe("/channels?msg=saved");
    if (Bun.which("apprise")) {
      const before = target.requests.filter((r) => r.path === "/hook").length;
      expect((await c.post(`/channels/${ch.id}/test`, {})).res.status).toBe(303);
      expect((await c.get("/channels")).text).toContain("Test sent to many renamed.");
      expect(target.requests.filter((r) => r.path === "/hook").length).toBe(before + 2);
    }

    // signal: the recipients are a comma-separated list in the form
    const signal = await c.post("/channels", { channel_type: "signal", name: "sig", url: `${target.url}/signal`, signal_number: "+4915100000001", signal_recipients: "+4917600000002, group.ZmFtaWx5", is_enabled: "true" });
    expect(signal.res.headers.get("location")).toBe("/channels?msg=created");
    const sig = (await s.api("GET", "/api/v1/notification-channels?per_page=100")).json.data.find((x: any) => x.attributes.name === "sig");
    expect(sig.attributes.signal_recipients).toEqual(["+4917600000002", "group.ZmFtaWx5"]);
    expect((await c.get(`/channels/${sig.id}/edit`)).text).toContain('value="+4917600000002, group.ZmFtaWx5"');

    // a failed test send reads as what failed, the private receiver's reply left out
    await c.post(`/channels/${sig.id}/test`, {});
    const tested = unescape((await c.get("/channels")).text);
    expect(tested).toContain("Test to sig failed (answer 404): HTTP 404 (the receiver is on a private address; its reply is not shown)");
    expect(tested).not.toContain("no route");
  });
});

describe("live states", () => {
  test("/events streams the account's changes and state transitions; signed out it is refused", async () => {
    expect((await fetch(`${s.url}/events`)).status).toBe(401);
    const ac = new AbortController();
    const res = await fetch(`${s.url}/events`, { headers: { cookie: c.cookieHeader() }, signal: ac.signal });
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const reader = res.body!.getReader();
    let text = "";
    const dec = new TextDecoder();
    const readUntil = async (pattern: RegExp) => {
      const end = Date.now() + 10_000;
      while (!pattern.test(text) && Date.now() < end) {
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value);
      }
      return pattern.test(text);
    };
    expect(await readUntil(/: connected/)).toBe(true);
    const id = await createMonitor(s, httpAttrs({ name: "live one", target: `${target.url}/health`, is_paused: false }));
    expect(await readUntil(new RegExp(`event: changed\\ndata: \\{"monitorId":${id}`))).toBe(true);
    expect(await readUntil(new RegExp(`event: state\\ndata: \\{"monitorId":${id},"from":"unknown","to":"up"`))).toBe(true);
    // the list fetches its page again on a state (its figures and summary change too): no row markup rides along
    const stateLine = text.split("\n").find((l) => l.startsWith(`data: {"monitorId":${id},"from"`))!;
    expect(JSON.parse(stateLine.slice(6))).toEqual({ monitorId: id, from: "unknown", to: "up" });
    // another account's monitors never appear in this stream
    const other = await makeAccount(s.ctx, "live-other");
    const theirs = await createMonitor(s, httpAttrs({ name: "not yours" }), other.token);
    // events arrive in order: once the marker created after it is in, theirs would have been too
    const marker = await createMonitor(s, httpAttrs({ name: "marker" }));
    expect(await readUntil(new RegExp(`"monitorId":${marker},"deleted":false`))).toBe(true);
    expect(text).not.toContain(`"monitorId":${theirs},`);
    ac.abort();
  });

  test("the monitor page's parts come again from /monitors/:id/live, as the page's script swaps them in", async () => {
    const id = await createMonitor(s, httpAttrs({ name: "live detail", target: `${target.url}/health`, is_paused: false }));
    await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status === "up");
    const pageHtml = (await c.get(`/monitors/${id}`)).text;
    expect(pageHtml).toContain(`data-live-monitor="${id}" data-live-src="/monitors/${id}/live"`);
    const live = await c.get(`/monitors/${id}/live`);
    expect(live.res.status).toBe(200);
    expect(live.res.headers.get("cache-control")).toBe("private, no-store");
    const parts = (h: string) => [...h.matchAll(/data-live-part="([a-z]+)"/g)].map((m) => m[1]);
    expect(parts(live.text)).toEqual(["head", "summary", "facts", "latency", "checks", "incidents", "dependencies"]);
    expect(parts(live.text)).toEqual(parts(pageHtml));
    expect(live.text).not.toContain("<html");
    expect(live.text).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z" title="[\d-]+ [\d:]+ UTC">/);
    expect((await fetch(`${s.url}/monitors/${id}/live`, { redirect: "manual" })).status).toBe(303); // signed out: to the sign-in page
  });

  test("the rows fragment is what the live list swaps in", async () => {
    const { res, text } = await c.get("/monitors/rows");
    expect(res.status).toBe(200);
    // the inside of the list's [data-live] container: its summary, its table (or its group sections), rows and all
    expect(text).toStartWith('<p class="muted" data-live-summary>');
    expect(text).toContain('<table class="monitors">');
    expect(text).toContain("<tr data-monitor=");
    expect((await c.get("/")).text).toContain(`<div data-live="/monitors/rows" aria-live="polite"><p class="muted" data-live-summary>`);
  });
});
