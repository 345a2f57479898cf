/**
 * Several `vigil serve` instances on one PostgreSQL database (README "Several instances"): real
 * child processes, each with its own --data and the same VIGIL_SECRET_KEY, on a throwaway
 * PostgreSQL, checking real HTTP targets and alerting a real webhook.
 *
 * - what one instance writes, the other reads and acts on (a monitor made or resumed on one is
 *   checked by whichever instance its share falls to); both show every monitor in /metrics;
 * - each monitor is checked by exactly one instance: over a window, every monitor's checks come at
 *   its interval, never two close together, and the instances' shares add up to every monitor;
 * - kill -9 of an instance: the other checks its monitors within 15 s;
 * - kill -9 of the leader with an alert in flight: the new leader sends it again under the same
 *   delivery id, and every alert reaches the receiver under one id only;
 * - a probe peer following one instance learns of a monitor made on the other, and may report its
 *   results to either: each is stored once.
 *
 * Run by `npm run test:postgres` (VIGIL_TEST_ENGINE=postgres), each case on a database of its own
 * on the suite's PostgreSQL server (test/helpers/engine.ts); skipped on SQLite, where there is one
 * instance, and, loudly, where PostgreSQL's server binaries are missing.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Share } from "../../src/cluster/share.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import type { PostgresStore } from "../../src/store/database.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { postgresAvailable, startPostgres, type PostgresServer } from "../helpers/postgres.ts";
import { lastLine, runVigil, spawnServer, type ChildServer } from "../helpers/process.ts";
import { batch, peerCall, resultItem } from "../peers/helpers.ts";
import { apiClient, tempDir, waitFor, type TestServer } from "../helpers/server.ts";

const SECRET_KEY = "5a".repeat(32);
/** monitors are checked this often (set in the database: the API's floor is 10 s) */
const INTERVAL_SEC = 2;
const TAKEOVER_MS = 15_000;

interface Hit {
  path: string;
  at: number;
}

/** An HTTP target answering 200 on every path, or 500 on paths marked down, noting each request's time. */
function startTarget() {
  const hits: Hit[] = [];
  const down = new Set<string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      hits.push({ path, at: Date.now() });
      return new Response(down.has(path) ? "broken" : "fine", { status: down.has(path) ? 500 : 200 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, hits, down, stop: () => server.stop(true) };
}

interface Cluster {
  url: string;
  store: PostgresStore;
  servers: ChildServer[];
  ids: string[];
  api: TestServer["api"][];
  dirs: string[];
  stop(): Promise<void>;
}

interface ReadyCluster {
  instance: string;
  leader: boolean;
  region_instances: string[];
  monitors: number;
}

async function readiness(s: ChildServer): Promise<ReadyCluster> {
  return ((await (await fetch(s.url + "/readyz")).json()) as { cluster: ReadyCluster }).cluster;
}

/**
 * `count` instances on a fresh database of `pg`, started one after the other (the first creates the
 * account and its token), returned once each sees all of them.
 */
async function startCluster(pg: PostgresServer, count: number, flags: string[] = []): Promise<Cluster> {
  const url = await pg.createDatabase();
  const dirs: string[] = [];
  const servers: ChildServer[] = [];
  const spawn = async () => {
    const dir = tempDir("vigil-cluster-");
    dirs.push(dir);
    const s = await spawnServer(["--data", dir, "--database-url", url, ...flags], { env: { VIGIL_SECRET_KEY: SECRET_KEY }, name: `instance ${servers.length + 1}` });
    servers.push(s);
    return s;
  };
  await spawn();
  const token = readFileSync(join(dirs[0]!, "bootstrap-token"), "utf8").trim();
  for (let i = 1; i < count; i++) await spawn();
  const joined = await waitFor(async () => {
    const views = await Promise.all(servers.map(readiness));
    return views.every((v) => v.region_instances.length === count) ? views : null;
  }, { timeoutMs: 20_000, intervalMs: 100 });
  if (!joined) throw new Error(`the instances did not see each other:\n${servers.map((s) => s.output()).join("\n")}`);
  const store = await openPostgresStore(url, { poolSize: 2 });
  return {
    url,
    store,
    servers,
    ids: joined.map((v) => v.instance),
    api: servers.map((s) => apiClient(s.url, token)),
    dirs,
    async stop() {
      for (const s of servers) if (s.proc.exitCode === null) await s.stop();
      await store.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
}

/**
 * `count` http monitors on `target` at /m/<i>, created paused on the instances in turn, their interval
 * lowered to INTERVAL_SEC in the database, then resumed through the API of the instance that did not
 * create them: every instance must hear of changes made on the others.
 */
async function httpMonitors(c: Cluster, target: string, count: number, extra: Record<string, unknown> = {}): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const api = c.api[i % c.api.length]!;
    const res = await api("POST", "/api/v1/monitors", { name: `m${i}`, monitor_type: "http", target: `${target}/m/${i}`, interval_sec: 10, timeout_ms: 1000, is_paused: true, ...extra });
    expect(res.status).toBe(201);
    ids.push(Number(res.json.data.id));
  }
  await c.store.db.updateTable("monitors").set({ interval_sec: INTERVAL_SEC }).where("id", "in", ids).execute();
  for (const [i, id] of ids.entries()) {
    const res = await c.api[(i + 1) % c.api.length]!("PATCH", `/api/v1/monitors/${id}`, { is_paused: false });
    expect(res.status).toBe(200);
  }
  return ids;
}

const hitsOf = (hits: Hit[], i: number, after = 0) => hits.filter((h) => h.path === `/m/${i}` && h.at > after).map((h) => h.at);

/** starting the suite's PostgreSQL server (the first file to need it does) takes seconds on a loaded machine */
const HOOK_TIMEOUT_MS = 60_000;

// several instances exist on PostgreSQL only: `npm run test:postgres` runs these, on the suite\'s server
describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("cluster tests (several instances on PostgreSQL)"))("several instances on one PostgreSQL database", () => {
  let pg: PostgresServer;
  beforeAll(async () => {
    pg = await testCluster();
  }, HOOK_TIMEOUT_MS);

  test("instances started at once on an empty database all start; one of them makes the first account and its token", async () => {
    const url = await pg.createDatabase();
    const dirs = [tempDir("vigil-cluster-"), tempDir("vigil-cluster-"), tempDir("vigil-cluster-")];
    const servers = await Promise.all(dirs.map((dir, i) => spawnServer(["--data", dir, "--database-url", url], { env: { VIGIL_SECRET_KEY: SECRET_KEY }, name: `instance ${i + 1}` })));
    try {
      const tokens = dirs.filter((d) => existsSync(join(d, "bootstrap-token")));
      expect(tokens.length).toBe(1);
      const token = readFileSync(join(tokens[0]!, "bootstrap-token"), "utf8").trim();
      for (const s of servers) expect((await apiClient(s.url, token)("GET", "/api/v1/monitors")).status).toBe(200);
    } finally {
      for (const s of servers) await s.stop();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }, 60_000);

  test("what one instance writes the other reads, and each monitor is checked by exactly one of them", async () => {
    const target = startTarget();
    const c = await startCluster(pg, 2, ["--metrics-public"]);
    try {
      // /metrics says which one leads and how many share the region
      const metrics = await Promise.all(c.servers.map(async (s) => await (await fetch(s.url + "/metrics")).text()));
      expect(metrics.filter((m) => /^vigil_cluster_leader 1$/m.test(m)).length).toBe(1);
      expect(metrics.filter((m) => /^vigil_cluster_leader 0$/m.test(m)).length).toBe(1);
      for (const m of metrics) expect(m).toMatch(/^vigil_cluster_region_instances 2$/m);

      // a monitor made on one is read on the other, and an edit there is read back on the first
      const made = await c.api[0]!("POST", "/api/v1/monitors", { name: "made on one", monitor_type: "http", target: `${target.url}/elsewhere`, interval_sec: 60, timeout_ms: 1000, is_paused: true });
      expect(made.status).toBe(201);
      const read = await c.api[1]!("GET", `/api/v1/monitors/${made.json.data.id}`);
      expect(read.status).toBe(200);
      expect(read.json.data.attributes).toEqual(made.json.data.attributes);
      expect((await c.api[1]!("PATCH", `/api/v1/monitors/${made.json.data.id}`, { name: "renamed on two" })).status).toBe(200);
      expect((await c.api[0]!("GET", `/api/v1/monitors/${made.json.data.id}`)).json.data.attributes.name).toBe("renamed on two");

      const N = 12;
      await httpMonitors(c, target.url, N);
      // every monitor checked at least twice: both instances run their shares
      const started = await waitFor(() => Array.from({ length: N }, (_, i) => hitsOf(target.hits, i).length >= 2).every(Boolean), { timeoutMs: 30_000, intervalMs: 100 });
      expect(started).toBe(true);
      const shares = await Promise.all(c.servers.map(readiness));
      expect(shares.map((s) => s.monitors).reduce((a, b) => a + b, 0)).toBe(N);
      for (const s of shares) expect(s.monitors).toBeGreaterThan(0);
      // exactly one leader, and both name it
      expect(shares.filter((s) => s.leader).length).toBe(1);
      // each checks its share, and both show every monitor's state in /metrics (README "Per-monitor metrics")
      const states = await Promise.all(
        c.servers.map(async (s) => (await (await fetch(s.url + "/metrics")).text()).split("\n").filter((l) => l.startsWith("vigil_monitor_status{")).sort()),
      );
      expect(states[0]!.length).toBe(N + 1);
      expect(states[1]).toEqual(states[0]!);

      // a window of steady state: each monitor's checks come one interval apart, from one instance
      const from = Date.now();
      const windowMs = 6 * INTERVAL_SEC * 1000;
      await waitFor(() => Date.now() - from >= windowMs, { timeoutMs: windowMs + 5000, intervalMs: 200 });
      for (let i = 0; i < N; i++) {
        const at = hitsOf(target.hits, i, from).filter((t) => t <= from + windowMs);
        // at its interval's rate (a doubled monitor would show about twice as many)
        expect(at.length).toBeLessThanOrEqual(windowMs / (INTERVAL_SEC * 1000) + 2);
        expect(at.length).toBeGreaterThanOrEqual(2);
        // two instances running one monitor run it at the same moments (same phase, same stored next run)
        const gaps = at.slice(1).map((t, k) => t - at[k]!);
        expect(Math.min(...gaps)).toBeGreaterThan(0.3 * INTERVAL_SEC * 1000);
      }
    } finally {
      await c.stop();
      await target.stop();
    }
  }, 90_000);

  test("kill -9 of an instance: the other checks its monitors within 15 s", async () => {
    const target = startTarget();
    const c = await startCluster(pg, 2);
    try {
      const N = 12;
      const ids = await httpMonitors(c, target.url, N);
      expect(await waitFor(() => Array.from({ length: N }, (_, i) => hitsOf(target.hits, i).length >= 1).every(Boolean), { timeoutMs: 30_000, intervalMs: 100 })).toBe(true);
      const [survivor, victim] = c.servers as [ChildServer, ChildServer];
      const share = new Share(c.ids[1]!, c.ids);
      const victims = ids.map((id, i) => ({ id, i })).filter(({ id }) => share.owns(id));
      expect(victims.length).toBeGreaterThan(0);
      expect((await readiness(victim)).monitors).toBe(victims.length);

      victim.proc.kill("SIGKILL");
      await victim.proc.exited;
      const killedAt = Date.now();
      // every monitor the killed instance checked is checked again by the survivor, within 15 s of the kill
      const taken = await waitFor(() => victims.every(({ i }) => hitsOf(target.hits, i, killedAt).length > 0), { timeoutMs: TAKEOVER_MS, intervalMs: 50 });
      if (!taken) console.error(survivor.output());
      expect(taken).toBe(true);
      const after = await readiness(survivor);
      expect(after.monitors).toBe(N);
      expect(after.region_instances).toEqual([c.ids[0]!]);
      expect(survivor.output()).toContain('"msg":"share changed');
    } finally {
      await c.stop();
      await target.stop();
    }
  }, 90_000);

  test("kill -9 of the leader with an alert in flight: sent again under the same delivery id, no alert under two", async () => {
    const target = startTarget();
    // the receiver holds the first delivery open until the leader that sent it is dead
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const received: { id: string; event: string }[] = [];
    const receiver = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(req) {
        await req.text();
        received.push({ id: req.headers.get("x-vigil-delivery") ?? "", event: req.headers.get("x-vigil-event") ?? "" });
        if (received.length === 1) await held;
        return new Response("ok");
      },
    });
    const c = await startCluster(pg, 2, ["--confirmations", "1"]);
    try {
      const channel = await c.api[1]!("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `http://127.0.0.1:${receiver.port}/hook` });
      expect(channel.status).toBe(201);
      const [id] = await httpMonitors(c, target.url, 1, { notification_channel_ids: [Number(channel.json.data.id)] });
      const state = async () => (await c.api[0]!("GET", `/api/v1/monitors/${id}`)).json.data.attributes.last_status as string;
      expect(await waitFor(async () => (await state()) === "up", { timeoutMs: 20_000, intervalMs: 100 })).toBe(true);

      const views = await Promise.all(c.servers.map(readiness));
      const leaderIndex = views.findIndex((v) => v.leader);
      expect(leaderIndex).toBeGreaterThanOrEqual(0);
      const leader = c.servers[leaderIndex]!;
      const survivor = c.servers[1 - leaderIndex]!;

      target.down.add("/m/0");
      expect(await waitFor(() => received.length >= 1, { timeoutMs: 20_000, intervalMs: 50 })).toBe(true);
      leader.proc.kill("SIGKILL");
      await leader.proc.exited;
      release();

      // the survivor takes the leadership and sends the interrupted alert again, under its id
      expect(await waitFor(() => received.length >= 2, { timeoutMs: 30_000, intervalMs: 100 })).toBe(true);
      expect((await readiness(survivor)).leader).toBe(true);
      target.down.delete("/m/0");
      expect(await waitFor(() => received.length >= 3, { timeoutMs: 30_000, intervalMs: 100 })).toBe(true);

      // the receiver has answered; the outbox row is marked right after
      const outbox = () => c.store.db.selectFrom("alerts").select(["delivery_id", "event", "status"]).where("monitor_id", "=", id!).orderBy("id").execute();
      await waitFor(async () => (await outbox()).every((r) => r.status === "delivered"), { timeoutMs: 10_000, intervalMs: 50 });
      const rows = await outbox();
      expect(rows.map((r) => [r.event, r.status])).toEqual([
        ["monitor.down", "delivered"],
        ["monitor.up", "delivered"],
      ]);
      expect(received).toEqual([
        { id: rows[0]!.delivery_id, event: "monitor.down" },
        { id: rows[0]!.delivery_id, event: "monitor.down" },
        { id: rows[1]!.delivery_id, event: "monitor.up" },
      ]);
    } finally {
      release();
      await c.stop();
      await receiver.stop(true);
      await target.stop();
    }
  }, 120_000);

  test("a probe peer may follow one instance and report to any: it learns of monitors made on the others, each result is stored once", async () => {
    const c = await startCluster(pg, 2);
    try {
      const [one, two] = c.servers as [ChildServer, ChildServer];
      const created = await runVigil(["peer", "create", "--region", "eu", "--all-accounts", "--data", c.dirs[0]!, "--database-url", c.url]);
      expect(created.code).toBe(0);
      const token = lastLine(created.stdout);
      const snapshot = await peerCall(two.url, token, "GET", "/monitors");
      expect(snapshot.status).toBe(200);
      expect(snapshot.json.data).toMatchObject({ full: true, monitors: [] });

      // made on one while the probe long-polls two: two's feed answers with it
      const polled = peerCall(two.url, token, "GET", `/monitors?cursor=${snapshot.json.data.cursor}&wait=20`);
      const made = await c.api[0]!("POST", "/api/v1/monitors", { name: "from eu", monitor_type: "http", target: "http://127.0.0.1:9/", interval_sec: 3600, timeout_ms: 1000, regions: ["eu"] });
      expect(made.status).toBe(201);
      const id = Number(made.json.data.id);
      const feed = (await polled).json.data;
      expect(feed.full).toBe(false);
      expect(feed.monitors.map((m: { id: number }) => m.id)).toEqual([id]);

      // the same result sent to one, then again to two (a probe retrying through the proxy): stored once
      const item = resultItem(id, "up", Date.now() - 1000);
      const first = await peerCall(one.url, token, "POST", "/results", batch([item]));
      expect(first.json.data.results.map((a: { outcome: string }) => a.outcome)).toEqual(["stored"]);
      const again = await peerCall(two.url, token, "POST", "/results", batch([item]));
      expect(again.json.data.results.map((a: { outcome: string }) => a.outcome)).toEqual(["duplicate"]);
      const checks = await c.api[1]!("GET", `/api/v1/monitors/${id}/checks?region=eu`);
      expect(checks.json.data.length).toBe(1);
    } finally {
      await c.stop();
    }
  }, 60_000);

  test("the database restarting: both instances listen to each other again, reload every definition and one leads again", async () => {
    // a PostgreSQL of its own, so the restart disturbs no other test
    const own = (await startPostgres())!;
    const target = startTarget();
    const c = await startCluster(own, 2);
    try {
      await own.stopServer();
      await Bun.sleep(500);
      await own.startServer();
      const resynced = (s: ChildServer) => s.output().includes('"reason":"resync"') && s.output().includes("listening to the other instances again");
      expect(await waitFor(() => c.servers.every(resynced), { timeoutMs: 30_000, intervalMs: 100 })).toBe(true);
      const leaders = await waitFor(async () => {
        const views = await Promise.all(c.servers.map(readiness));
        return views.filter((v) => v.leader).length === 1 && views.every((v) => v.region_instances.length === 2);
      }, { timeoutMs: 30_000, intervalMs: 100 });
      expect(leaders).toBe(true);
      // changes still travel both ways: monitors resumed on each are checked
      await httpMonitors(c, target.url, 4);
      expect(await waitFor(() => Array.from({ length: 4 }, (_, i) => hitsOf(target.hits, i).length >= 1).every(Boolean), { timeoutMs: 20_000, intervalMs: 100 })).toBe(true);
    } finally {
      await c.stop();
      await target.stop();
      await own.stop();
    }
  }, 120_000);

  test("a heartbeat pinged on one instance goes down on time after that instance is killed", async () => {
    const c = await startCluster(pg, 2);
    try {
      const made = await c.api[0]!("POST", "/api/v1/monitors", { name: "cron", monitor_type: "heartbeat", interval_sec: 10, timeout_ms: 1000, heartbeat_period_sec: 2, heartbeat_grace_sec: 1 });
      expect(made.status).toBe(201);
      const token = made.json.data.attributes.heartbeat_token as string;
      const views = await Promise.all(c.servers.map(readiness));
      // pinged on the instance that does not lead, which is then killed: the leader must learn the
      // deadline that ping set from the database
      const follower = c.servers[views.findIndex((v) => !v.leader)]!;
      const leaderApi = c.api[views.findIndex((v) => v.leader)]!;
      const pingedAt = Date.now();
      expect((await fetch(`${follower.url}/h/${token}`, { method: "POST" })).status).toBe(200);
      follower.proc.kill("SIGKILL");
      await follower.proc.exited;
      const status = async () => (await leaderApi("GET", `/api/v1/monitors/${made.json.data.id}`)).json.data.attributes.last_status as string;
      // the ping, stored by the instance that took it, is what the leader reads
      expect(await status()).toBe("up");
      // period 2 s + grace 1 s after the ping: down, judged by the leader, which never heard the ping
      expect(await waitFor(async () => (await status()) === "down", { timeoutMs: 15_000, intervalMs: 100 })).toBe(true);
      // not before its time: the down transition comes after the period and grace the ping started
      const events = (await leaderApi("GET", `/api/v1/monitors/${made.json.data.id}/events?kind=transition`)).json.data as { attributes: { to: string; at: string } }[];
      const down = events.find((e) => e.attributes.to === "down")!;
      expect(Date.parse(down.attributes.at)).toBeGreaterThanOrEqual(pingedAt + 3000);
    } finally {
      await c.stop();
    }
  });
});
