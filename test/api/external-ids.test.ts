import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, httpAttrs } from "./fixtures.ts";

// external_id on every resource the API creates (README "Configuration as code"), against a real
// server: optional, echoed in responses, unique within the account for each kind of resource.
let s: TestServer;
let other: { accountId: number; token: string };
let monitorId: number;

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  monitorId = await createMonitor(s, httpAttrs({ name: "base" }));
});
afterAll(() => s.stop());

/** Each resource: its path, and attributes of a valid new one named `n`. */
const KINDS: Record<string, { path: string; attrs: (n: string) => Record<string, unknown> }> = {
  monitor: { path: "/api/v1/monitors", attrs: (n) => httpAttrs({ name: n }) },
  group: { path: "/api/v1/groups", attrs: (n) => ({ name: n }) },
  notification_channel: { path: "/api/v1/notification-channels", attrs: (n) => ({ name: n, channel_type: "webhook", url: "http://127.0.0.1:9/hook" }) },
  maintenance_window: { path: "/api/v1/maintenance-windows", attrs: (n) => ({ name: n, monitor_ids: [monitorId], schedule: "0 3 * * 0", duration_sec: 3600 }) },
  status_page: { path: "/api/v1/status-pages", attrs: (n) => ({ name: n, slug: `page-${n.replaceAll("_", "-")}` }) },
};

describe.each(Object.entries(KINDS))("%s external_id", (kind, { path, attrs }) => {
  test("defaults to null, is set on create and on update, and shows in responses", async () => {
    const plain = await s.api("POST", path, attrs(`${kind}-plain`));
    expect(plain.status).toBe(201);
    expect(plain.json.data.attributes.external_id).toBeNull();
    const made = await s.api("POST", path, { ...attrs(`${kind}-a`), external_id: `${kind}/a` });
    expect(made.status).toBe(201);
    expect(made.json.data.attributes.external_id).toBe(`${kind}/a`);
    const id = made.json.data.id;
    expect((await s.api("GET", `${path}/${id}`)).json.data.attributes.external_id).toBe(`${kind}/a`);
    const renamed = await s.api("PATCH", `${path}/${id}`, { external_id: `${kind}/renamed` });
    expect(renamed.status).toBe(200);
    expect(renamed.json.data.attributes.external_id).toBe(`${kind}/renamed`);
    // its own value again is no conflict
    expect((await s.api("PATCH", `${path}/${id}`, { external_id: `${kind}/renamed` })).status).toBe(200);
    const cleared = await s.api("PATCH", `${path}/${id}`, { external_id: null });
    expect(cleared.json.data.attributes.external_id).toBeNull();
  });

  test("a value taken in the account is 422 'has already been taken', on create and update; another account may use it", async () => {
    expect((await s.api("POST", path, { ...attrs(`${kind}-b`), external_id: `${kind}/b` })).status).toBe(201);
    const again = await s.api("POST", path, { ...attrs(`${kind}-c`), external_id: `${kind}/b` });
    expect(again.status).toBe(422);
    expect(again.json.error.details.external_id).toEqual(["has already been taken"]);
    const c = await s.api("POST", path, attrs(`${kind}-c`));
    const patch = await s.api("PATCH", `${path}/${c.json.data.id}`, { external_id: `${kind}/b` });
    expect(patch.status).toBe(422);
    expect(patch.json.error.details.external_id).toEqual(["has already been taken"]);
    // the other account's own monitor for a window; a slug is unique across the instance
    const theirs: Record<string, unknown> = { ...attrs(`${kind}-x`) };
    if (kind === "maintenance_window") theirs.monitor_ids = [await createMonitor(s, httpAttrs(), other.token)];
    if (kind === "status_page") theirs.slug = "their-page";
    expect((await s.api("POST", path, { ...theirs, external_id: `${kind}/b` }, { token: other.token })).status).toBe(201);
  });

  test("?external_id= lists only the resource with it", async () => {
    const id = (await s.api("POST", path, { ...attrs(`${kind}-f`), external_id: `${kind}/f x` })).json.data.id;
    const found = await s.api("GET", `${path}?external_id=${encodeURIComponent(`${kind}/f x`)}`);
    expect(found.status).toBe(200);
    expect(found.json.data.map((d: { id: string }) => d.id)).toEqual([id]);
    expect((await s.api("GET", `${path}?external_id=none-such`)).json.data).toEqual([]);
    // no stored text holds a NUL: such a value names nothing (PostgreSQL's text would refuse it)
    const nul = await s.api("GET", `${path}?external_id=a%00b`);
    expect([nul.status, nul.json.data]).toEqual([200, []]);
    // another account's resource with the same external_id is not listed
    expect((await s.api("GET", `${path}?external_id=${encodeURIComponent(`${kind}/f x`)}`, undefined, { token: other.token })).json.data).toEqual([]);
  });

  test("must be 1 to 200 characters", async () => {
    for (const bad of ["", "x".repeat(201), 7]) {
      const res = await s.api("POST", path, { ...attrs(`${kind}-bad`), external_id: bad });
      expect(res.status).toBe(422);
      expect(res.json.error.details.external_id).toEqual(["must be a string of 1 to 200 characters, or null"]);
    }
    expect((await s.api("POST", path, { ...attrs(`${kind}-long`), external_id: "x".repeat(200) })).status).toBe(201);
  });
});

test("the OpenAPI document shows external_id on each kind of resource", async () => {
  const doc = (await s.api("GET", "/api/v1/openapi.json")).json;
  for (const { path } of Object.values(KINDS)) expect(JSON.stringify(doc.paths[path])).toContain('"external_id"');
});

test("concurrent writes of one external_id: one is created, the others are 422, none is a 500", async () => {
  for (const [kind, { path, attrs }] of Object.entries(KINDS)) {
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => s.api("POST", path, { ...attrs(`${kind}-race-${i}`), external_id: `${kind}/race` })));
    expect({ kind, statuses: answers.map((r) => r.status).sort() }).toEqual({ kind, statuses: [201, 422, 422, 422, 422, 422] });
  }
});
