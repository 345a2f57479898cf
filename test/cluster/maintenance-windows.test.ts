/**
 * Maintenance windows with two `vigil serve` instances on one PostgreSQL database (README "Several
 * instances", docs/maintenance-windows.md "How it works"): real child processes, a real failing
 * target and a real webhook receiver. Every instance reads is_in_maintenance alike, whichever checks
 * the monitor; a window written on the instance that does not lead is ended by the leader's timer,
 * once: one incident and one alert per monitor, and only the leader says it acted.
 *
 * PostgreSQL only (`npm run test:postgres`): on SQLite there is one instance.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { httpAttrs } from "../api/fixtures.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { postgresAvailable, type PostgresServer } from "../helpers/postgres.ts";
import { spawnServer, type ChildServer } from "../helpers/process.ts";
import { apiClient, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { startReceiver, type Receiver } from "../notify/helpers.ts";

const SECRET_KEY = "6b".repeat(32);
const FLAGS = ["--confirmations", "1", "--rate-limit", "pro=1000000,enterprise=1000000", "--log-level", "info"];
const MONITORS = 4;

describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("maintenance windows on several instances"))("maintenance windows on two instances", () => {
  let pg: PostgresServer;
  let target: HttpTarget;
  let receiver: Receiver;
  const servers: ChildServer[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    pg = await testCluster();
    receiver = startReceiver();
    target = await startHttpTarget({ "/broken": () => new Response("boom", { status: 500 }) });
  }, 60_000);
  afterAll(async () => {
    for (const s of servers) if (s.proc.exitCode === null) await s.stop();
    await target?.close();
    await receiver?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  test("both instances read the window alike; its end is acted on once, by the leader", async () => {
    const url = await pg.createDatabase();
    for (let i = 0; i < 2; i++) {
      const dir = tempDir("vigil-maint-cluster-");
      dirs.push(dir);
      servers.push(await spawnServer(["--data", dir, "--database-url", url, ...FLAGS], { env: { VIGIL_SECRET_KEY: SECRET_KEY }, name: `instance ${i + 1}` }));
    }
    const token = readFileSync(join(dirs[0]!, "bootstrap-token"), "utf8").trim();
    const apis = servers.map((s) => apiClient(s.url, token));
    const leading = async (s: ChildServer) => ((await (await fetch(s.url + "/readyz")).json()) as { cluster: { leader: boolean; region_instances: string[] } }).cluster;
    const roles = await waitFor(async () => {
      const views = await Promise.all(servers.map(leading));
      return views.every((v) => v.region_instances.length === 2) && views.filter((v) => v.leader).length === 1 ? views : null;
    }, { timeoutMs: 20_000, intervalMs: 100 });
    expect(roles).toBeTruthy();
    const leader = roles!.findIndex((v) => v.leader);
    const follower = 1 - leader;
    const api: TestServer["api"] = apis[follower]!;

    const ch = await api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${receiver.url}/hook` });
    const ids: number[] = [];
    for (let i = 0; i < MONITORS; i++) {
      const r = await api("POST", "/api/v1/monitors", httpAttrs({ name: `m${i}`, target: `${target.url}/broken`, interval_sec: 10, timeout_ms: 2000, notification_channel_ids: [Number(ch.json.data.id)] }));
      ids.push(Number(r.json.data.id));
    }
    // written on the instance that does not lead
    const w = await api("POST", "/api/v1/maintenance-windows", { name: "upgrade", monitor_ids: ids, starts_at: new Date(Date.now() - 1000).toISOString(), ends_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect(w.status).toBe(201);
    for (const id of ids) expect((await api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false })).status).toBe(200);

    const attrsOn = async (a: TestServer["api"]) => ((await a("GET", "/api/v1/monitors?per_page=100")).json.data as { id: string; attributes: Record<string, any> }[]).filter((m) => ids.includes(Number(m.id))).map((m) => m.attributes);
    expect(await waitFor(async () => (await attrsOn(apis[0]!)).every((a) => a.last_status === "down"), { timeoutMs: 20_000 })).toBe(true);
    // every monitor was checked, by whichever instance its share fell to
    const checked = await Promise.all(ids.map(async (id) => (await api("GET", `/api/v1/monitors/${id}/checks`)).json.data.length));
    expect(checked.every((n) => n >= 1)).toBe(true);
    for (const a of apis) for (const attrs of await attrsOn(a)) expect(attrs).toMatchObject({ last_status: "down", is_in_maintenance: true });
    expect((await api("GET", "/api/v1/incidents")).json.pagination.total).toBe(0);
    expect(receiver.requests).toEqual([]);

    const end = await api("PATCH", `/api/v1/maintenance-windows/${w.json.data.id}`, { ends_at: new Date(Date.now() + 3000).toISOString() });
    expect(end.json.data.attributes.is_active).toBe(true);
    expect(await waitFor(async () => (await api("GET", "/api/v1/incidents")).json.pagination.total === MONITORS, { timeoutMs: 20_000 })).toBe(true);
    expect(await waitFor(() => receiver.requests.length >= MONITORS, { timeoutMs: 15_000 })).toBe(true);
    // acted on once: one alert queued per monitor in the outbox both instances share
    const store = await openPostgresStore(url, { poolSize: 1 });
    try {
      const queued = await store.db.selectFrom("alerts").select(["monitor_id", "event"]).orderBy("monitor_id").execute();
      expect(queued).toEqual(ids.map((id) => ({ monitor_id: id, event: "monitor.down" })));
    } finally {
      await store.close();
    }
    expect(receiver.requests.map((r) => JSON.parse(r.body).monitor.id).sort()).toEqual(ids.map(String).sort());
    expect(new Set(receiver.requests.map((r) => r.headers.get("x-vigil-delivery"))).size).toBe(MONITORS);
    expect((await apis[leader]!("GET", "/api/v1/incidents")).json.pagination.total).toBe(MONITORS);
    for (const a of apis) for (const attrs of await attrsOn(a)) expect(attrs.is_in_maintenance).toBe(false);
    expect(servers[leader]!.output()).toContain('"msg":"maintenance window ended"');
    expect(servers[follower]!.output()).not.toContain('"msg":"maintenance window ended"');
  }, 120_000);
});
