/**
 * The alerting attributes of monitors through the API (docs/monitors.md "Dependencies, reminders
 * and escalation"): depends_on_ids and escalation_channel_ids name this account's records only,
 * dependencies never form a cycle (of one, two or three monitors), PATCH replaces the lists, deleting
 * a parent or a channel removes its links, and the reminder and escalation delays keep to their range.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeAccount, startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, httpAttrs } from "./fixtures.ts";

let s: TestServer;
let other: { accountId: number; token: string };

beforeAll(async () => {
  s = await startTestServer();
  other = await makeAccount(s.ctx, "other", "pro");
});
afterAll(() => s.stop());

const get = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;
const patch = (id: number, body: Record<string, unknown>) => s.api("PATCH", `/api/v1/monitors/${id}`, body);
async function channel(name: string, token?: string): Promise<number> {
  const res = await s.api("POST", "/api/v1/notification-channels", { name, channel_type: "webhook", url: "http://127.0.0.1:9/hook" }, token ? { token } : {});
  expect(res.status).toBe(201);
  return Number(res.json.data.id);
}

describe("depends_on_ids", () => {
  test("set on create, returned on GET and in lists, replaced by PATCH", async () => {
    const a = await createMonitor(s, httpAttrs({ name: "switch" }));
    const b = await createMonitor(s, httpAttrs({ name: "router" }));
    const c = await createMonitor(s, httpAttrs({ name: "web", depends_on_ids: [b, a] }));
    expect((await get(c)).depends_on_ids).toEqual([a, b]);
    const listed = (await s.api("GET", "/api/v1/monitors?per_page=100")).json.data.find((m: { id: string }) => m.id === String(c));
    expect(listed.attributes.depends_on_ids).toEqual([a, b]);
    const replaced = await patch(c, { depends_on_ids: [b] });
    expect(replaced.status).toBe(200);
    expect(replaced.json.data.attributes.depends_on_ids).toEqual([b]);
    // a PATCH without the attribute leaves it alone
    expect((await patch(c, { name: "web 2" })).json.data.attributes.depends_on_ids).toEqual([b]);
    expect((await patch(c, { depends_on_ids: [] })).json.data.attributes.depends_on_ids).toEqual([]);
  });

  test("another account's monitor, or one that does not exist, is a 422 naming the field", async () => {
    const foreign = await createMonitor(s, httpAttrs({ name: "theirs" }), other.token);
    const mine = await createMonitor(s, httpAttrs({ name: "mine" }));
    for (const ids of [[foreign], [mine, 999_999]]) {
      const res = await s.api("POST", "/api/v1/monitors", httpAttrs({ depends_on_ids: ids }));
      expect(res.status).toBe(422);
      expect(res.json.error.details.depends_on_ids).toEqual([`monitor ${ids.at(-1)} does not exist in this account`]);
    }
    const res = await patch(mine, { depends_on_ids: [foreign] });
    expect(res.status).toBe(422);
    expect(res.json.error.details.depends_on_ids).toEqual([`monitor ${foreign} does not exist in this account`]);
    // and the other account cannot see that its id was refused for any other reason
    expect((await s.api("PATCH", `/api/v1/monitors/${foreign}`, { depends_on_ids: [mine] }, { token: other.token })).json.error.details.depends_on_ids).toEqual([
      `monitor ${mine} does not exist in this account`,
    ]);
  });

  test("a cycle of one, two or three monitors is a 422 naming the field, and nothing is written", async () => {
    const a = await createMonitor(s, httpAttrs({ name: "a" }));
    const b = await createMonitor(s, httpAttrs({ name: "b", depends_on_ids: [a] }));
    const c = await createMonitor(s, httpAttrs({ name: "c", depends_on_ids: [b] }));

    const self = await patch(a, { depends_on_ids: [a] });
    expect(self.status).toBe(422);
    expect(self.json.error.details).toEqual({ depends_on_ids: ["cannot include the monitor itself"] });

    const two = await patch(a, { depends_on_ids: [b], name: "renamed" });
    expect(two.status).toBe(422);
    expect(two.json.error.details).toEqual({ depends_on_ids: [`would make a dependency cycle: ${a} → ${b} → ${a} (each monitor depends on the next)`] });

    const three = await patch(a, { depends_on_ids: [c] });
    expect(three.status).toBe(422);
    expect(three.json.error.details).toEqual({ depends_on_ids: [`would make a dependency cycle: ${a} → ${c} → ${b} → ${a} (each monitor depends on the next)`] });

    const after = await get(a);
    expect(after.depends_on_ids).toEqual([]);
    expect(after.name).toBe("a");
    // the same parents without the cycle are fine: c may depend on a directly too
    expect((await patch(c, { depends_on_ids: [a, b] })).status).toBe(200);
  });

  test("deleting a parent removes the links to it", async () => {
    const parent = await createMonitor(s, httpAttrs({ name: "parent" }));
    const keep = await createMonitor(s, httpAttrs({ name: "kept parent" }));
    const child = await createMonitor(s, httpAttrs({ name: "child", depends_on_ids: [parent, keep] }));
    expect((await s.api("DELETE", `/api/v1/monitors/${parent}`)).status).toBe(200);
    expect((await get(child)).depends_on_ids).toEqual([keep]);
  });
});

describe("reminders and escalation", () => {
  test("alert_repeat_minutes is null or 5 to 1440", async () => {
    const id = await createMonitor(s, httpAttrs({ alert_repeat_minutes: 5 }));
    expect((await get(id)).alert_repeat_minutes).toBe(5);
    for (const bad of [4, 1441, 2.5, "10"]) {
      const res = await patch(id, { alert_repeat_minutes: bad });
      expect(res.status).toBe(422);
      expect(res.json.error.details.alert_repeat_minutes).toEqual(["must be an integer from 5 to 1440, or null for no reminders"]);
    }
    expect((await patch(id, { alert_repeat_minutes: 1440 })).json.data.attributes.alert_repeat_minutes).toBe(1440);
    expect((await patch(id, { alert_repeat_minutes: null })).json.data.attributes.alert_repeat_minutes).toBe(null);
  });

  test("escalation_channel_ids takes this account's channels and needs escalate_after_minutes (1 to 1440)", async () => {
    const pager = await channel("pager");
    const theirs = await channel("their pager", other.token);
    const id = await createMonitor(s, httpAttrs({ escalation_channel_ids: [pager], escalate_after_minutes: 15 }));
    expect(await get(id)).toMatchObject({ escalation_channel_ids: [pager], escalate_after_minutes: 15 });

    const foreign = await patch(id, { escalation_channel_ids: [pager, theirs] });
    expect(foreign.status).toBe(422);
    expect(foreign.json.error.details).toEqual({ escalation_channel_ids: [`channel ${theirs} does not exist in this account`] });

    const noDelay = await s.api("POST", "/api/v1/monitors", httpAttrs({ escalation_channel_ids: [pager] }));
    expect(noDelay.status).toBe(422);
    expect(noDelay.json.error.details.escalate_after_minutes[0]).toStartWith("is required when escalation_channel_ids names channels");
    const cleared = await patch(id, { escalate_after_minutes: null });
    expect(cleared.status).toBe(422);
    expect(Object.keys(cleared.json.error.details)).toEqual(["escalate_after_minutes"]);

    for (const bad of [0, 1441]) expect((await patch(id, { escalate_after_minutes: bad })).json.error.details.escalate_after_minutes).toEqual(["must be an integer from 1 to 1440, or null for no escalation"]);
    expect((await patch(id, { escalation_channel_ids: [], escalate_after_minutes: null })).json.data.attributes).toMatchObject({ escalation_channel_ids: [], escalate_after_minutes: null });

    // deleting the channel removes the link
    await patch(id, { escalation_channel_ids: [pager], escalate_after_minutes: 1 });
    expect((await s.api("DELETE", `/api/v1/notification-channels/${pager}`)).status).toBe(200);
    expect((await get(id)).escalation_channel_ids).toEqual([]);
  });
});

test("incidents carry parent_incident_id, null without a parent; OpenAPI documents the new attributes", async () => {
  const spec = (await s.api("GET", "/api/v1/openapi.json")).json;
  const text = JSON.stringify(spec);
  for (const name of ["depends_on_ids", "alert_repeat_minutes", "escalation_channel_ids", "escalate_after_minutes", "parent_incident_id"]) expect(text).toContain(`"${name}"`);
});
