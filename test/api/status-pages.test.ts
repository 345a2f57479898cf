import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { machineHostNames, ownHostNames } from "../../src/config/host-names.ts";
import { firstFreeSlug, slugify } from "../../src/domain/slug.ts";
import { validateStatusPageWrite } from "../../src/domain/status-page-schema.ts";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, createStatusPage, expectListEnvelope, httpAttrs, ISO_MS } from "./fixtures.ts";

// Status pages (docs/api-rules.md "Status page attributes").
let s: TestServer;
let other: { accountId: number; token: string };
let m1: number;
let m2: number;
let foreignMonitor: number;

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  m1 = await createMonitor(s, httpAttrs({ name: "m1" }));
  m2 = await createMonitor(s, httpAttrs({ name: "m2" }));
  foreignMonitor = await createMonitor(s, httpAttrs({ name: "theirs" }), other.token);
});
afterAll(() => s.stop());

const post = (body: unknown, token?: string) => s.api("POST", "/api/v1/status-pages", body, token ? { token } : {});

describe("create", () => {
  test("201 with defaults, a slug from the name, and the documented fields", async () => {
    const res = await post({ name: "Acme Production" });
    expect(res.status).toBe(201);
    expect(res.json.data.type).toBe("status_page");
    const a = res.json.data.attributes;
    expect(a).toMatchObject({ name: "Acme Production", slug: "acme-production", headline: null, description: null, is_public: true, is_enabled: true, is_token_protected: false, access_token: null, public_theme: "light", custom_domain: null, monitor_ids: [] });
    expect(a.created_at).toMatch(ISO_MS);
    expect(a.updated_at).toMatch(ISO_MS);
  });

  test("a JSON:API body works and every attribute is stored", async () => {
    const attrs = { name: "Full", slug: "full-page", headline: "All good", description: "Our services", is_public: false, is_enabled: false, is_token_protected: true, access_token: "visitor-token-0001", public_theme: "dark", custom_domain: "Status.Example.com", monitor_ids: [m2, m1] };
    const res = await post({ data: { type: "status_page", attributes: attrs } });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes).toMatchObject({ ...attrs, custom_domain: "status.example.com" });
    const got = await s.api("GET", `/api/v1/status-pages/${res.json.data.id}`);
    expect(got.json.data.attributes.monitor_ids).toEqual([m2, m1]); // order kept as position
  });

  test("slug generation folds case, accents and punctuation; collisions get -2, -3", async () => {
    const slugs: string[] = [];
    for (const name of ["  Café Déjà-Vu!! Status ", "cafe deja vu status", "CAFE/DEJA/VU/STATUS"]) slugs.push((await post({ name })).json.data.attributes.slug);
    expect(slugs).toEqual(["cafe-deja-vu-status", "cafe-deja-vu-status-2", "cafe-deja-vu-status-3"]);
    // a name with nothing usable still gets a valid slug
    expect((await post({ name: "!!!" })).json.data.attributes.slug).toBe("status");
  });

  test("a generated slug from a long name fits in 64 characters, suffix included", async () => {
    const name = "word ".repeat(30);
    const a = (await post({ name })).json.data.attributes.slug as string;
    const b = (await post({ name })).json.data.attributes.slug as string;
    expect(a.length).toBeLessThanOrEqual(64);
    expect(b.length).toBeLessThanOrEqual(64);
    expect(b.endsWith("-2")).toBe(true);
    expect(a).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(b).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  test("slugs are unique across the instance: an explicit taken slug is 422 'has already been taken'", async () => {
    await createStatusPage(s, { name: "Mine", slug: "shared-slug" });
    const res = await post({ name: "Theirs", slug: "shared-slug" }, other.token);
    expect(res.status).toBe(422);
    expect(res.json.error.details).toEqual({ slug: ["has already been taken"] });
    // and a generated one steps around another account's slug
    const gen = await post({ name: "Shared Slug" }, other.token);
    expect(gen.json.data.attributes.slug).toBe("shared-slug-2");
  });

  test("is_token_protected without access_token generates one", async () => {
    const res = await post({ name: "Private", is_token_protected: true });
    const token = res.json.data.attributes.access_token as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const again = await post({ name: "Private", is_token_protected: true });
    expect(again.json.data.attributes.access_token).not.toBe(token);
  });
});

const BAD: [string, Record<string, unknown>, Record<string, string>][] = [
  ["name missing", {}, { name: "is required" }],
  ["name blank", { name: "  " }, { name: "must not be blank" }],
  ["name too long", { name: "x".repeat(201) }, { name: "1 to 200 characters" }],
  ["slug uppercase", { name: "a", slug: "Acme" }, { slug: "lowercase letters and digits" }],
  ["slug double hyphen", { name: "a", slug: "acme--status" }, { slug: "single hyphens" }],
  ["slug leading hyphen", { name: "a", slug: "-acme" }, { slug: "single hyphens" }],
  ["slug too long", { name: "a", slug: "a".repeat(65) }, { slug: "1 to 64" }],
  ["slug empty", { name: "a", slug: "" }, { slug: "1 to 64" }],
  ["theme unknown", { name: "a", public_theme: "blue" }, { public_theme: "must be one of light, dark" }],
  ["is_public not boolean", { name: "a", is_public: "yes" }, { is_public: "must be true or false" }],
  ["access_token too short", { name: "a", access_token: "fifteen-chars-x" }, { access_token: "16 to 128 characters" }],
  ["headline too long", { name: "a", headline: "x".repeat(201) }, { headline: "at most 200 characters" }],
  ["custom_domain not a host", { name: "a", custom_domain: "https://status.example.com" }, { custom_domain: "host name such as status.example.com" }],
  ["custom_domain an IP", { name: "a", custom_domain: "192.0.2.1" }, { custom_domain: "host name" }],
  ["monitor_ids not ints", { name: "a", monitor_ids: ["1"] }, { monitor_ids: "distinct monitor ids" }],
  ["monitor_ids duplicated", { name: "a", monitor_ids: [1, 1] }, { monitor_ids: "distinct monitor ids" }],
  ["monitor_ids unknown", { name: "a", monitor_ids: [999999] }, { monitor_ids: "monitor 999999 does not exist in this account" }],
  ["unknown attribute", { name: "a", colour: "red" }, { colour: "is not a status page attribute" }],
  // PostgreSQL's text cannot hold U+0000, so neither engine stores one (docs/api-rules.md "Text")
  ["a NUL in the name", { name: "Acme\u0000" }, { name: "must not contain the NUL character (U+0000)" }],
  ["a NUL in the description", { name: "a", description: "x\u0000y" }, { description: "must not contain the NUL character (U+0000)" }],
  // a name and a headline are one line (a heading, a mail's Subject, a feed's title)
  ...["Acme\r\nBcc: x@example.com", "Acme\nStatus", "Acme\rStatus", "Acme\tStatus", "Acme\u0007", "Acme\u0085Status", "Acme\u2028Status", "Acme\u001bStatus"].flatMap((v): [string, Record<string, unknown>, Record<string, string>][] => [
    [`name ${JSON.stringify(v)}`, { name: v }, { name: "must be one line" }],
    [`headline ${JSON.stringify(v)}`, { name: "a", headline: v }, { headline: "must be one line" }],
  ]),
  // one trailing dot is the fully qualified form of the name; two make an empty label
  ...["x.test..", "x..test", ".x.test", "x.test...", "."].map((d): [string, Record<string, unknown>, Record<string, string>] => [`custom_domain ${d}`, { name: "a", custom_domain: d }, { custom_domain: "host name such as status.example.com" }]),
];

describe("validation", () => {
  scenarios(() => s, [
    ...BAD.map(([name, body, details]): Scenario => ({ name, method: "POST", path: "/api/v1/status-pages", body, status: 422, code: "validation_error", details })),
    {
      name: "monitor_ids may only name the caller's monitors", method: "POST", path: "/api/v1/status-pages", body: () => ({ name: "mixed", monitor_ids: [m1, foreignMonitor] }), status: 422,
      check: (res) => expect(res.json.error.details.monitor_ids).toEqual([`monitor ${foreignMonitor} does not exist in this account`]),
    },
  ]);

  test("a custom_domain written with one trailing dot is stored without it", async () => {
    const res = await post({ name: "fqdn", custom_domain: "Status.FQDN.example." });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes.custom_domain).toBe("status.fqdn.example");
  });

  test("white space around a name is dropped, a line break there too; the description keeps its lines", async () => {
    const res = await post({ name: " Acme \n", description: "First line\nSecond line" });
    expect(res.status).toBe(201);
    expect(res.json.data.attributes).toMatchObject({ name: "Acme", description: "First line\nSecond line" });
  });

  test("a custom_domain another page asks for is not taken: the first to verify it has it (test/web/custom-domains.test.ts)", async () => {
    await createStatusPage(s, { name: "domain", custom_domain: "status.unique.example" });
    const res = await post({ name: "domain", custom_domain: "STATUS.unique.example" }, other.token);
    expect(res.status).toBe(201);
    expect(res.json.data.attributes).toMatchObject({ custom_domain: "status.unique.example", custom_domain_verified_at: null });
  });
});

describe("custom_domain may not be one of the instance's own host names", () => {
  let own: TestServer;
  beforeAll(async () => {
    own = await startTestServer(["--base-url", "http://vigil.example.test:8080", "--heartbeat-url", "https://ping.example.test/hb"]);
  });
  afterAll(() => own.stop());

  test("the base URL's and heartbeat URL's hosts, localhost and its subdomains, the machine's name and IP literals are a 422 on create and update", async () => {
    const refused = ["vigil.example.test", "VIGIL.Example.Test.", "ping.example.test", "localhost", "app.localhost", "a.b.LOCALHOST", hostname(), "127.0.0.1", "127.1", "0x7f.1", "10.0.0.300", "[::1]", "::1"];
    const page = await own.api("POST", "/api/v1/status-pages", { name: "Mine", custom_domain: "status.example.test" });
    expect(page.status).toBe(201);
    for (const custom_domain of refused) {
      for (const res of [await own.api("POST", "/api/v1/status-pages", { name: "Takeover", custom_domain }), await own.api("PATCH", `/api/v1/status-pages/${page.json.data.id}`, { custom_domain })]) {
        expect({ custom_domain, status: res.status, keys: Object.keys(res.json.error.details) }).toEqual({ custom_domain, status: 422, keys: ["custom_domain"] });
      }
    }
    const own422 = await own.api("POST", "/api/v1/status-pages", { name: "Takeover", custom_domain: "ping.example.test" });
    expect(own422.json.error.details.custom_domain[0]).toContain("host name of this Vigil instance itself");
    // a subdomain of the instance's host is another host: allowed
    expect((await own.api("POST", "/api/v1/status-pages", { name: "Sub", custom_domain: "status.vigil.example.test" })).status).toBe(201);
    expect((await own.api("GET", `/api/v1/status-pages/${page.json.data.id}`)).json.data.attributes.custom_domain).toBe("status.example.test");
  });

  test("a page stored with one of them (as an older build allowed) does not take the instance's / over", async () => {
    const res = await own.api("POST", "/api/v1/status-pages", { name: "Old takeover", custom_domain: "old.example.test" });
    await own.ctx.db.updateTable("status_pages").set({ custom_domain: "ping.example.test", verified_domain: "ping.example.test", custom_domain_verified_at: Date.now() }).where("id", "=", Number(res.json.data.id)).execute();
    for (const path of ["/", "/status.json", "/badge.svg"]) {
      const r = await fetch(own.url + path, { redirect: "manual", headers: { host: "ping.example.test" } });
      expect({ path, page: (await r.text()).includes("Old takeover") }).toEqual({ path, page: false });
    }
  });

  test("the machine's names come from its host name and that name's line in /etc/hosts", () => {
    const hosts = "127.0.0.1 localhost\n127.0.1.1\tbox.corp.example  box # the machine\n10.0.0.2 other.corp.example other\n";
    expect(machineHostNames("box", hosts)).toEqual(["box", "box.corp.example", "box"]);
    expect(ownHostNames(["https://Vigil.Example.com/", "http://[::1]:8080"], ["Box", "box.corp.example."])).toEqual(["vigil.example.com", "::1", "box", "box.corp.example"]);
    expect(validateStatusPageWrite({ name: "x", custom_domain: "box.corp.example" }, { ownHostNames: ["box.corp.example"] }).details.custom_domain).toHaveLength(1);
    expect(validateStatusPageWrite({ name: "x", custom_domain: "other.corp.example" }, { ownHostNames: ["box.corp.example"] }).details).toEqual({});
  });
});

describe("read, update, delete", () => {
  test("PATCH is partial; keeping its own slug is fine; another page's slug is taken", async () => {
    const id = await createStatusPage(s, { name: "Patch me", headline: "kept" });
    await createStatusPage(s, { name: "Occupied" });
    const res = await s.api("PATCH", `/api/v1/status-pages/${id}`, { public_theme: "dark", slug: "patch-me", created_at: "2000-01-01T00:00:00.000Z", id: "5" });
    expect(res.status).toBe(200);
    expect(res.json.data.attributes).toMatchObject({ name: "Patch me", headline: "kept", public_theme: "dark", slug: "patch-me" });
    expect(res.json.data.attributes.created_at).not.toBe("2000-01-01T00:00:00.000Z");
    const taken = await s.api("PATCH", `/api/v1/status-pages/${id}`, { slug: "occupied" });
    expect(taken.json.error.details).toEqual({ slug: ["has already been taken"] });
    expect((await s.api("PATCH", `/api/v1/status-pages/${id}`, { slug: "renamed-page" })).json.data.attributes.slug).toBe("renamed-page");
  });

  test("turning on protection generates a token once and keeps it; an explicit token wins", async () => {
    const id = await createStatusPage(s, { name: "Protect" });
    const on = await s.api("PATCH", `/api/v1/status-pages/${id}`, { is_token_protected: true });
    const token = on.json.data.attributes.access_token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const again = await s.api("PATCH", `/api/v1/status-pages/${id}`, { is_token_protected: true, headline: "x" });
    expect(again.json.data.attributes.access_token).toBe(token);
    const mine = await s.api("PATCH", `/api/v1/status-pages/${id}`, { access_token: "my-own-token-0001" });
    expect(mine.json.data.attributes.access_token).toBe("my-own-token-0001");
  });

  test("access_token: at least 16 characters; a shorter one stored before that rule is kept when sent back unchanged", async () => {
    expect((await post({ name: "t15", is_token_protected: true, access_token: "a".repeat(15) })).status).toBe(422);
    expect((await post({ name: "t16", is_token_protected: true, access_token: "a".repeat(16) })).status).toBe(201);
    const res = await post({ name: "Old token", is_token_protected: true });
    const id = res.json.data.id;
    await s.ctx.db.updateTable("status_pages").set({ access_token: "old-8chr" }).where("id", "=", Number(id)).execute();
    const back = await s.api("PATCH", `/api/v1/status-pages/${id}`, { ...res.json.data.attributes, access_token: "old-8chr", headline: "still here" });
    expect(back.status).toBe(200);
    expect(back.json.data.attributes).toMatchObject({ access_token: "old-8chr", headline: "still here" });
    const other = await s.api("PATCH", `/api/v1/status-pages/${id}`, { access_token: "new-8chr" });
    expect(other.status).toBe(422);
    expect(other.json.error.details.access_token[0]).toContain("16 to 128 characters");
  });

  test("monitor_ids is replaced in the order given", async () => {
    const id = await createStatusPage(s, { name: "Order", monitor_ids: [m1, m2] });
    const res = await s.api("PATCH", `/api/v1/status-pages/${id}`, { monitor_ids: [m2] });
    expect(res.json.data.attributes.monitor_ids).toEqual([m2]);
    const bad = await s.api("PATCH", `/api/v1/status-pages/${id}`, { monitor_ids: [foreignMonitor] });
    expect(bad.status).toBe(422);
  });

  test("list: q on name, paging, id ascending, own pages only", async () => {
    const acct = await makeAccount(s.ctx, "pages", "pro");
    const ids: number[] = [];
    for (const name of ["Alpha Status", "Beta", "alpha internal"]) ids.push(await createStatusPage(s, { name }, acct.token));
    const all = await s.api("GET", "/api/v1/status-pages", undefined, { token: acct.token });
    expectListEnvelope(all.json, { page: 1, per_page: 25, total: 3, total_pages: 1 });
    expect(all.json.data.map((d: { id: string }) => Number(d.id))).toEqual(ids);
    const q = await s.api("GET", "/api/v1/status-pages?q=ALPHA", undefined, { token: acct.token });
    expect(q.json.data.map((d: { attributes: { name: string } }) => d.attributes.name)).toEqual(["Alpha Status", "alpha internal"]);
    const paged = await s.api("GET", "/api/v1/status-pages?per_page=2&page=2", undefined, { token: acct.token });
    expect(paged.json.pagination).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 });
    expect(paged.json.data.map((d: { id: string }) => Number(d.id))).toEqual([ids[2]]);
    const clamp = await s.api("GET", "/api/v1/status-pages?per_page=1000", undefined, { token: acct.token });
    expect(clamp.json.pagination.per_page).toBe(100);
    expect((await s.api("GET", "/api/v1/status-pages?per_page=0", undefined, { token: acct.token })).status).toBe(422);
  });

  test("DELETE answers {deleted: true}, then GET is 404; the monitors stay", async () => {
    const id = await createStatusPage(s, { name: "Bye", monitor_ids: [m1] });
    const res = await s.api("DELETE", `/api/v1/status-pages/${id}`);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ id: String(id), type: "status_page", attributes: { deleted: true } });
    expect((await s.api("GET", `/api/v1/status-pages/${id}`)).status).toBe(404);
    expect((await s.api("DELETE", `/api/v1/status-pages/${id}`)).status).toBe(404);
    expect((await s.api("GET", `/api/v1/monitors/${m1}`)).status).toBe(200);
  });
});

describe("slug rules (pure)", () => {
  test.each([
    ["Acme Status", "acme-status"],
    ["  --Hello,   World--  ", "hello-world"],
    ["Ünïcödé Ñame", "unicode-name"],
    ["日本語", "status"],
    ["a".repeat(80), "a".repeat(64)],
  ])("slugify(%j) = %j", (name, slug) => expect(slugify(name)).toBe(slug));

  test("firstFreeSlug skips taken suffixes and shortens the base to fit", () => {
    expect(firstFreeSlug("acme", new Set())).toBe("acme");
    expect(firstFreeSlug("acme", new Set(["acme", "acme-2"]))).toBe("acme-3");
    const long = "a".repeat(64);
    expect(firstFreeSlug(long, new Set([long]))).toBe("a".repeat(62) + "-2");
  });
});
