import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, expectListEnvelope, httpAttrs, ISO_MS } from "./fixtures.ts";

// Groups and tags (README "Groups, tags and status page updates"), against a real server.
let s: TestServer;
let other: { accountId: number; token: string };
let theirGroup: number;

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
  theirGroup = await createGroup({ name: "Theirs" }, other.token);
});
afterAll(() => s.stop());

async function createGroup(body: Record<string, unknown>, token?: string): Promise<number> {
  const res = await s.api("POST", "/api/v1/groups", body, token ? { token } : {});
  if (res.status !== 201) throw new Error(`POST /api/v1/groups answered ${res.status}: ${res.text}`);
  return Number(res.json.data.id);
}

const ids = (res: { json: { data: { id: string }[] } }) => res.json.data.map((d) => Number(d.id));

describe("groups", () => {
  test("CRUD: create with defaults, read, rename and reorder, list by sort_order then name, delete", async () => {
    const created = await s.api("POST", "/api/v1/groups", { name: "  Production  " });
    expect(created.status).toBe(201);
    expect(created.json.data.type).toBe("group");
    const a = created.json.data.attributes;
    expect(a).toMatchObject({ name: "Production", description: null, sort_order: 0, monitor_count: 0 });
    expect(a.created_at).toMatch(ISO_MS);
    const prod = Number(created.json.data.id);
    const staging = await createGroup({ data: { type: "group", attributes: { name: "Staging", description: "before release", sort_order: -5 } } });
    const backups = await createGroup({ name: "Backups" });

    expect((await s.api("GET", `/api/v1/groups/${staging}`)).json.data.attributes).toMatchObject({ name: "Staging", description: "before release", sort_order: -5 });
    let list = await s.api("GET", "/api/v1/groups");
    expectListEnvelope(list.json, { page: 1, per_page: 25, total: 3, total_pages: 1 });
    expect(ids(list)).toEqual([staging, backups, prod]); // -5, then 0 by name

    const renamed = await s.api("PATCH", `/api/v1/groups/${prod}`, { name: "Live", sort_order: -10, created_at: "ignored" });
    expect(renamed.status).toBe(200);
    expect(renamed.json.data.attributes).toMatchObject({ name: "Live", sort_order: -10, description: null });
    list = await s.api("GET", "/api/v1/groups?per_page=2&page=1");
    expect(ids(list)).toEqual([prod, staging]);
    expect(list.json.pagination).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2 });

    const del = await s.api("DELETE", `/api/v1/groups/${backups}`);
    expect(del.status).toBe(200);
    expect(del.json.data).toEqual({ id: String(backups), type: "group", attributes: { deleted: true } });
    expect((await s.api("GET", `/api/v1/groups/${backups}`)).status).toBe(404);
    expect((await s.api("DELETE", `/api/v1/groups/${backups}`)).status).toBe(404);
  });

  test("a name already used in the account is 422 'has already been taken', on create and rename; another account may use it", async () => {
    const first = await createGroup({ name: "Databases" });
    const again = await s.api("POST", "/api/v1/groups", { name: "Databases" });
    expect(again.status).toBe(422);
    expect(again.json.error.details).toEqual({ name: ["has already been taken"] });
    const second = await createGroup({ name: "Caches" });
    const rename = await s.api("PATCH", `/api/v1/groups/${second}`, { name: " Databases" });
    expect(rename.json.error.details).toEqual({ name: ["has already been taken"] });
    // renaming a group to its own name is no clash
    expect((await s.api("PATCH", `/api/v1/groups/${first}`, { name: "Databases", sort_order: 1 })).status).toBe(200);
    expect((await s.api("POST", "/api/v1/groups", { name: "Databases" }, { token: other.token })).status).toBe(201);
  });

  test("deleting a group ungroups its monitors; they stay, with group_id null", async () => {
    const g = await createGroup({ name: "Doomed" });
    const keep = await createGroup({ name: "Kept" });
    const m1 = await createMonitor(s, httpAttrs({ name: "in doomed 1", group_id: g }));
    const m2 = await createMonitor(s, httpAttrs({ name: "in doomed 2", group_id: g }));
    const m3 = await createMonitor(s, httpAttrs({ name: "in kept", group_id: keep }));
    expect((await s.api("GET", `/api/v1/groups/${g}`)).json.data.attributes.monitor_count).toBe(2);
    const before = (await s.api("GET", `/api/v1/monitors/${m1}`)).json.data.attributes.updated_at;
    await Bun.sleep(5); // updated_at has millisecond precision
    expect((await s.api("DELETE", `/api/v1/groups/${g}`)).status).toBe(200);
    for (const m of [m1, m2]) {
      const got = await s.api("GET", `/api/v1/monitors/${m}`);
      expect(got.status).toBe(200);
      expect(got.json.data.attributes.group_id).toBeNull();
    }
    expect((await s.api("GET", `/api/v1/monitors/${m1}`)).json.data.attributes.updated_at > before).toBe(true);
    expect((await s.api("GET", `/api/v1/monitors/${m3}`)).json.data.attributes.group_id).toBe(keep);
    // and a monitor can no longer be put into it
    const res = await s.api("PATCH", `/api/v1/monitors/${m1}`, { group_id: g });
    expect(res.status).toBe(422);
    expect(res.json.error.details).toEqual({ group_id: [`group ${g} does not exist in this account`] });
  });

  test("another account's group can be neither seen, changed, deleted nor used", async () => {
    for (const [method, body] of [["GET", undefined], ["PATCH", { name: "mine now" }], ["DELETE", undefined]] as const) {
      const res = await s.api(method, `/api/v1/groups/${theirGroup}`, body);
      expect(res.status).toBe(404);
      expect(res.json.error.code).toBe("not_found");
    }
    expect(ids(await s.api("GET", "/api/v1/groups?per_page=100"))).not.toContain(theirGroup);
    const create = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "sneaky", group_id: theirGroup }));
    expect(create.status).toBe(422);
    expect(create.json.error.details).toEqual({ group_id: [`group ${theirGroup} does not exist in this account`] });
    const mine = await createMonitor(s, httpAttrs({ name: "mine" }));
    expect((await s.api("PATCH", `/api/v1/monitors/${mine}`, { group_id: theirGroup })).status).toBe(422);
    expect((await s.api("GET", `/api/v1/monitors?group_id=${theirGroup}`)).json.data).toEqual([]);
    expect((await s.api("GET", `/api/v1/groups/${theirGroup}`, undefined, { token: other.token })).json.data.attributes.monitor_count).toBe(0);
  });

  describe("validation", () => {
    scenarios(() => s, [
      ...([
        ["name missing", {}, { name: "is required" }],
        ["name blank", { name: "   " }, { name: "must not be blank" }],
        ["name too long", { name: "x".repeat(201) }, { name: "1 to 200 characters" }],
        ["description not a string", { name: "a", description: 5 }, { description: "at most 2000 characters" }],
        ["sort_order not an integer", { name: "a", sort_order: 1.5 }, { sort_order: "must be an integer" }],
        ["sort_order out of range", { name: "a", sort_order: 2_000_000_000 }, { sort_order: "must be an integer" }],
        ["unknown attribute", { name: "a", colour: "red" }, { colour: "is not a group attribute" }],
        ["a NUL in the name", { name: "a\u0000" }, { name: "NUL character" }],
      ] as const).map(([name, body, details]): Scenario => ({ name, method: "POST", path: "/api/v1/groups", body, status: 422, code: "validation_error", details })),
      { name: "a foreign group_id on a monitor", method: "POST", path: "/api/v1/monitors", body: () => httpAttrs({ group_id: theirGroup }), status: 422, details: { group_id: "does not exist in this account" } },
      { name: "an unknown group_id on a monitor", method: "POST", path: "/api/v1/monitors", body: httpAttrs({ group_id: 987654321 }), status: 422, details: { group_id: "group 987654321 does not exist in this account" } },
      { name: "group_id not an integer", method: "POST", path: "/api/v1/monitors", body: httpAttrs({ group_id: "1" }), status: 422, details: { group_id: "positive integer" } },
      { name: "the groups list takes paging only", method: "GET", path: "/api/v1/groups?per_page=0", status: 422, details: { per_page: "integer of at least 1" } },
    ]);
  });
});

describe("tags", () => {
  test("stored trimmed and sorted, replaced on PATCH, kept when not sent, emptied with []", async () => {
    const res = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "tagged", tags: [" team/web ", "env:prod", "Ünïcode ok", "v1.2_x-y"] }));
    expect(res.status).toBe(201);
    expect(res.json.data.attributes.tags).toEqual(["env:prod", "team/web", "v1.2_x-y", "Ünïcode ok"].sort());
    const id = res.json.data.id;
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "renamed" })).json.data.attributes.tags).toHaveLength(4);
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { tags: ["b", "a"] })).json.data.attributes.tags).toEqual(["a", "b"]);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.tags).toEqual(["a", "b"]);
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { tags: [] })).json.data.attributes.tags).toEqual([]);
    // every monitor has the attribute
    expect((await s.api("GET", `/api/v1/monitors/${await createMonitor(s, httpAttrs({ name: "untagged" }))}`)).json.data.attributes.tags).toEqual([]);
  });

  describe("validation", () => {
    const tooMany = Array.from({ length: 21 }, (_, i) => `t${i}`);
    scenarios(() => s, [
      ...([
        ["a tag with a character outside the rule", ["ok", "no<script>"], 'has "no<script>", which is not a tag'],
        ["an empty tag", [""], "which is not a tag"],
        ["a tag of only spaces", ["   "], "which is not a tag"],
        ["a tag of 51 characters", ["x".repeat(51)], "which is not a tag"],
        ["the same tag twice (after trimming)", ["a", " a"], 'has "a" twice'],
        ["21 tags", tooMany, "at most 20 tags"],
        ["not a list", "prod", "must be a list of tags"],
        ["null", null, "must be a list of up to 20 distinct tags"],
        ["a number in the list", ["a", 1], "must be a list of tags"],
      ] as const).map(([name, tags, fragment]): Scenario => ({ name, method: "POST", path: "/api/v1/monitors", body: httpAttrs({ tags }), status: 422, code: "validation_error", details: { tags: fragment } })),
    ]);

    test("20 tags of 50 characters are fine", async () => {
      const tags = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, "0")}${"x".repeat(48)}`);
      const res = await s.api("POST", "/api/v1/monitors", httpAttrs({ tags }));
      expect(res.status).toBe(201);
      expect(res.json.data.attributes.tags).toEqual(tags);
    });
  });
});

describe("list filters: ?tag= (every one given) and ?group_id=", () => {
  let acct: { accountId: number; token: string };
  const m: Record<string, number> = {};
  let web = 0;
  let db = 0;
  const get = (q: string) => s.api("GET", `/api/v1/monitors${q}`, undefined, { token: acct.token });

  beforeAll(async () => {
    acct = await makeAccount(s.ctx, "filters", "enterprise");
    web = await createGroup({ name: "Web" }, acct.token);
    db = await createGroup({ name: "Data" }, acct.token);
    const seeds: [string, number | null, string[]][] = [
      ["shop", web, ["env:prod", "team/web", "critical"]],
      ["shop-staging", web, ["env:staging", "team/web"]],
      ["postgres", db, ["env:prod", "critical"]],
      ["replica", db, ["env:prod"]],
      ["sandbox", null, []],
    ];
    for (const [name, group_id, tags] of seeds) m[name] = await createMonitor(s, httpAttrs({ name, group_id, tags }), acct.token);
    // another account's monitor with the same tags never shows
    await createMonitor(s, httpAttrs({ name: "elsewhere", tags: ["env:prod", "critical"] }));
  });

  const names = (res: { json: { data: { attributes: { name: string } }[] } }) => res.json.data.map((d) => d.attributes.name);

  test("one tag, several tags (all must be present), a tag nobody has", async () => {
    expect(names(await get("?tag=env:prod"))).toEqual(["shop", "postgres", "replica"]);
    expect(names(await get("?tag=env:prod&tag=critical"))).toEqual(["shop", "postgres"]);
    expect(names(await get("?tag=env:prod&tag=critical&tag=team/web"))).toEqual(["shop"]);
    expect(names(await get("?tag=critical&tag=env:staging"))).toEqual([]);
    expect(names(await get("?tag=nobody"))).toEqual([]);
    // a tag given twice counts once
    expect(names(await get("?tag=critical&tag=critical"))).toEqual(["shop", "postgres"]);
    const res = await get("?tag=env:prod&per_page=2");
    expect(res.json.pagination).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2 });
  });

  test("group_id, alone and with tags and the other filters", async () => {
    expect(names(await get(`?group_id=${web}`))).toEqual(["shop", "shop-staging"]);
    expect(names(await get(`?group_id=${db}&tag=critical`))).toEqual(["postgres"]);
    expect(names(await get(`?group_id=${web}&tag=env:prod&q=shop`))).toEqual(["shop"]);
    expect(names(await get(`?group_id=${web}&type=tcp`))).toEqual([]);
    expect(names(await get("?group_id=987654321"))).toEqual([]);
  });

  scenarios(() => s, [
    { name: "a malformed tag filter is a 422", method: "GET", path: "/api/v1/monitors?tag=a<b", status: 422, details: { tag: "must be a tag" } },
    { name: "more than 20 tags is a 422", method: "GET", path: `/api/v1/monitors?${Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join("&")}`, status: 422, details: { tag: "at most 20 times" } },
    { name: "a group_id that is not a positive integer is a 422", method: "GET", path: "/api/v1/monitors?group_id=web", status: 422, details: { group_id: "integer of at least 1" } },
  ]);
});
