/**
 * /api/v1/maintenance-windows on a real server: CRUD with the envelopes and paging of the other
 * resources, every validation failure (422 with details), tenancy and scopes, the read-only
 * attributes, and is_in_maintenance on the monitors an active window holds (docs/maintenance-windows.md).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMonitor, expectListEnvelope, httpAttrs, ISO_MS } from "./fixtures.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";

const BASE = "/api/v1/maintenance-windows";
const HOUR = 3_600_000;
let s: TestServer;
let m1: number, m2: number;
const iso = (t: number) => new Date(t).toISOString();

beforeAll(async () => {
  s = await startTestServer();
  m1 = await createMonitor(s, httpAttrs({ name: "web" }));
  m2 = await createMonitor(s, httpAttrs({ name: "api" }));
});
afterAll(() => s?.stop());

const oneOff = (over: Record<string, unknown> = {}) => ({ name: "DB upgrade", monitor_ids: [m1], starts_at: iso(Date.now() + HOUR), ends_at: iso(Date.now() + 2 * HOUR), ...over });

async function create(body: Record<string, unknown>, token?: string) {
  const r = await s.api("POST", BASE, body, token ? { token } : {});
  if (r.status !== 201) throw new Error(`POST ${BASE} answered ${r.status}: ${r.text}`);
  return r.json.data;
}

describe("CRUD", () => {
  test("POST a one-off window: 201 with every attribute, times in UTC with ms", async () => {
    const starts = Date.now() + HOUR;
    const r = await s.api("POST", BASE, { name: "  DB upgrade ", description: "Postgres 17", monitor_ids: [m2, m1], starts_at: iso(starts), ends_at: iso(starts + 90 * 60_000) });
    expect(r.status).toBe(201);
    expect(r.json.data.type).toBe("maintenance_window");
    expect(r.json.data.id).toMatch(/^\d+$/);
    const a = r.json.data.attributes;
    expect(Object.keys(a)).toEqual(["name", "description", "external_id", "monitor_ids", "is_enabled", "timezone", "starts_at", "ends_at", "schedule", "duration_sec", "is_active", "next_starts_at", "next_ends_at", "created_at", "updated_at"]);
    expect(a).toMatchObject({ name: "DB upgrade", description: "Postgres 17", monitor_ids: [m1, m2].sort((x, y) => x - y), is_enabled: true, timezone: "UTC", schedule: null, duration_sec: null, is_active: false });
    expect(a.starts_at).toBe(iso(starts));
    expect(a.next_starts_at).toBe(iso(starts));
    expect(a.next_ends_at).toBe(iso(starts + 90 * 60_000));
    for (const k of ["starts_at", "ends_at", "created_at", "updated_at"]) expect(a[k]).toMatch(ISO_MS);
    expect(typeof r.json.meta.request_id).toBe("string");
  });

  test("a time without an offset is read in the window's timezone", async () => {
    const d = await create(oneOff({ timezone: "Europe/Berlin", starts_at: "2030-07-01T02:00", ends_at: "2030-07-01T03:30:00" }));
    expect(d.attributes.starts_at).toBe("2030-07-01T00:00:00.000Z"); // summer: UTC+2
    expect(d.attributes.ends_at).toBe("2030-07-01T01:30:00.000Z");
    const winter = await create(oneOff({ timezone: "Europe/Berlin", starts_at: "2030-12-01T02:00", ends_at: "2030-12-01T02:00:00+00:00" }));
    expect(winter.attributes.starts_at).toBe("2030-12-01T01:00:00.000Z"); // winter: UTC+1
    // with an offset, an instant whatever the zone: 02:00+05:00 is before 02:00 in Berlin
    const r = await s.api("POST", BASE, oneOff({ timezone: "Europe/Berlin", starts_at: "2030-12-01T02:00", ends_at: "2030-12-01T02:00:00+05:00" }));
    expect(r.json.error.details).toEqual({ ends_at: ["must be after starts_at"] });
  });

  test("POST a recurring window: next_starts_at is the schedule's next time in its zone", async () => {
    const d = await create({ name: "Sunday patching", monitor_ids: [m1], schedule: "0 3 * * 0", duration_sec: 7200, timezone: "America/New_York" });
    const a = d.attributes;
    expect(a).toMatchObject({ schedule: "0 3 * * 0", duration_sec: 7200, starts_at: null, ends_at: null, is_active: false });
    const next = Date.parse(a.next_starts_at);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(7 * 24 * HOUR + HOUR);
    expect(Date.parse(a.next_ends_at) - next).toBe(7200_000);
    const local = new Intl.DateTimeFormat("en-US", { timeZone: "America/New_York", weekday: "short", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(new Date(next));
    expect(local).toBe("Sun 03:00");
  });

  test("GET one, the list with paging (id ascending), PATCH, DELETE", async () => {
    const a = await create(oneOff({ name: "first" }));
    const b = await create(oneOff({ name: "second" }));
    const got = await s.api("GET", `${BASE}/${a.id}`);
    expect(got.status).toBe(200);
    expect(got.json.data).toEqual(a);

    const all = await s.api("GET", `${BASE}?per_page=100`);
    expectListEnvelope(all.json, { page: 1, per_page: 100, total: all.json.pagination.total, total_pages: 1 });
    const ids = (all.json.data as { id: string }[]).map((d) => Number(d.id));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(ids).toContain(Number(a.id));
    const total = all.json.pagination.total;
    const page2 = await s.api("GET", `${BASE}?per_page=1&page=2`);
    expectListEnvelope(page2.json, { page: 2, per_page: 1, total, total_pages: total });
    expect(page2.json.data[0].id).toBe(all.json.data[1].id);
    expect((await s.api("GET", `${BASE}?per_page=500`)).json.pagination.per_page).toBe(100);
    expect((await s.api("GET", `${BASE}?page=0`)).status).toBe(422);
    expect((await s.api("GET", `${BASE}?page=9999`)).json.data).toEqual([]);

    const p = await s.api("PATCH", `${BASE}/${a.id}`, { name: "renamed", monitor_ids: [m2], description: null });
    expect(p.status).toBe(200);
    expect(p.json.data.attributes).toMatchObject({ name: "renamed", monitor_ids: [m2], description: null, starts_at: a.attributes.starts_at });
    // read-only attributes sent back are ignored; a JSON:API body works
    const back = await s.api("PATCH", `${BASE}/${a.id}`, { data: { type: "maintenance_window", id: a.id, attributes: { ...p.json.data.attributes, is_active: true, next_starts_at: null, name: "again" } } });
    expect(back.status).toBe(200);
    expect(back.json.data.attributes).toMatchObject({ name: "again", is_active: false, next_starts_at: a.attributes.next_starts_at });

    // switching kinds: the other kind's attributes go to null in the same write
    const rec = await s.api("PATCH", `${BASE}/${b.id}`, { starts_at: null, ends_at: null, schedule: "30 1 * * *", duration_sec: 600 });
    expect(rec.status).toBe(200);
    expect(rec.json.data.attributes).toMatchObject({ starts_at: null, ends_at: null, schedule: "30 1 * * *", duration_sec: 600 });

    const del = await s.api("DELETE", `${BASE}/${a.id}`);
    expect(del.status).toBe(200);
    expect(del.json.data).toEqual({ id: a.id, type: "maintenance_window", attributes: { deleted: true } });
    expect((await s.api("GET", `${BASE}/${a.id}`)).status).toBe(404);
    expect((await s.api("DELETE", `${BASE}/${a.id}`)).status).toBe(404);
    expect((await s.api("PATCH", `${BASE}/${a.id}`, { name: "x" })).status).toBe(404);
    expect((await s.api("GET", `${BASE}/abc`)).status).toBe(404);
  });

  test("a disabled window is never active and has no next span", async () => {
    const d = await create(oneOff({ is_enabled: false, starts_at: iso(Date.now() - HOUR) }));
    expect(d.attributes).toMatchObject({ is_enabled: false, is_active: false, next_starts_at: null, next_ends_at: null });
    expect((await s.api("GET", `/api/v1/monitors/${m1}`)).json.data.attributes.is_in_maintenance).toBe(false);
  });
});

describe("is_in_maintenance of the monitors", () => {
  test("true while an active window holds the monitor, false before it starts and once it is gone; the switch is kept apart", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "held" }));
    const later = await create(oneOff({ monitor_ids: [m] }));
    expect(later.attributes.is_active).toBe(false);
    const monitor = async () => (await s.api("GET", `/api/v1/monitors/${m}`)).json.data.attributes;
    expect((await monitor()).is_in_maintenance).toBe(false);

    const now = await create(oneOff({ monitor_ids: [m], starts_at: iso(Date.now() - 60_000), ends_at: iso(Date.now() + HOUR) }));
    expect(now.attributes.is_active).toBe(true);
    expect(now.attributes.next_starts_at).toBe(now.attributes.starts_at);
    expect((await monitor()).is_in_maintenance).toBe(true);
    const listed = (await s.api("GET", "/api/v1/monitors?per_page=100")).json.data.find((d: { id: string }) => d.id === String(m));
    expect(listed.attributes.is_in_maintenance).toBe(true);

    // the switch alone is stored: it stays off under the window
    const row = await s.ctx.db.selectFrom("monitors").select("is_in_maintenance").where("id", "=", m).executeTakeFirstOrThrow();
    expect(row.is_in_maintenance).toBe(0);

    expect((await s.api("PATCH", `${BASE}/${now.id}`, { is_enabled: false })).json.data.attributes.is_active).toBe(false);
    expect((await monitor()).is_in_maintenance).toBe(false);
    expect((await s.api("PATCH", `${BASE}/${now.id}`, { is_enabled: true })).json.data.attributes.is_active).toBe(true);
    expect((await monitor()).is_in_maintenance).toBe(true);
    expect((await s.api("DELETE", `${BASE}/${now.id}`)).status).toBe(200);
    expect((await monitor()).is_in_maintenance).toBe(false);
  });

  test("deleting a monitor takes it off its windows", async () => {
    const m = await createMonitor(s, httpAttrs({ name: "doomed" }));
    const w = await create(oneOff({ monitor_ids: [m, m1] }));
    expect((await s.api("DELETE", `/api/v1/monitors/${m}`)).status).toBe(200);
    expect((await s.api("GET", `${BASE}/${w.id}`)).json.data.attributes.monitor_ids).toEqual([m1]);
  });
});

describe("422 with details", () => {
  const cases: [string, Record<string, unknown> | (() => Record<string, unknown>), Record<string, string[]>][] = [
    ["name missing", () => ({ ...oneOff(), name: undefined }), { name: ["is required"] }],
    ["name blank", () => oneOff({ name: "   " }), { name: ["must not be blank"] }],
    ["name too long", () => oneOff({ name: "x".repeat(201) }), { name: ["must be a string of 1 to 200 characters"] }],
    ["description too long", () => oneOff({ description: "x".repeat(2001) }), { description: ["must be a string of at most 2000 characters, or null"] }],
    ["monitor_ids missing", () => ({ ...oneOff(), monitor_ids: undefined }), { monitor_ids: ["is required"] }],
    ["monitor_ids empty", () => oneOff({ monitor_ids: [] }), { monitor_ids: ["must not be empty: a window puts at least one monitor in maintenance"] }],
    ["monitor_ids not integers", () => oneOff({ monitor_ids: ["1"] }), { monitor_ids: ["must be a list of 1 to 1000 distinct monitor ids (positive integers)"] }],
    ["monitor_ids repeated", () => oneOff({ monitor_ids: [m1, m1] }), { monitor_ids: ["must be a list of 1 to 1000 distinct monitor ids (positive integers)"] }],
    ["monitor_ids unknown", () => oneOff({ monitor_ids: [m1, 999999] }), { monitor_ids: ["monitor 999999 does not exist in this account"] }],
    ["is_enabled not a boolean", () => oneOff({ is_enabled: "yes" }), { is_enabled: ["must be true or false"] }],
    ["timezone unknown", () => oneOff({ timezone: "Mars/Olympus" }), { timezone: ["'Mars/Olympus' is not an IANA time zone name (for example Europe/Berlin or UTC)"] }],
    ["starts_at not a date-time", () => oneOff({ starts_at: "tomorrow" }), { starts_at: ["must be an ISO 8601 date-time: with Z or an offset, or without one for a time in the window's timezone, or null"] }],
    ["starts_at a date only", () => oneOff({ starts_at: "2030-01-01" }), { starts_at: ["must be an ISO 8601 date-time: with Z or an offset, or without one for a time in the window's timezone, or null"] }],
    ["ends_at impossible", () => oneOff({ ends_at: "2030-02-30T10:00:00Z" }), { ends_at: ["must be an ISO 8601 date-time: with Z or an offset, or without one for a time in the window's timezone, or null"] }],
    ["ends_at before starts_at", () => oneOff({ starts_at: "2030-01-01T10:00:00Z", ends_at: "2030-01-01T09:00:00Z" }), { ends_at: ["must be after starts_at"] }],
    ["ends_at equal to starts_at", () => oneOff({ starts_at: "2030-01-01T10:00:00Z", ends_at: "2030-01-01T11:00:00+01:00" }), { ends_at: ["must be after starts_at"] }],
    ["starts_at without ends_at", () => ({ ...oneOff(), ends_at: undefined }), { ends_at: ["is required with starts_at"] }],
    ["ends_at without starts_at", () => ({ ...oneOff(), starts_at: undefined }), { starts_at: ["is required with ends_at"] }],
    [
      "neither kind",
      () => ({ name: "x", monitor_ids: [m1] }),
      {
        starts_at: ["is required with ends_at for a one-off window; a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec)"],
        schedule: ["is required with duration_sec for a recurring window; a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec)"],
      },
    ],
    [
      "both kinds",
      () => oneOff({ schedule: "0 3 * * *", duration_sec: 600 }),
      Object.fromEntries(["starts_at", "ends_at", "schedule", "duration_sec"].map((k) => [k, ["a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec), not both"]])),
    ],
    ["schedule of 6 fields", () => ({ name: "x", monitor_ids: [m1], schedule: "*/5 * * * * *", duration_sec: 600 }), { schedule: ['must be a cron expression of 5 fields (minute hour day-of-month month day-of-week), e.g. "0 3 * * 0"; this one has 6'] }],
    ["schedule unparsable", () => ({ name: "x", monitor_ids: [m1], schedule: "0 25 * * *", duration_sec: 600 }), { schedule: [expect.stringMatching(/^is not a valid cron expression \(.+\); e\.g\. "0 3 \* \* 0"$/) as unknown as string] }],
    ["schedule that never fires", () => ({ name: "x", monitor_ids: [m1], schedule: "0 0 30 2 *", duration_sec: 600 }), { schedule: ["never fires again"] }],
    ["schedule without duration_sec", () => ({ name: "x", monitor_ids: [m1], schedule: "0 3 * * *" }), { duration_sec: ["is required with schedule"] }],
    ["duration_sec without schedule", () => ({ name: "x", monitor_ids: [m1], duration_sec: 600 }), { schedule: ["is required with duration_sec"] }],
    ["duration_sec under a minute", () => ({ name: "x", monitor_ids: [m1], schedule: "0 3 * * *", duration_sec: 59 }), { duration_sec: ["must be an integer from 60 to 2592000 (30 days), or null"] }],
    ["duration_sec over 30 days", () => ({ name: "x", monitor_ids: [m1], schedule: "0 3 * * *", duration_sec: 2592001 }), { duration_sec: ["must be an integer from 60 to 2592000 (30 days), or null"] }],
    ["duration_sec not an integer", () => ({ name: "x", monitor_ids: [m1], schedule: "0 3 * * *", duration_sec: 600.5 }), { duration_sec: ["must be an integer from 60 to 2592000 (30 days), or null"] }],
    ["unknown attribute", () => oneOff({ colour: "red" }), { colour: ["is not a maintenance window attribute; see the maintenance_window fields in /api/v1/openapi.json"] }],
    ["NUL in text", () => oneOff({ name: "a\u0000b" }), { name: ["must not contain the NUL character (U+0000)"] }],
    ["JSON:API body of another type", () => ({ data: { type: "monitor", attributes: oneOff() } }), { "data.type": ['must be "maintenance_window"'] }],
  ];

  test.each(cases)("POST: %s", async (_name, body, details) => {
    const b = typeof body === "function" ? body() : body;
    const r = await s.api("POST", BASE, b);
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("validation_error");
    expect(r.json.error.details).toEqual(details);
  });

  test("PATCH: a second kind beside the stored one, a nulled half, a move past the start, a foreign monitor", async () => {
    const w = await create(oneOff());
    const patch = async (body: Record<string, unknown>) => {
      const r = await s.api("PATCH", `${BASE}/${w.id}`, body);
      expect(r.status).toBe(422);
      return r.json.error.details;
    };
    expect(await patch({ schedule: "0 3 * * *", duration_sec: 600 })).toEqual({
      schedule: ["a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec), not both; set starts_at and ends_at to null to make it recurring"],
      duration_sec: ["a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec), not both; set starts_at and ends_at to null to make it recurring"],
    });
    expect(await patch({ ends_at: null })).toEqual({ ends_at: ["is required with starts_at"] });
    expect(await patch({ starts_at: null, ends_at: null })).toEqual({
      starts_at: ["is required with ends_at for a one-off window; a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec)"],
      schedule: ["is required with duration_sec for a recurring window; a window is either one-off (starts_at and ends_at) or recurring (schedule and duration_sec)"],
    });
    expect(await patch({ ends_at: w.attributes.starts_at })).toEqual({ ends_at: ["must be after starts_at"] });
    expect(await patch({ monitor_ids: [] })).toEqual({ monitor_ids: ["must not be empty: a window puts at least one monitor in maintenance"] });
    expect(await patch({ name: null })).toEqual({ name: ["must be a string of 1 to 200 characters"] });
    const other = await makeAccount(s.ctx, "maint-other", "enterprise");
    const foreign = await createMonitor(s, httpAttrs({ name: "theirs" }), other.token);
    expect(await patch({ monitor_ids: [m1, foreign] })).toEqual({ monitor_ids: [`monitor ${foreign} does not exist in this account`] });
    // nothing changed
    expect((await s.api("GET", `${BASE}/${w.id}`)).json.data).toEqual(w);
  });
});

describe("tenancy and scopes", () => {
  test("another account reads and changes nothing of this one's windows; its own monitor ids only", async () => {
    const w = await create(oneOff({ name: "mine" }));
    const b = await makeAccount(s.ctx, "maint-b", "enterprise");
    for (const [method, body] of [["GET", undefined], ["PATCH", { name: "hijack" }], ["DELETE", undefined]] as const) {
      const r = await s.api(method, `${BASE}/${w.id}`, body, { token: b.token });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe("not_found");
    }
    const listed = await s.api("GET", `${BASE}?per_page=100`, undefined, { token: b.token });
    expect(listed.json.pagination.total).toBe(0);
    const r = await s.api("POST", BASE, oneOff({ monitor_ids: [m1] }), { token: b.token });
    expect(r.json.error.details).toEqual({ monitor_ids: [`monitor ${m1} does not exist in this account`] });
    expect((await s.api("GET", `${BASE}/${w.id}`)).json.data).toEqual(w);
  });

  test("monitors:read reads, monitors:write writes", async () => {
    const reader = await makeAccount(s.ctx, "maint-reader", "enterprise", ["monitors:read"]);
    expect((await s.api("GET", BASE, undefined, { token: reader.token })).status).toBe(200);
    const r = await s.api("POST", BASE, oneOff(), { token: reader.token });
    expect(r.status).toBe(403);
    expect(r.json.error.code).toBe("insufficient_scope");
    expect(r.json.error.message).toContain("monitors:write");
    const other = await makeAccount(s.ctx, "maint-checks", "enterprise", ["checks:read"]);
    expect((await s.api("GET", BASE, undefined, { token: other.token })).json.error.code).toBe("insufficient_scope");
  });
});
