/**
 * Issue 33 point 4: maintenance means one thing on every surface. Two tcp monitors fail against a
 * refused loopback port until they are down with an open incident; then an active maintenance window
 * holds one and the other's own switch is turned on. The dashboard's list (row, summary, state filter)
 * and monitor page, the status page (row, overall state, no "Ongoing incidents") and its JSON, the
 * status badges, /metrics and the Atom feed all say maintenance; a third monitor, down and in
 * no maintenance, stays down everywhere beside them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createMonitor, createStatusPage } from "../api/fixtures.ts";
import { parseSamples, samplesOf } from "../helpers/prometheus.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { closedPort } from "../helpers/targets.ts";
import { addUser, signedInClient, unescape, type WebClient } from "./helpers.ts";

let s: TestServer;
let c: WebClient;
const ids = { window: 0, switched: 0, down: 0 };
const SLUG = "held";

beforeAll(async () => {
  // one failed check is enough for down, so the monitors need not wait an interval for a second
  s = await startTestServer(["--confirmations", "1"]);
  await addUser(s, "alice");
  c = await signedInClient(s, "alice");
  const port = await closedPort();
  const tcp = (name: string) => createMonitor(s, { name, monitor_type: "tcp", target: `127.0.0.1:${port}`, interval_sec: 3600, timeout_ms: 2000, is_paused: false });
  ids.window = await tcp("held by a window");
  ids.switched = await tcp("switched to maintenance");
  ids.down = await tcp("plainly down");
  // each down, with its incident open, before any maintenance
  const opened = await waitFor(async () => (await s.api("GET", "/api/v1/incidents?status=open&per_page=100")).json.data.length === 3, { timeoutMs: 20_000 });
  expect(opened).toBe(true);
  await createStatusPage(s, { name: "Held", slug: SLUG, is_public: true, monitor_ids: [ids.window, ids.switched, ids.down] });
  const now = Date.now();
  const w = await s.api("POST", "/api/v1/maintenance-windows", { name: "Disk swap", monitor_ids: [ids.window], starts_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 3_600_000).toISOString() });
  expect(w.status).toBe(201);
  expect((await s.api("PATCH", `/api/v1/monitors/${ids.switched}`, { is_in_maintenance: true })).status).toBe(200);
  for (const id of Object.values(ids)) expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status).toBe("down");
}, 40_000);
afterAll(() => s?.stop());

const HELD = () => [ids.window, ids.switched];
/** The state badge's words in a piece of HTML ("Maintenance", "Down", ...). */
const badgeWords = (htmlText: string) => [...htmlText.matchAll(/<span class="st st-[a-z]+"><span aria-hidden="true">[^<]*<\/span> ([A-Za-z]+)<\/span>/g)].map((m) => m[1]!);

describe("the dashboard", () => {
  test("the list shows maintenance in the row of each monitor in maintenance, and down for the other", async () => {
    const { text } = await c.get("/");
    const row = (id: number) => {
      const at = text.indexOf(`<tr data-monitor="${id}">`);
      return badgeWords(text.slice(at, text.indexOf("</tr>", at)));
    };
    expect(HELD().map(row)).toEqual([["Maintenance"], ["Maintenance"]]);
    expect(row(ids.down)).toEqual(["Down"]);
  });

  test("the summary counts them in maintenance, not down; the state filter finds them under maintenance only", async () => {
    const { text } = await c.get("/");
    expect(text).toContain("3 monitors: 0 up, 0 degraded, 1 down, 2 in maintenance, 0 other.");
    const listed = async (q: string) => [...(await c.get(`/?${q}`)).text.matchAll(/<tr data-monitor="(\d+)">/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
    expect(await listed("state=maintenance")).toEqual(HELD().sort((a, b) => a - b));
    expect(await listed("state=down")).toEqual([ids.down]);
    // ordered by state: down first, maintenance after
    const order = [...(await c.get("/?sort=state")).text.matchAll(/<tr data-monitor="(\d+)">/g)].map((m) => Number(m[1]));
    expect(order).toEqual([ids.down, ...HELD()]);
  });

  test("the monitor page shows maintenance", async () => {
    for (const id of HELD()) {
      const { text } = await c.get(`/monitors/${id}`);
      const head = text.slice(text.indexOf('data-live-part="head"'), text.indexOf("</h1>", text.indexOf('data-live-part="head"')) + 200);
      expect(badgeWords(head)).toEqual(["Maintenance"]);
    }
  });
});

describe("the status page", () => {
  test("its rows say maintenance, and it lists no ongoing incident of theirs", async () => {
    const text = await (await fetch(`${s.url}/s/${SLUG}`)).text();
    const rowOf = (name: string) => {
      const at = text.indexOf(`<h3>${name}</h3>`);
      return badgeWords(text.slice(at, text.indexOf("</div>", at)));
    };
    expect(rowOf("held by a window")).toEqual(["Maintenance"]);
    expect(rowOf("switched to maintenance")).toEqual(["Maintenance"]);
    expect(rowOf("plainly down")).toEqual(["Down"]);
    const ongoing = text.slice(text.indexOf('id="open-h"'), text.indexOf("</section>", text.indexOf('id="open-h"')));
    expect(unescape(ongoing)).toContain("plainly down");
    expect(unescape(ongoing)).not.toContain("held by a window");
    expect(unescape(ongoing)).not.toContain("switched to maintenance");
  });

  test("its JSON says the same", async () => {
    const json = await (await fetch(`${s.url}/s/${SLUG}.json`)).json();
    expect(Object.fromEntries(json.monitors.map((m: any) => [m.name, m.status]))).toEqual({ "held by a window": "maintenance", "switched to maintenance": "maintenance", "plainly down": "down" });
    expect(json.incidents.open.map((i: any) => i.monitor)).toEqual(["plainly down"]);
  });

  test("the status badges say maintenance", async () => {
    for (const id of HELD()) {
      const svg = await (await fetch(`${s.url}/s/${SLUG}/badge/${id}/status.svg`)).text();
      expect(svg).toContain('aria-label="status: maintenance"');
    }
    expect(await (await fetch(`${s.url}/s/${SLUG}/badge/${ids.down}/status.svg`)).text()).toContain('aria-label="status: down"');
  });

  test("the Atom feed calls their open incidents maintenance, not down", async () => {
    const feed = await (await fetch(`${s.url}/s/${SLUG}/feed.atom`)).text();
    const titles = [...feed.matchAll(/<entry>[\s\S]*?<title type="text">([^<]*)<\/title>/g)].map((m) => m[1]!).sort();
    expect(titles).toEqual(["held by a window is under maintenance", "plainly down is down", "switched to maintenance is under maintenance"]);
  });
});

test("/metrics: status 5 (maintenance) and no vigil_monitor_up for them; the down one is 0", async () => {
  const samples = parseSamples(await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.token}` } })).text());
  const status = Object.fromEntries(samplesOf(samples, "vigil_monitor_status").map((x) => [x.labels.id, x.value]));
  expect(status).toEqual({ [ids.window]: 5, [ids.switched]: 5, [ids.down]: 0 });
  expect(samplesOf(samples, "vigil_monitor_up").map((x) => [x.labels.id, x.value])).toEqual([[String(ids.down), 0]]);
});
