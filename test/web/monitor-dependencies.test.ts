/**
 * The dashboard's side of dependencies, reminders and escalation (README "Dependencies, reminders
 * and escalation"): the monitor form's own section picks parents among the account's other monitors
 * and sets reminders and escalation in words; the API's messages (a cycle, a missing delay) come
 * back on the form; the monitor page lists its parents and children as links, and its reminders and
 * escalation.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { insertMonitorEvent } from "../../src/store/monitor-events.ts";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, formErrors, signedInClient, unescape, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "admin");
  c = await signedInClient(s, "admin");
});
afterAll(() => s.stop());

const idFrom = (location: string | null) => Number(/\/monitors\/(\d+)/.exec(location ?? "")![1]);
const base = { monitor_type: "http", target: "http://127.0.0.1:9/", interval_sec: "60", timeout_ms: "5000" };

test("the form's own section lists the account's other monitors and channels to pick, and saves parents, reminders and escalation", async () => {
  const other = await makeAccount(s.ctx, "other-web");
  await createMonitor(s, httpAttrs({ name: "their switch" }), other.token);
  const sw = await createMonitor(s, httpAttrs({ name: "core switch" }));
  const router = await createMonitor(s, httpAttrs({ name: "edge <router>" }));
  const pager = Number((await s.api("POST", "/api/v1/notification-channels", { name: "on-call pager", channel_type: "webhook", url: "http://127.0.0.1:9/p" })).json.data.id);

  const form = await c.get("/monitors/new?type=http");
  expect(form.text).toContain('<h2 id="alerting-h">Dependencies and alerting</h2>');
  expect(form.text).toContain(`name="depends_on_ids" value="${sw}"`);
  expect(form.text).toContain("core switch (http)");
  expect(form.text).toContain("edge &lt;router&gt; (http)");
  expect(form.text).not.toContain("their switch");
  expect(form.text).toContain(`name="escalation_channel_ids" value="${pager}"`);
  expect(form.text).toContain("Remind every (minutes)");
  expect(form.text).toContain("While an incident stays open, its down alert is sent again this often (5 to 1440). Empty: no reminders.");
  // the section's attributes are not among the advanced ones as well
  expect(form.text.match(/name="alert_repeat_minutes"/g)!.length).toBe(1);

  const created = await c.post("/monitors", { ...base, name: "shop", depends_on_ids: [String(sw), String(router)], alert_repeat_minutes: "15", escalation_channel_ids: String(pager), escalate_after_minutes: "30" });
  expect(created.res.status).toBe(303);
  const id = idFrom(created.res.headers.get("location"));
  expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ depends_on_ids: [sw, router], alert_repeat_minutes: 15, escalation_channel_ids: [pager], escalate_after_minutes: 30 });

  // the edit form shows them ticked and filled in, and not the monitor itself among the parents
  const edit = await c.get(`/monitors/${id}/edit`);
  expect(edit.text).toContain(`name="depends_on_ids" value="${sw}" checked`);
  expect(edit.text).not.toContain(`name="depends_on_ids" value="${id}"`);
  expect(edit.text).toMatch(/name="alert_repeat_minutes" value="15"/);

  // unticking a parent and emptying the reminders saves that
  const saved = await c.post(`/monitors/${id}`, { ...base, name: "shop", depends_on_ids: String(router), alert_repeat_minutes: "", escalation_channel_ids: String(pager), escalate_after_minutes: "30" });
  expect(saved.res.status).toBe(303);
  expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes).toMatchObject({ depends_on_ids: [router], alert_repeat_minutes: null });
});

test("a cycle and a missing escalation delay come back on the form with the API's words", async () => {
  const a = await createMonitor(s, httpAttrs({ name: "a" }));
  const b = await createMonitor(s, httpAttrs({ name: "b", depends_on_ids: [a] }));
  const pager = Number((await s.api("POST", "/api/v1/notification-channels", { name: "pager 2", channel_type: "webhook", url: "http://127.0.0.1:9/p" })).json.data.id);
  const res = await c.post(`/monitors/${a}`, { ...base, name: "a", depends_on_ids: String(b), escalation_channel_ids: String(pager), escalate_after_minutes: "" });
  expect(res.res.status).toBe(422);
  expect(Object.keys(formErrors(res.text))).toEqual(["escalate_after_minutes"]);
  const cycle = await c.post(`/monitors/${a}`, { ...base, name: "a", depends_on_ids: String(b) });
  expect(cycle.res.status).toBe(422);
  expect(formErrors(cycle.text).depends_on_ids!.map(unescape)).toEqual([`Depends on would make a dependency cycle: ${a} → ${b} → ${a} (each monitor depends on the next)`]);
  // the summary at the top links to the section's field
  expect(cycle.text).toContain('<a href="#f-depends_on_ids">Depends on</a>');
});

test("the monitor page lists its parents and children as links with their state, and its reminders and escalation in words", async () => {
  const parent = await createMonitor(s, httpAttrs({ name: "uplink" }));
  const pager = Number((await s.api("POST", "/api/v1/notification-channels", { name: "pager 3", channel_type: "webhook", url: "http://127.0.0.1:9/p" })).json.data.id);
  const mid = await createMonitor(s, httpAttrs({ name: "gateway", depends_on_ids: [parent], alert_repeat_minutes: 10, escalation_channel_ids: [pager], escalate_after_minutes: 20 }));
  const leaf = await createMonitor(s, httpAttrs({ name: "checkout", depends_on_ids: [mid] }));
  const page = (await c.get(`/monitors/${mid}`)).text;
  const panel = /<section class="panel" aria-labelledby="deps-h">([\s\S]*?)<\/section>/.exec(page)![1]!;
  expect(panel).toContain(`<dt>Depends on</dt><dd><ul class="plain"><li><a href="/monitors/${parent}">uplink</a> <span class="st st-unknown">`);
  expect(panel).toContain(`<dt>Depended on by</dt><dd><ul class="plain"><li><a href="/monitors/${leaf}">checkout</a>`);
  expect(panel).toContain("<dt>Reminders</dt><dd>every 10 min while an incident is open</dd>");
  expect(panel).toContain("<dt>Escalation</dt><dd>to pager 3 (webhook) after 20 min of an open incident</dd>");
  const top = (await c.get(`/monitors/${parent}`)).text;
  expect(top).toContain("<dt>Depends on</dt><dd><span class=\"muted\">nothing</span>");
  expect(top).toContain(`<a href="/monitors/${mid}">gateway</a>`);
});

test("with many monitors the parents list gets a filter box, hidden until the script shows it", async () => {
  for (let i = 0; i < 9; i++) await createMonitor(s, httpAttrs({ name: `filler ${i}` }));
  const form = await c.get("/monitors/new?type=heartbeat");
  expect(form.text).toContain('<div class="field" data-filter-box hidden><label for="dep-filter">Find a monitor</label><input type="search" id="dep-filter" data-filter="dep-pick"');
  expect(form.text).toContain('<div class="pick" id="dep-pick">');
});

test("a heartbeat monitor's timeline shows its reminders and escalations in words", async () => {
  const id = await createMonitor(s, { name: "nightly", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, is_paused: true });
  await insertMonitorEvent(s.ctx.db, { monitorId: id, kind: "still_down", at: Date.now() - 1000, reason: "down for 30 min; reminder sent to 1 channel" });
  await insertMonitorEvent(s.ctx.db, { monitorId: id, kind: "escalated", at: Date.now(), reason: "down for 45 min; escalated to 2 channels" });
  const page = (await c.get(`/monitors/${id}`)).text;
  expect(page).toContain('<td data-label="Event"><strong>reminder sent</strong></td><td class="wrap" data-label="Detail">down for 30 min; reminder sent to 1 channel</td>');
  expect(page).toContain('<td data-label="Event"><strong>escalated</strong></td><td class="wrap" data-label="Detail">down for 45 min; escalated to 2 channels</td>');
});
