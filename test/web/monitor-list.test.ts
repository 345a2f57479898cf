/**
 * The dashboard's monitor list (README "Dashboard"), through the real server and its HTML: search,
 * filters by state and type, sort, paging, each row's uptime over 24 h and bar of recent checks, and
 * the bulk actions with their checkboxes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bucketStart, DAY_MS } from "../../src/domain/uptime.ts";
import { packMonitorChecks } from "../../src/store/check-blocks.ts";
import { getWatermark, HOURLY_WATERMARK, rollupMonitorRange } from "../../src/store/rollups.ts";
import { createMonitor, httpAttrs } from "../api/fixtures.ts";
import { makeAccount, startTestServer, startupMaintenanceDone, type TestServer } from "../helpers/server.ts";
import { addUser, listedMonitorNames, signedInClient, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
beforeAll(async () => {
  // the paging test creates a few hundred monitors through the API
  s = await startTestServer(["--rate-limit", "pro=10000,enterprise=10000"]);
  // checks seeded below while the start-up maintenance runs would be rolled up and packed under the tests
  expect(await startupMaintenanceDone(s)).toBe(true);
  await addUser(s, "admin");
  c = await signedInClient(s, "admin");
});
afterAll(() => s.stop());

const rowOf = (page: string, id: number) => new RegExp(`<tr data-monitor="${id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? "";
/** A state as if checks had run: the monitors are created paused, so no real check overwrites it. */
const setStatus = (id: number, last_status: string, last_checked_at: number | null = null) => s.ctx.db.updateTable("monitors").set({ last_status, last_checked_at, is_paused: 0 }).where("id", "=", id).execute();
/**
 * Checks inserted into past hours after the server rolled those hours up: roll them up again, as
 * the server would have had it written them, so the uptime (rollups for whole hours) counts them.
 */
async function rolledUp(ids: number[]): Promise<void> {
  const until = (await getWatermark(s.ctx.db, HOURLY_WATERMARK)) ?? 0;
  const from = bucketStart(Date.now() - 2 * DAY_MS, "h");
  for (const id of ids) if (until > from) await rollupMonitorRange(s.ctx.db, id, "h", from, until);
}
const attrs = async (id: number) => (await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;

describe("search, filters and sort", () => {
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    ids.shop = await createMonitor(s, httpAttrs({ name: "Shop front", target: "https://shop.example.test/health" }));
    ids.db = await createMonitor(s, { name: "Orders DB", monitor_type: "tcp", target: "db.internal.test:5432", interval_sec: 60, timeout_ms: 5000, is_paused: true });
    ids.api = await createMonitor(s, httpAttrs({ name: "api", target: "https://api.example.test/" }));
    ids.old = await createMonitor(s, httpAttrs({ name: "Legacy", target: "https://legacy.example.test/", is_paused: true }));
    const now = Date.now();
    await setStatus(ids.shop!, "up", now - 60_000);
    await setStatus(ids.db!, "down", now - 1_000);
    await setStatus(ids.api!, "degraded", now - 30_000);
  });
  const only = (page: string) => listedMonitorNames(page).filter((n) => ["Shop front", "Orders DB", "api", "Legacy"].includes(n));

  test("search finds by name or target, case-insensitively; the live refresh keeps the search", async () => {
    const byName = await c.get("/?q=SHOP");
    expect(byName.res.status).toBe(200);
    expect(only(byName.text)).toEqual(["Shop front"]);
    expect(only((await c.get("/?q=internal.test")).text)).toEqual(["Orders DB"]);
    expect(byName.text).toContain('data-live="/monitors/rows?q=SHOP"');
    expect(byName.text).toContain('<input type="search" id="flt-q" name="q" value="SHOP"');
    expect(only((await c.get("/monitors/rows?q=SHOP")).text)).toEqual(["Shop front"]);
    expect((await c.get("/?q=nothing-like-it")).text).toContain("No monitor matches these filters.");
  });

  test("state and type filters, alone and together, server-side", async () => {
    expect(only((await c.get("/?state=down")).text)).toEqual(["Orders DB"]);
    expect(only((await c.get("/?state=paused")).text)).toEqual(["Legacy"]);
    // a paused monitor is shown as paused, so "unknown" leaves it out though its stored status is unknown
    expect(only((await c.get("/?state=unknown")).text)).toEqual([]);
    expect(only((await c.get("/?type=tcp")).text)).toEqual(["Orders DB"]);
    expect(only((await c.get("/?type=http&state=degraded")).text)).toEqual(["api"]);
    const page = await c.get("/?type=http&state=up");
    expect(page.text).toContain('data-live="/monitors/rows?state=up&amp;type=http"');
    expect(page.text).toContain('<option value="up" selected>');
    expect(only(page.text)).toEqual(["Shop front"]);
    // values that mean nothing are ignored, not an error
    expect(only((await c.get("/?state=sleepy&type=gopher")).text).sort()).toEqual(["Legacy", "Orders DB", "Shop front", "api"]);
  });

  test("sort by name, state, last check; a chosen order is kept in the live refresh", async () => {
    expect(only((await c.get("/?sort=name")).text)).toEqual(["api", "Legacy", "Orders DB", "Shop front"]);
    expect(only((await c.get("/?sort=state")).text)).toEqual(["Orders DB", "api", "Shop front", "Legacy"]);
    expect(only((await c.get("/?sort=last_check")).text)).toEqual(["Orders DB", "api", "Shop front", "Legacy"]);
    expect((await c.get("/?sort=name&type=http")).text).toContain('data-live="/monitors/rows?type=http&amp;sort=name"');
    expect(only((await c.get("/monitors/rows?sort=name")).text)).toEqual(["api", "Legacy", "Orders DB", "Shop front"]);
  });
});

describe("uptime over 24 h and the bar of recent checks", () => {
  test("each row shows its uptime and its last 20 results as cells with a sentence for screen readers", async () => {
    const id = await createMonitor(s, httpAttrs({ name: "figures" }));
    const quiet = await createMonitor(s, httpAttrs({ name: "no checks" }));
    const now = Date.now();
    // 25 checks a minute apart, the newest first: 22 up, then 3 down (the three newest)
    const statuses = Array.from({ length: 25 }, (_, i) => (i < 3 ? "down" : "up"));
    await s.ctx.db.insertInto("checks").values(statuses.map((status, i) => ({ monitor_id: id, region: "local", status, checked_at: now - (i + 1) * 60_000, latency_ms: 10, http_code: status === "up" ? 200 : 500 }))).execute();
    // one more a day and a half ago: outside the 24 h, still in no bar (older than the 20)
    await s.ctx.db.insertInto("checks").values({ monitor_id: id, region: "local", status: "down", checked_at: now - 36 * 3_600_000, latency_ms: 10, http_code: 500 }).execute();
    await rolledUp([id]);
    const page = (await c.get("/?q=figures")).text;
    const row = rowOf(page, id);
    expect(row).toContain('<td class="num" data-label="Uptime 24 h">88.00%</td>'); // 22 of 25
    expect(row.match(/<i class="rc rc-/g)?.length).toBe(20);
    expect(row.match(/<i class="rc rc-down"/g)?.length).toBe(3);
    expect(row).toContain('<span class="sr-only">Last 20 checks: 17 up, 3 down; latest down.</span>');
    // oldest first: the down cells are the last three
    expect(/rc-up"[^>]*><\/i><i class="rc rc-down"[^>]*><\/i><i class="rc rc-down"[^>]*><\/i><i class="rc rc-down"[^>]*><\/i><\/span>/.test(row)).toBe(true);
    const none = rowOf((await c.get("/?q=no+checks")).text, quiet);
    expect(none).toContain('data-label="Uptime 24 h">no data</td>');
    expect(none).toContain("no checks yet");
  });

  test("a monitor checked every few minutes gets the rest of its 20 from its packed hours", async () => {
    const id = await createMonitor(s, httpAttrs({ name: "slow figures", interval_sec: 600 }));
    const now = Date.now();
    // 30 checks 10 minutes apart (5 hours), the oldest down; what is older than an hour is packed
    await s.ctx.db.insertInto("checks").values(Array.from({ length: 30 }, (_, i) => ({ monitor_id: id, region: "local", status: i === 19 ? "down" : "up", checked_at: now - (i + 1) * 600_000, latency_ms: 10, http_code: 200 }))).execute();
    const before = bucketStart(now - 3_600_000, "h");
    await s.ctx.db.transaction().execute((trx) => packMonitorChecks(trx, id, before));
    const left = (await s.ctx.db.selectFrom("checks").select("id").where("monitor_id", "=", id).execute()).length;
    expect(left).toBeLessThan(20);
    await rolledUp([id]);
    const row = rowOf((await c.get("/?q=slow+figures")).text, id);
    expect(row).toContain('data-label="Uptime 24 h">96.66%</td>'); // 29 of 30, rows and blocks
    expect(row.match(/<i class="rc rc-/g)?.length).toBe(20);
    // the 20th newest (i = 19) is the bar's oldest cell
    expect(row).toContain('<span class="sr-only">Last 20 checks: 1 down, 19 up; latest up.</span>');
    expect(row).toContain('aria-hidden="true" title="Last 20 checks: 1 down, 19 up; latest up."><i class="rc rc-down"></i>');
  });

  test("sort by uptime: the lowest first, monitors without checks last", async () => {
    const a = await createMonitor(s, httpAttrs({ name: "upsort-a" }));
    const b = await createMonitor(s, httpAttrs({ name: "upsort-b" }));
    const z = await createMonitor(s, httpAttrs({ name: "upsort-z" }));
    const now = Date.now();
    const checks = (monitor_id: number, ups: number, downs: number) =>
      Array.from({ length: ups + downs }, (_, i) => ({ monitor_id, region: "local", status: i < downs ? "down" : "up", checked_at: now - (i + 1) * 60_000, latency_ms: 5, http_code: 200 }));
    await s.ctx.db.insertInto("checks").values([...checks(a, 9, 1), ...checks(b, 5, 5)]).execute();
    await rolledUp([a, b]);
    expect(listedMonitorNames((await c.get("/?q=upsort&sort=uptime")).text)).toEqual(["upsort-b", "upsort-a", "upsort-z"]);
    void z;
  });
});

describe("paging", () => {
  test("100 monitors a page, page links, and the live refresh asks for the current page only", async () => {
    const acct = await makeAccount(s.ctx, "pager");
    await addUser(s, "pager-user", "pager");
    const pc = await signedInClient(s, "pager-user");
    const created: number[] = [];
    for (let i = 0; i < 205; i++) created.push(await createMonitor(s, httpAttrs({ name: `m${String(i).padStart(3, "0")}` }), acct.token));
    const first = (await pc.get("/")).text;
    expect(listedMonitorNames(first).length).toBe(100);
    expect(listedMonitorNames(first)[0]).toBe("m000");
    expect(first).toContain("205 monitors: 0 up, 0 degraded, 0 down, 205 other. Showing 1–100.");
    expect(first).toContain('<nav class="pager" aria-label="Pages of monitors">');
    expect(first).toContain('<a href="/?page=2">Next</a>');
    expect(first).toContain('<a href="/?page=3">3</a>');
    const third = (await pc.get("/?page=3&sort=name")).text;
    expect(listedMonitorNames(third)).toEqual(["m200", "m201", "m202", "m203", "m204"]);
    expect(third).toContain("Showing 201–205.");
    expect(third).toContain('data-live="/monitors/rows?sort=name&amp;page=3"');
    expect(third).toContain('<a href="/?sort=name&amp;page=2">Previous</a>');
    expect(listedMonitorNames((await pc.get("/monitors/rows?page=2")).text)).toEqual(created.slice(100, 200).map((_, i) => `m${String(100 + i).padStart(3, "0")}`));
    // past the last page: said, with a way back, not "no monitors yet"
    const past = (await pc.get("/?page=9&sort=name")).text;
    expect(listedMonitorNames(past)).toEqual([]);
    expect(past).toContain('This page is past the last one. <a href="/?sort=name">Go to the first page</a>.');
    // filters narrow before paging: the total is of what passes them
    expect((await pc.get("/?q=m20")).text).toContain("5 monitors: 0 up, 0 degraded, 0 down, 5 other.");
  });
});

describe("bulk actions", () => {
  const csrf = () => c.lastCsrf!;
  let one: number, two: number, three: number;
  beforeAll(async () => {
    one = await createMonitor(s, httpAttrs({ name: "bulk one", is_paused: false }));
    two = await createMonitor(s, httpAttrs({ name: "bulk two", is_paused: false }));
    three = await createMonitor(s, httpAttrs({ name: "bulk three", is_paused: false }));
    await c.get("/");
  });

  test("each row has a checkbox of the bulk form, and the form a select-all box", async () => {
    const page = (await c.get("/?q=bulk")).text;
    expect(page).toContain('<form method="post" action="/monitors/bulk" id="bulk"');
    expect(rowOf(page, one)).toContain(`<input type="checkbox" id="pick-${one}" name="id" value="${one}" form="bulk"><label class="sr-only" for="pick-${one}">Select bulk one</label>`);
    expect(page).toContain('<span class="check" data-select-all-box hidden><input type="checkbox" id="pick-all" data-select-all> <label for="pick-all">Select every monitor on this page</label></span>');
    expect(page).toContain('<input type="hidden" name="back" value="?q=bulk">');
  });

  test("pause and resume: 303 back to the filtered list with how many changed", async () => {
    const paused = await c.post("/monitors/bulk", { action: "pause", id: [String(one), String(two)], back: "?q=bulk&sort=name" });
    expect(paused.res.status).toBe(303);
    expect(paused.res.headers.get("location")).toBe("/?q=bulk&sort=name&done=pause&n=2");
    expect((await c.get("/?q=bulk&sort=name&done=pause&n=2")).text).toContain('<div class="alert ok" role="status">2 monitors paused.</div>');
    expect((await attrs(one)).is_paused).toBe(true);
    expect((await attrs(two)).is_paused).toBe(true);
    expect((await attrs(three)).is_paused).toBe(false);
    // already paused ones are not counted again
    const again = await c.post("/monitors/bulk", { action: "pause", id: [String(one), String(three)], back: "" });
    expect(again.res.headers.get("location")).toBe("/?done=pause&n=1");
    const resumed = await c.post("/monitors/bulk", { action: "resume", id: [String(one), String(two), String(three)], back: "" });
    expect(resumed.res.headers.get("location")).toBe("/?done=resume&n=3");
    for (const id of [one, two, three]) expect((await attrs(id)).is_paused).toBe(false);
  });

  test("add a tag, move to a group and back out, link a channel", async () => {
    const tagged = await c.post("/monitors/bulk", { action: "tag", tag: " edge ", id: [String(one), String(two)], back: "" });
    expect(tagged.res.headers.get("location")).toBe("/?done=tag&n=2");
    expect((await attrs(one)).tags).toEqual(["edge"]);
    expect((await attrs(three)).tags).toEqual([]);
    expect((await c.post("/monitors/bulk", { action: "tag", tag: "no,commas", id: String(one), back: "" })).res.headers.get("location")).toBe("/?problem=tag");

    const group = Number((await s.api("POST", "/api/v1/groups", { name: "Bulk group" })).json.data.id);
    await c.get("/");
    expect((await c.get("/")).text).toContain(`<option value="${group}">Bulk group</option>`);
    const moved = await c.post("/monitors/bulk", { action: "group", group_id: String(group), id: [String(two), String(three)], back: "" });
    expect(moved.res.headers.get("location")).toBe("/?done=group&n=2");
    expect((await attrs(two)).group_id).toBe(group);
    const out = await c.post("/monitors/bulk", { action: "group", group_id: "none", id: [String(two)], back: "" });
    expect(out.res.headers.get("location")).toBe("/?done=group&n=1");
    expect((await attrs(two)).group_id).toBeNull();

    const channel = Number((await s.api("POST", "/api/v1/notification-channels", { name: "bulk hook", channel_type: "webhook", url: "http://127.0.0.1:9/hook", secret: "s" })).json.data.id);
    await c.get("/");
    const linked = await c.post("/monitors/bulk", { action: "channel", channel_id: String(channel), id: [String(one), String(three)], back: "" });
    expect(linked.res.headers.get("location")).toBe("/?done=channel&n=2");
    expect((await attrs(one)).notification_channel_ids).toContain(channel);
    expect((await attrs(two)).notification_channel_ids).not.toContain(channel);
  });

  test("delete asks first, listing what goes, then deletes", async () => {
    const gone = await createMonitor(s, httpAttrs({ name: "to go <1>" }));
    const alsoGone = await createMonitor(s, httpAttrs({ name: "to go 2" }));
    await c.get("/");
    const confirm = await c.post("/monitors/bulk", { action: "delete", id: [String(gone), String(alsoGone)], back: "?q=to+go" });
    expect(confirm.res.status).toBe(200);
    expect(confirm.text).toContain("<h1>Delete 2 monitors?</h1>");
    expect(confirm.text).toContain("to go &lt;1&gt;");
    expect(confirm.text).toContain("to go 2");
    expect((await attrs(gone)).name).toBe("to go <1>"); // nothing deleted yet
    expect(confirm.text).toContain(`<input type="hidden" name="id" value="${gone}">`);
    const done = await c.post("/monitors/bulk/delete", { id: [String(gone), String(alsoGone)], back: "?q=to+go" });
    expect(done.res.status).toBe(303);
    expect(done.res.headers.get("location")).toBe("/?q=to+go&done=delete&n=2");
    expect((await s.api("GET", `/api/v1/monitors/${gone}`)).status).toBe(404);
    expect((await s.api("GET", `/api/v1/monitors/${alsoGone}`)).status).toBe(404);
  });

  test("another account's ids are refused and nothing changes; no selection, no CSRF token", async () => {
    const other = await makeAccount(s.ctx, "bulk-other");
    const theirs = await createMonitor(s, httpAttrs({ name: "theirs", is_paused: false }), other.token);
    await c.get("/");
    for (const action of ["pause", "tag", "delete"]) {
      const r = await c.post("/monitors/bulk", { action, tag: "x", id: [String(one), String(theirs)], back: "" });
      expect(r.res.status).toBe(404);
    }
    expect((await c.post("/monitors/bulk/delete", { id: [String(theirs)], back: "" })).res.status).toBe(404);
    const mine = await attrs(one);
    expect(mine.is_paused).toBe(false);
    expect(mine.tags).toEqual(["edge"]);
    const t = (await s.api("GET", `/api/v1/monitors/${theirs}`, undefined, { token: other.token })).json.data.attributes;
    expect(t.is_paused).toBe(false);
    expect(t.tags).toEqual([]);

    expect((await c.post("/monitors/bulk", { action: "pause", back: "" })).res.headers.get("location")).toBe("/?problem=none");
    expect((await c.get("/?problem=none")).text).toContain("Select one or more monitors first.");
    expect((await c.post("/monitors/bulk", { action: "pause", id: String(one), back: "" }, { csrf: null })).res.status).toBe(403);
    expect((await attrs(one)).is_paused).toBe(false);
  });
});
