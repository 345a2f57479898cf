/**
 * The dashboard's groups, tags and status page updates (README "Groups, tags and status page
 * updates"), through the real server and its forms: the groups page, the monitor form's group and
 * tags, the list's filters and sections, and the status page editor's updates.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMonitor, createStatusPage, httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, formErrors, listedMonitorNames, signedInClient, unescape, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "admin");
  c = await signedInClient(s, "admin");
});
afterAll(() => s.stop());

const groupIdByName = async (name: string) => Number((await s.api("GET", "/api/v1/groups?per_page=100")).json.data.find((g: { attributes: { name: string } }) => g.attributes.name === name).id);
const monitorAttrs = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;
/** Group names in the order the groups page lists them. */
const listedGroups = (page: string) => [...page.matchAll(/<td data-label="Name"><a href="\/\?group_id=\d+">([^<]+)<\/a><\/td>/g)].map((m) => unescape(m[1]!));

describe("the groups page", () => {
  test("create, refuse a duplicate name, rename, reorder, delete (its monitors stay, ungrouped)", async () => {
    expect((await c.get("/groups")).text).toContain('<a href="/groups" aria-current="page">Groups</a>');
    for (const [name, order] of [["Web", "10"], ["Databases", "20"], ["Queues", "30"]] as const) {
      const { res } = await c.post("/groups", { name, description: `the ${name.toLowerCase()}`, sort_order: order });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/groups?msg=created");
    }
    expect(listedGroups((await c.get("/groups")).text)).toEqual(["Web", "Databases", "Queues"]);

    const dup = await c.post("/groups", { name: "Web", description: "", sort_order: "0" });
    expect(dup.res.status).toBe(422);
    expect(formErrors(dup.text)).toEqual({ name: ["Name has already been taken"] });

    const web = await groupIdByName("Web");
    expect((await c.get(`/groups/${web}/edit`)).res.status).toBe(200);
    const renamed = await c.post(`/groups/${web}`, { name: "Web front", description: "shop and API", sort_order: "10" });
    expect(renamed.res.status).toBe(303);

    // the order form saves every changed number at once
    const db = await groupIdByName("Databases");
    const queues = await groupIdByName("Queues");
    const order = await c.post("/groups/order", { [`order_${web}`]: "30", [`order_${db}`]: "5", [`order_${queues}`]: "30" });
    expect(order.res.status).toBe(303);
    expect(order.res.headers.get("location")).toBe("/groups?msg=reordered");
    expect(listedGroups((await c.get("/groups")).text)).toEqual(["Databases", "Queues", "Web front"]); // 5, then 30 by name
    const bad = await c.post("/groups/order", { [`order_${web}`]: "soon" });
    expect(bad.res.status).toBe(422);
    expect(bad.text).toContain("The order of Web front must be a whole number");

    const m = await createMonitor(s, httpAttrs({ name: "in queues", group_id: queues }));
    const confirm = await c.get(`/groups/${queues}/delete`);
    expect(confirm.text).toContain("Its 1 monitor stays, in no group.");
    const del = await c.post(`/groups/${queues}/delete`, {});
    expect(del.res.status).toBe(303);
    expect(listedGroups((await c.get("/groups")).text)).toEqual(["Databases", "Web front"]);
    expect((await monitorAttrs(m)).group_id).toBeNull();
  });

  test("another account's group is a 404 page, and its id filters nothing in", async () => {
    const other = await makeAccount(s.ctx, "elsewhere");
    const theirs = Number((await s.api("POST", "/api/v1/groups", { name: "Theirs" }, { token: other.token })).json.data.id);
    await createMonitor(s, httpAttrs({ name: "their monitor", group_id: theirs }), other.token);
    expect((await c.get(`/groups/${theirs}/edit`)).res.status).toBe(404);
    expect((await c.post(`/groups/${theirs}/delete`, {})).res.status).toBe(404);
    expect((await c.post(`/groups/${theirs}`, { name: "mine", sort_order: "0" })).res.status).toBe(404);
    const list = await c.get(`/?group_id=${theirs}`);
    expect(list.text).not.toContain("their monitor");
    expect(list.text).toContain("No monitor matches these filters");
  });
});

describe("the monitor form: group and tags", () => {
  test("a monitor made through the form gets its group and tags; an edit changes or clears them; a bad tag is shown", async () => {
    const group = Number((await s.api("POST", "/api/v1/groups", { name: "Form group" })).json.data.id);
    const form = await c.get("/monitors/new?type=http");
    expect(form.text).toMatch(new RegExp(`<select id="f-group_id" name="group_id"[^>]*><option value="">\\(none\\)</option>.*<option value="${group}">Form group</option>`));
    expect(form.text).toContain('<input type="text" id="f-tags" name="tags"');
    const created = await c.post("/monitors", { monitor_type: "http", name: "from the form", target: "http://127.0.0.1:9/x", interval_sec: "60", timeout_ms: "5000", group_id: String(group), tags: "env:prod,  team/web ,critical" });
    expect(created.res.status).toBe(303);
    const id = Number(/\/monitors\/(\d+)/.exec(created.res.headers.get("location")!)![1]);
    expect(await monitorAttrs(id)).toMatchObject({ group_id: group, tags: ["critical", "env:prod", "team/web"] });

    const detail = await c.get(`/monitors/${id}`);
    expect(detail.text).toContain(`<a href="/?group_id=${group}">Form group</a>`);
    expect(detail.text).toContain('<a class="tag" href="/?tag=env%3Aprod">env:prod</a>');
    const edit = await c.get(`/monitors/${id}/edit`);
    expect(edit.text).toContain(`<option value="${group}" selected>Form group</option>`);
    expect(edit.text).toContain('value="critical, env:prod, team/web"');

    const bad = await c.post(`/monitors/${id}`, { name: "from the form", target: "http://127.0.0.1:9/x", interval_sec: "60", timeout_ms: "5000", group_id: "", tags: "ok, not<ok>" });
    expect(bad.res.status).toBe(422);
    expect(formErrors(bad.text).tags![0]).toContain("Tags has &quot;not&lt;ok&gt;&quot;, which is not a tag");
    const cleared = await c.post(`/monitors/${id}`, { name: "from the form", target: "http://127.0.0.1:9/x", interval_sec: "60", timeout_ms: "5000", group_id: "", tags: "" });
    expect(cleared.res.status).toBe(303);
    expect(await monitorAttrs(id)).toMatchObject({ group_id: null, tags: [] });
  });
});

describe("the monitor list: filters and sections", () => {
  let acct: { accountId: number; token: string };
  let lc: WebClient;
  const m: Record<string, number> = {};
  let web = 0;
  let data = 0;

  beforeAll(async () => {
    acct = await makeAccount(s.ctx, "lists", "pro");
    await addUser(s, "lister", "lists");
    lc = await signedInClient(s, "lister");
    const group = async (name: string, sort_order: number) => Number((await s.api("POST", "/api/v1/groups", { name, sort_order }, { token: acct.token })).json.data.id);
    web = await group("Web", 2);
    data = await group("Data", 1);
    await group("Empty", 0);
    for (const [name, group_id, tags] of [
      ["shop", web, ["env:prod", "critical"]],
      ["shop-staging", web, ["env:staging"]],
      ["postgres", data, ["env:prod", "critical"]],
      ["loose", null, ["env:prod"]],
    ] as const) {
      m[name] = await createMonitor(s, httpAttrs({ name, group_id, tags: [...tags] }), acct.token);
    }
  });

  const sectionNames = (page: string) => [...page.matchAll(/<details class="group" open data-section="[^"]+"><summary><span class="gname">([^<]+)<\/span>/g)].map((x) => x[1]);

  test("sections per group, in the groups' order, the ungrouped last; empty groups are not shown; tag chips on rows", async () => {
    const { text } = await lc.get("/");
    expect(sectionNames(text)).toEqual(["Data", "Web", "Not in a group"]);
    expect(listedMonitorNames(text)).toEqual(["postgres", "shop", "shop-staging", "loose"]);
    expect(text).toContain('<a href="/monitors/' + m.shop + '">shop</a><span class="tags"><a class="tag" href="/?tag=critical">critical</a><a class="tag" href="/?tag=env%3Aprod">env:prod</a></span>');
    // the filter form lists every group, the empty one too
    expect(text).toMatch(/<select id="flt-group" name="group_id"><option value="">Every group<\/option><option value="\d+">Empty<\/option><option value="\d+">Data<\/option><option value="\d+">Web<\/option><\/select>/);
  });

  test("?group_id= and ?tag= filter on the server; several tags (repeated or comma-separated) must all be present", async () => {
    expect(listedMonitorNames((await lc.get(`/?group_id=${web}`)).text)).toEqual(["shop", "shop-staging"]);
    expect(listedMonitorNames((await lc.get("/?tag=env:prod")).text)).toEqual(["postgres", "shop", "loose"]);
    expect(listedMonitorNames((await lc.get("/?tag=env:prod&tag=critical")).text)).toEqual(["postgres", "shop"]);
    expect(listedMonitorNames((await lc.get(`/?tag=${encodeURIComponent("env:prod, critical")}`)).text)).toEqual(["postgres", "shop"]);
    const both = await lc.get(`/?group_id=${web}&tag=critical`);
    expect(listedMonitorNames(both.text)).toEqual(["shop"]);
    expect(both.text).toContain(`<option value="${web}" selected>Web</option>`);
    expect(both.text).toContain('name="tag" value="critical"');
    expect(both.text).toContain('<a class="btn" href="/">Clear</a>');
    // the live part fetches its rows with the same filters
    expect(both.text).toContain(`data-live="/monitors/rows?group_id=${web}&amp;tag=critical"`);
    expect(listedMonitorNames((await lc.get(`/monitors/rows?group_id=${web}&tag=critical`)).text)).toEqual(["shop"]);
  });

  test("a tag that cannot be one is left out and said", async () => {
    const { res, text } = await lc.get(`/?tag=${encodeURIComponent("critical, <b>")}`);
    expect(res.status).toBe(200);
    expect(text).toContain("&quot;&lt;b&gt;&quot; is not a tag");
    expect(listedMonitorNames(text)).toEqual(["postgres", "shop"]);
  });
});

describe("the status page editor: updates", () => {
  test("write, list, change to resolved, refuse a status on info, delete; every POST redirects", async () => {
    const on = await createMonitor(s, httpAttrs({ name: "on page" }));
    await createMonitor(s, httpAttrs({ name: "off page" }));
    const page = await createStatusPage(s, { name: "Editor page", slug: "editor-page", monitor_ids: [on] });
    const edit = await c.get(`/status-pages/${page}/edit`);
    expect(edit.text).toContain('id="updates"');
    expect(edit.text).toContain("No updates yet.");
    const form = await c.get(`/status-pages/${page}/updates/new`);
    expect(form.text).toContain(">on page</label>");
    expect(form.text).not.toContain(">off page</label>"); // only the page's monitors can be affected

    const created = await c.post(`/status-pages/${page}/updates`, { title: "Checkout <slow>", body: "Line 1\nLine 2", kind: "incident", status: "investigating", affected_monitor_ids: String(on), published_at: "" });
    expect(created.res.status).toBe(303);
    expect(created.res.headers.get("location")).toBe(`/status-pages/${page}/edit?msg=created#updates`);
    const [update] = (await s.api("GET", `/api/v1/status-pages/${page}/updates`)).json.data;
    expect(update.attributes).toMatchObject({ title: "Checkout <slow>", body: "Line 1\nLine 2", kind: "incident", status: "investigating", affected_monitor_ids: [on] });
    const listed = await c.get(`/status-pages/${page}/edit?msg=created`);
    expect(listed.text).toContain('<td data-label="Title">Checkout &lt;slow&gt;</td><td data-label="Kind">Incident</td><td data-label="Status">Investigating</td>');

    const resolved = await c.post(`/status-pages/${page}/updates/${update.id}`, { title: "Checkout <slow>", body: "Fixed.", kind: "incident", status: "resolved", affected_monitor_ids: String(on), published_at: update.attributes.published_at });
    expect(resolved.res.status).toBe(303);
    expect((await s.api("GET", `/api/v1/status-pages/${page}/updates/${update.id}`)).json.data.attributes).toMatchObject({ status: "resolved", body: "Fixed." });

    const refused = await c.post(`/status-pages/${page}/updates`, { title: "FYI", body: "", kind: "info", status: "monitoring", published_at: "" });
    expect(refused.res.status).toBe(422);
    expect(formErrors(refused.text).status![0]).toContain("is only for incident updates");

    const del = await c.get(`/status-pages/${page}/updates/${update.id}/delete`);
    expect(del.text).toContain("Delete update?");
    const gone = await c.post(`/status-pages/${page}/updates/${update.id}/delete`, {});
    expect(gone.res.status).toBe(303);
    expect((await s.api("GET", `/api/v1/status-pages/${page}/updates`)).json.data).toEqual([]);
  });

  test("another account's page and updates are 404 pages", async () => {
    const other = await makeAccount(s.ctx, "editor-other");
    const theirs = await createStatusPage(s, { name: "Their page" }, other.token);
    const uid = (await s.api("POST", `/api/v1/status-pages/${theirs}/updates`, { title: "theirs", kind: "info" }, { token: other.token })).json.data.id;
    for (const path of [`/status-pages/${theirs}/updates/new`, `/status-pages/${theirs}/updates/${uid}/edit`, `/status-pages/${theirs}/updates/${uid}/delete`]) expect((await c.get(path)).res.status).toBe(404);
    expect((await c.post(`/status-pages/${theirs}/updates`, { title: "mine", kind: "info" })).res.status).toBe(404);
    expect((await c.post(`/status-pages/${theirs}/updates/${uid}/delete`, {})).res.status).toBe(404);
  });
});
