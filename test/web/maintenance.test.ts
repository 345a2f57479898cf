/**
 * The maintenance window pages through plain form posts, as a browser without script sends them:
 * 303 to the list after a write, the form's times read in the window's zone, a switch of kind, 422
 * with the form again, CSRF refused, another account's window a 404, and the monitor form that
 * shows the maintenance switch alone while a window is under way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, formErrors, signedInClient, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
let m1: number, m2: number;
beforeAll(async () => {
  s = await startTestServer();
  await addUser(s, "alice");
  c = await signedInClient(s, "alice");
  m1 = await createMonitor(s, httpAttrs({ name: "web" }));
  m2 = await createMonitor(s, httpAttrs({ name: "db" }));
});
afterAll(() => s?.stop());

const windows = async () => (await s.api("GET", "/api/v1/maintenance-windows?per_page=100")).json.data as { id: string; attributes: Record<string, any> }[];
const base = { name: "Upgrade", description: "", timezone: "Europe/Berlin", is_enabled: "true" };

describe("the maintenance pages without script", () => {
  test("create a one-off window: 303 to the list, times read in its zone", async () => {
    await c.get("/maintenance/new");
    const r = await c.post("/maintenance", { ...base, kind: "one_off", starts_at: "2030-07-01T02:00", ends_at: "2030-07-01T03:30", schedule: "", duration_min: "60", monitor_ids: [String(m1), String(m2)] });
    expect(r.res.status).toBe(303);
    expect(r.res.headers.get("location")).toBe("/maintenance?msg=created");
    const [w] = (await windows()).filter((x) => x.attributes.name === "Upgrade");
    expect(w!.attributes).toMatchObject({ starts_at: "2030-07-01T00:00:00.000Z", ends_at: "2030-07-01T01:30:00.000Z", timezone: "Europe/Berlin", monitor_ids: [m1, m2], schedule: null, description: null });
    const list = await c.get("/maintenance?msg=created");
    expect(list.text).toContain("Created.");
    expect(list.text).toContain("Upgrade");
    // the edit form shows the times as they were typed, in the window's zone
    const edit = await c.get(`/maintenance/${w!.id}/edit`);
    expect(edit.text).toContain('value="2030-07-01T02:00"');
    expect(edit.text).toContain(`id="mon-${m1}" name="monitor_ids" value="${m1}" checked`);
  });

  test("switch a window to recurring: the one-off times go, duration in minutes", async () => {
    const w = (await windows()).find((x) => x.attributes.name === "Upgrade")!;
    await c.get(`/maintenance/${w.id}/edit`);
    const r = await c.post(`/maintenance/${w.id}`, { ...base, kind: "recurring", starts_at: "2030-07-01T02:00", ends_at: "2030-07-01T03:30", schedule: "30 2 * * 6", duration_min: "45", monitor_ids: [String(m2)] });
    expect(r.res.status).toBe(303);
    expect((await s.api("GET", `/api/v1/maintenance-windows/${w.id}`)).json.data.attributes).toMatchObject({ starts_at: null, ends_at: null, schedule: "30 2 * * 6", duration_sec: 2700, monitor_ids: [m2] });
  });

  test("a refused form comes back (422) with the messages of the chosen kind, in the form's words", async () => {
    await c.get("/maintenance/new");
    const r = await c.post("/maintenance", { ...base, name: "", kind: "recurring", starts_at: "", ends_at: "", schedule: "0 3 * *", duration_min: "0" });
    expect(r.res.status).toBe(422);
    const errs = formErrors(r.text);
    expect(Object.keys(errs).sort()).toEqual(["duration_sec", "monitor_ids", "name", "schedule"]);
    expect(errs.monitor_ids).toEqual(["Monitors must not be empty: a window puts at least one monitor in maintenance"]);
    expect(errs.duration_sec).toEqual(["Duration (minutes) must be a number of minutes from 1 to 43200 (30 days)"]);
    expect(r.text).toContain('value="0 3 * *"');
  });

  test("a post without the session's CSRF token is refused and changes nothing", async () => {
    const before = (await windows()).length;
    const r = await c.post("/maintenance", { ...base, kind: "one_off", starts_at: "2030-01-01T00:00", ends_at: "2030-01-01T01:00", monitor_ids: String(m1) }, { csrf: null });
    expect(r.res.status).toBe(403);
    const w = (await windows())[0]!;
    expect((await c.post(`/maintenance/${w.id}/delete`, {}, { csrf: "forged-token-forged-token" })).res.status).toBe(403);
    expect((await windows()).length).toBe(before);
  });

  test("another account's window is a 404 on every page; its monitors are not offered", async () => {
    const other = await makeAccount(s.ctx, "maint-web-other", "enterprise");
    const theirMonitor = await createMonitor(s, httpAttrs({ name: "their monitor" }), other.token);
    const theirs = (await s.api("POST", "/api/v1/maintenance-windows", { name: "Theirs", monitor_ids: [theirMonitor], schedule: "0 1 * * *", duration_sec: 600 }, { token: other.token })).json.data.id;
    expect((await c.get(`/maintenance/${theirs}/edit`)).res.status).toBe(404);
    expect((await c.get(`/maintenance/${theirs}/delete`)).res.status).toBe(404);
    await c.get("/maintenance");
    expect((await c.post(`/maintenance/${theirs}/delete`, {})).res.status).toBe(404);
    expect((await c.post(`/maintenance/${theirs}`, { ...base, kind: "one_off" })).res.status).toBe(404);
    const list = await c.get("/maintenance");
    expect(list.text).not.toContain("Theirs");
    expect((await c.get("/maintenance/new")).text).not.toContain("their monitor");
    // and a monitor id of theirs posted in a form is refused
    const r = await c.post("/maintenance", { ...base, kind: "one_off", starts_at: "2030-01-01T00:00", ends_at: "2030-01-01T01:00", monitor_ids: String(theirMonitor) });
    expect(r.res.status).toBe(422);
    expect(r.text).toContain(`monitor ${theirMonitor} does not exist in this account`);
  });

  test("delete through the confirm page", async () => {
    const w = (await windows())[0]!;
    const confirm = await c.get(`/maintenance/${w.id}/delete`);
    expect(confirm.text).toContain("Delete maintenance window?");
    const r = await c.post(`/maintenance/${w.id}/delete`, {});
    expect(r.res.status).toBe(303);
    expect(r.res.headers.get("location")).toBe("/maintenance?msg=deleted");
    expect((await s.api("GET", `/api/v1/maintenance-windows/${w.id}`)).status).toBe(404);
  });
});

test("the monitor form shows the maintenance switch alone, so saving it during a window does not turn the switch on", async () => {
  const m = await createMonitor(s, httpAttrs({ name: "held by a window" }));
  await s.api("POST", "/api/v1/maintenance-windows", { name: "now", monitor_ids: [m], starts_at: new Date(Date.now() - 60_000).toISOString(), ends_at: new Date(Date.now() + 3_600_000).toISOString() });
  expect((await s.api("GET", `/api/v1/monitors/${m}`)).json.data.attributes.is_in_maintenance).toBe(true);
  const form = await c.get(`/monitors/${m}/edit`);
  expect(form.text).toMatch(/<input type="checkbox" id="f-is_in_maintenance" name="is_in_maintenance" value="true"( aria-describedby="[^"]+")?>/);
});
