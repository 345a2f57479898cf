/**
 * Custom domains (README "Custom domains"), on a real server without --base-url (the case where
 * Vigil does not know the name it is reached by) and a real DNS server on loopback: a domain serves
 * a page only once its TXT record is verified, the names the dashboard is used at are never
 * claimable, a claim made first by another account blocks nobody, and the sign-in never lands on
 * a status page.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createStatusPage } from "../api/fixtures.ts";
import { startDomainDns, verifyDomain, type DomainDns } from "../helpers/custom-domains.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, PASSWORD, signedInClient, WebClient } from "./helpers.ts";

let s: TestServer;
let dns: DomainDns;
let mallory: { accountId: number; token: string };

beforeAll(async () => {
  dns = await startDomainDns();
  s = await startTestServer(dns.flags);
  mallory = await makeAccount(s.ctx, "mallory");
  await addUser(s, "admin");
  await addUser(s, "mal", "mallory");
});
afterAll(async () => {
  await s?.stop();
  await dns?.close();
});

/** An anonymous request with this Host. */
const get = (path: string, host: string) => fetch(s.url + path, { redirect: "manual", headers: { host } });
const verify = (id: number, token?: string) => s.api("POST", `/api/v1/status-pages/${id}/custom-domain/verify`, undefined, token ? { token } : {});
const attributes = async (id: number, token?: string) => (await s.api("GET", `/api/v1/status-pages/${id}`, undefined, token ? { token } : {})).json.data.attributes;
/** Headers of a browser on this host: its Host, and its Origin on a form POST. */
const at = (host: string) => ({ host, origin: `http://${host}` });

/** Signs in through the real form, on the given Host. */
async function signInAt(username: string, host: string): Promise<WebClient> {
  const c = new WebClient(s.url);
  await c.get("/login", { host });
  const r = await c.post("/login", { username, password: PASSWORD, next: "/" }, { headers: at(host) });
  expect({ status: r.res.status, location: r.res.headers.get("location") }).toEqual({ status: 303, location: "/" });
  return c;
}

/** Whether `/` on this host, asked anonymously, is the named status page. */
const servesPage = async (host: string, name: string) => {
  const res = await get("/", host);
  return res.status === 200 && (await res.text()).includes(`<h1>${name}</h1>`);
};

describe("a custom domain serves once verified", () => {
  let id = 0;
  test("until its TXT record is published and verified, the domain serves nothing of the page", async () => {
    id = await createStatusPage(s, { name: "Acme", custom_domain: "status.acme.test" });
    const a = await attributes(id);
    expect(a.custom_domain_verified_at).toBeNull();
    expect(a.custom_domain_verification).toEqual({ record_type: "TXT", record_name: "_vigil-challenge.status.acme.test", record_value: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect((await get("/", "status.acme.test")).status).toBe(303); // the dashboard's sign-in, not the page
    for (const path of ["/status.json", "/badge.svg", "/feed.atom"]) expect({ path, status: (await get(path, "status.acme.test")).status }).toEqual({ path, status: 404 });

    const none = await verify(id);
    expect(none.status).toBe(422);
    expect(none.json.error.details.custom_domain[0]).toContain(`no TXT record _vigil-challenge.status.acme.test holds ${a.custom_domain_verification.record_value}`);
    dns.publish("status.acme.test", "someone-elses-token");
    expect((await verify(id)).json.error.details.custom_domain[0]).toContain('found "someone-elses-token"');
    dns.breakLookup("status.acme.test");
    expect((await verify(id)).json.error.details.custom_domain[0]).toContain("the DNS lookup of the TXT record _vigil-challenge.status.acme.test failed");
    expect(await servesPage("status.acme.test", "Acme")).toBe(false);
  });

  test("verified, it serves the page at /, with its badge, JSON and feed; the lookup went to the configured resolver", async () => {
    await verifyDomain(s, dns, id);
    expect((await attributes(id)).custom_domain_verified_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(await servesPage("status.acme.test", "Acme")).toBe(true);
    expect((await (await get("/status.json", "status.acme.test")).json()).page.name).toBe("Acme");
    expect(dns.asked()).toContain("_vigil-challenge.status.acme.test");
    // verifying again answers as it is
    expect((await verify(id)).status).toBe(200);
  });

  test("sent back unchanged (as a form does) it stays verified; changed, it stops serving and asks for a new record", async () => {
    const before = await attributes(id);
    const same = await s.api("PATCH", `/api/v1/status-pages/${id}`, { custom_domain: "Status.Acme.Test.", headline: "All good" });
    expect(same.json.data.attributes.custom_domain_verified_at).toBe(before.custom_domain_verified_at);
    const moved = await s.api("PATCH", `/api/v1/status-pages/${id}`, { custom_domain: "status2.acme.test" });
    expect(moved.json.data.attributes.custom_domain_verified_at).toBeNull();
    expect(moved.json.data.attributes.custom_domain_verification.record_value).not.toBe(before.custom_domain_verification.record_value);
    expect(await servesPage("status.acme.test", "Acme")).toBe(false);
    expect(await servesPage("status2.acme.test", "Acme")).toBe(false);
    await s.api("PATCH", `/api/v1/status-pages/${id}`, { custom_domain: "status.acme.test" });
    await verifyDomain(s, dns, id);
    expect(await servesPage("status.acme.test", "Acme")).toBe(true);
  });
});

describe("who owns a name", () => {
  test("another account asking for a domain first blocks nobody: the record settles it, and a verified domain is taken", async () => {
    const early = await createStatusPage(s, { name: "Mallory's", custom_domain: "status.victim.test" }, mallory.token);
    const owner = await createStatusPage(s, { name: "Victim", custom_domain: "status.victim.test" });
    dns.publish("status.victim.test", (await attributes(owner)).custom_domain_verification.record_value);
    const theirs = await verify(early, mallory.token);
    expect(theirs.json.error.details.custom_domain[0]).toContain("is not verified");
    expect((await verify(owner)).status).toBe(200);
    expect(await servesPage("status.victim.test", "Victim")).toBe(true);
    expect((await verify(early, mallory.token)).json.error.details).toEqual({ custom_domain: ["has already been taken"] });
    const late = await s.api("POST", "/api/v1/status-pages", { name: "Late", custom_domain: "STATUS.victim.test" }, { token: mallory.token });
    expect([late.status, late.json.error.details]).toEqual([422, { custom_domain: ["has already been taken"] }]);
  });

  test("a name a signed-in user reached the dashboard by cannot be claimed (422)", async () => {
    await signInAt("admin", "vigil.home.test");
    for (const custom_domain of ["vigil.home.test", "VIGIL.home.test."]) {
      const res = await s.api("POST", "/api/v1/status-pages", { name: "Front page", custom_domain }, { token: mallory.token });
      expect({ custom_domain, status: res.status }).toEqual({ custom_domain, status: 422 });
      expect(res.json.error.details.custom_domain[0]).toContain("host name of this Vigil instance itself");
    }
  });

  test("a name asked for before the dashboard was used there never serves, even with its record published", async () => {
    const claim = await createStatusPage(s, { name: "Front page", headline: "Pay here", custom_domain: "dash.home.test" }, mallory.token);
    dns.publish("dash.home.test", (await attributes(claim, mallory.token)).custom_domain_verification.record_value);
    const admin = await signedInClient(s, "admin");
    expect((await admin.get("/monitors", { host: "dash.home.test" })).res.status).toBe(200);
    const res = await verify(claim, mallory.token);
    expect(res.status).toBe(422);
    expect(res.json.error.details.custom_domain[0]).toContain("host name of this Vigil instance itself");
    expect(await servesPage("dash.home.test", "Front page")).toBe(false);
    expect((await get("/", "dash.home.test")).headers.get("location")).toBe("/login?next=%2F");
  });
});

describe("the dashboard is never a status page", () => {
  test("/login and dashboard paths on a page's domain are the dashboard's", async () => {
    const login = await get("/login", "status.acme.test");
    expect(login.status).toBe(200);
    expect(await login.text()).toContain("Sign in to Vigil");
    expect((await get("/monitors", "status.acme.test")).headers.get("location")).toBe("/login?next=%2Fmonitors");
  });

  test("a user of another account signing in there lands on the dashboard, and the page keeps serving", async () => {
    const mal = await signInAt("mal", "status.acme.test");
    const home = await mal.get("/", { host: "status.acme.test" });
    expect(home.res.status).toBe(200);
    expect(home.text).toContain("mal · mallory");
    expect(home.text).not.toContain("<h1>Acme</h1>");
    expect(await servesPage("status.acme.test", "Acme")).toBe(true);
  });

  test("a user of the page's own account signing in there sees the page at / (a private page needs it)", async () => {
    const admin = await signInAt("admin", "status.acme.test");
    expect((await admin.get("/", { host: "status.acme.test" })).text).toContain("<h1>Acme</h1>");
    expect((await admin.get("/monitors", { host: "status.acme.test" })).text).toContain("admin · default");
  });
});

describe("the status page editor", () => {
  test("shows the record to publish and verifies it with a button", async () => {
    const id = await createStatusPage(s, { name: "Edited", custom_domain: "editor.acme.test" });
    const { record_name, record_value } = (await attributes(id)).custom_domain_verification;
    const admin = await signedInClient(s, "admin");
    const edit = await admin.get(`/status-pages/${id}/edit`);
    expect(edit.text).toContain(`<dd class="mono">${record_name}</dd>`);
    expect(edit.text).toContain(`<dd class="mono">${record_value}</dd>`);
    expect(edit.text).toContain(`action="/status-pages/${id}/custom-domain/verify"`);
    const early = await admin.post(`/status-pages/${id}/custom-domain/verify`, {});
    expect(early.res.status).toBe(422);
    expect(early.text).toContain("is not verified: no TXT record _vigil-challenge.editor.acme.test");
    dns.publish("editor.acme.test", record_value);
    const done = await admin.post(`/status-pages/${id}/custom-domain/verify`, {});
    expect(done.res.headers.get("location")).toBe(`/status-pages/${id}/edit?msg=verified`);
    const after = await admin.get(`/status-pages/${id}/edit?msg=verified`);
    expect(after.text).toContain("Custom domain verified: it serves this page now.");
    expect(after.text).toContain("<strong>editor.acme.test</strong> is verified");
    expect(await servesPage("editor.acme.test", "Edited")).toBe(true);
  });
});
