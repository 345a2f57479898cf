/**
 * Crash safety: a real `vigil serve` child process under a ping burst, concurrent API writes,
 * running checks and a stream of webhook alerts is killed with SIGKILL mid-flight and restarted on
 * the same data directory. Then: every acknowledged write is there, the database passes
 * integrity_check, a heartbeat deadline set before the crash fires after it, the scheduler checks
 * again, and no alert the database recorded as delivered is sent again (delivery is at-least-once
 * only for an alert in flight at the crash).
 */
import { afterAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readJournalFile } from "../../src/store/ping-journal-file.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { spawnServer, type ChildServer } from "../helpers/process.ts";
import { tempDir, waitFor } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

const FLAGS = ["--ping-limit-token", "1000000", "--ping-limit-ip", "10000000", "--rate-limit", "pro=100000,enterprise=100000", "--log-level", "warn"];
const ALERTING = 40; // heartbeat monitors flipped down/up by /fail and ping, each flip an alert
const PINGED = 4; // heartbeat monitors only pinged
const HTTP = 10; // http monitors checked by the scheduler against a loopback target
const PATCHED = 4; // monitors renamed over and over, one PATCH in flight each
const CREATORS = 4; // workers creating monitors
const KILL_AFTER_PINGS = 2000;

const dataDir = tempDir("vigil-crash-");
const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Delivery { id: string; at: number }

function startWebhookReceiver() {
  const deliveries: Delivery[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const id = req.headers.get("x-vigil-delivery") ?? "missing";
      await req.text();
      deliveries.push({ id, at: Date.now() });
      await Bun.sleep(15); // slow enough that some alerts are in flight when the server dies
      return new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hook`, deliveries, stop: () => server.stop(true) };
}

function countById(ds: Delivery[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const d of ds) m.set(d.id, (m.get(d.id) ?? 0) + 1);
  return m;
}

function openDb(): Database {
  const db = new Database(join(dataDir, "vigil.db"));
  db.exec("PRAGMA busy_timeout = 5000");
  return db;
}

async function call(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, json: (await res.json()) as any };
}

// About SQLite's files after a kill: it reads vigil.db and the ping journal directly and runs
// integrity_check on them. On PostgreSQL the database server keeps what was committed, whatever
// becomes of an instance.
test.skipIf(TEST_ENGINE === "postgres")("SIGKILL mid-flight loses no acknowledged write and sends no delivered alert twice", async () => {
  const receiver = startWebhookReceiver();
  cleanup.push(receiver.stop);
  const target: HttpTarget = await startHttpTarget({ "/ok": () => new Response("fine") });
  cleanup.push(target.close);

  let s1: ChildServer = await spawnServer(["--data", dataDir, ...FLAGS]);
  cleanup.push(() => (s1.proc.exitCode === null ? s1.proc.kill("SIGKILL") : undefined));
  const token = readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim();
  const api = (method: string, path: string, body?: unknown) => call(s1.url, token, method, path, body);

  // set-up: a default webhook channel, so every monitor alerts through it
  const ch = await api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: receiver.url, default_for_new_monitors: true });
  expect(ch.status).toBe(201);
  const heartbeat = async (name: string, extra: Record<string, unknown> = {}) => {
    const r = await api("POST", "/api/v1/monitors", { name, monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, ...extra });
    expect(r.status).toBe(201);
    return { id: Number(r.json.data.id), token: r.json.data.attributes.heartbeat_token as string };
  };
  const alerting = await Promise.all(Array.from({ length: ALERTING }, (_, i) => heartbeat(`alerting-${i}`)));
  const pinged = await Promise.all(Array.from({ length: PINGED }, (_, i) => heartbeat(`pinged-${i}`)));
  // interval_sec 10 is the minimum; the deadline is what matters: last ping + 2 s (degraded) + 1 s (down)
  const deadlined = await heartbeat("deadline", { interval_sec: 10, heartbeat_period_sec: 2, heartbeat_grace_sec: 1 });
  const httpIds: number[] = [];
  for (let i = 0; i < HTTP; i++) {
    const r = await api("POST", "/api/v1/monitors", { name: `web-${i}`, monitor_type: "http", target: `${target.url}/ok`, interval_sec: 10, timeout_ms: 2000 });
    expect(r.status).toBe(201);
    httpIds.push(Number(r.json.data.id));
  }
  const patchIds: number[] = [];
  for (let i = 0; i < PATCHED; i++) {
    const r = await api("POST", "/api/v1/monitors", { name: "patch-0", monitor_type: "http", target: `${target.url}/ok`, interval_sec: 3600, timeout_ms: 2000, is_paused: true });
    patchIds.push(Number(r.json.data.id));
  }

  // the load: every worker loops until the server dies, recording only what was acknowledged
  let dead = false;
  const acked = {
    pings: new Map<number, number>(),
    failReasons: [] as string[],
    created: new Map<number, string>(),
    patched: new Map<number, { acked: string | null; unanswered: string[] }>(patchIds.map((id) => [id, { acked: "patch-0", unanswered: [] }])),
    deadlinePing: 0,
  };
  const pingCount = () => [...acked.pings.values()].reduce((a, b) => a + b, 0);
  const ping = async (tok: string, suffix = "", body?: string) => {
    const r = await fetch(`${s1.url}/h/${tok}${suffix}`, { method: body ? "POST" : "GET", body, signal: AbortSignal.timeout(10_000) });
    await r.arrayBuffer();
    return r.status;
  };
  const loop = async (step: (n: number) => Promise<void>) => {
    for (let n = 0; !dead && n < 100_000; n++) {
      try {
        await step(n);
      } catch {
        if (!dead) await Bun.sleep(5); // refused or reset: the server is dying
      }
    }
  };
  const workers: Promise<void>[] = [];
  for (const [i, m] of alerting.entries()) {
    let start = -1;
    workers.push(loop(async (step) => {
      // monitors start flipping one after another, so alerts keep coming until the kill
      if (start < 0 && pingCount() < i * (KILL_AFTER_PINGS / ALERTING)) return void (await Bun.sleep(5));
      if (start < 0) start = step;
      const n = step - start;
      // fail and recover a few times (flap protection quiets a monitor after that), then just ping
      if (n < 8 && n % 2 === 0) {
        const reason = `crash-test ${m.id} ${n}`;
        if ((await ping(m.token, "/fail", reason)) === 200) acked.failReasons.push(reason);
      } else {
        if ((await ping(m.token)) === 200) acked.pings.set(m.id, (acked.pings.get(m.id) ?? 0) + 1);
        if (n >= 8) await Bun.sleep(2);
      }
    }));
  }
  for (let w = 0; w < 8; w++) {
    workers.push(loop(async () => {
      const m = pinged[Math.floor(Math.random() * pinged.length)]!;
      if ((await ping(m.token)) === 200) acked.pings.set(m.id, (acked.pings.get(m.id) ?? 0) + 1);
    }));
  }
  workers.push(loop(async () => {
    const sent = Date.now();
    if ((await ping(deadlined.token)) === 200) acked.deadlinePing = sent;
    await Bun.sleep(20);
  }));
  for (let w = 0; w < CREATORS; w++) {
    workers.push(loop(async (n) => {
      const name = `created-${w}-${n}`;
      const r = await api("POST", "/api/v1/monitors", { name, monitor_type: "http", target: `${target.url}/ok`, interval_sec: 3600, timeout_ms: 2000, is_paused: true });
      if (r.status === 201) acked.created.set(Number(r.json.data.id), name);
    }));
  }
  for (const id of patchIds) {
    workers.push(loop(async (n) => {
      const p = acked.patched.get(id)!;
      const name = `patch-${n + 1}`;
      // every rename sent since the last answered one may have committed: the one in flight at the
      // kill, whose answer never came, and the tries after it that the dying server refused
      p.unanswered.push(name);
      const r = await api("PATCH", `/api/v1/monitors/${id}`, { name });
      if (r.status === 200) p.acked = name;
      p.unanswered = [];
    }));
  }

  // kill once every kind of work is under way: alerts delivered, checks run, writes acknowledged
  const busy = await waitFor(
    () => receiver.deliveries.length >= 20 && acked.created.size >= 20 && acked.failReasons.length >= ALERTING / 2 && target.requests.length >= HTTP && pingCount() >= KILL_AFTER_PINGS,
    { timeoutMs: 20_000 },
  );
  expect(busy).toBe(true);
  s1.proc.kill("SIGKILL");
  await s1.proc.exited;
  dead = true;
  await Promise.all(workers);
  const killedAt = Date.now();
  const targetAtKill = target.requests.length;
  const deliveredAtKill = countById(receiver.deliveries);

  // the database as the dead process left it: intact, and what it says was delivered
  const db = openDb();
  expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  const delivered = (db.query("SELECT delivery_id FROM alerts WHERE status = 'delivered'").all() as { delivery_id: string }[]).map((r) => r.delivery_id);
  const inFlight = (db.query("SELECT delivery_id FROM alerts WHERE status = 'sending'").all() as { delivery_id: string }[]).map((r) => r.delivery_id);
  // an acknowledged ping is in the row, or still in the ping journal the restart folds first
  const row = db.query("SELECT coalesce(heartbeat_last_ping_at, 0) AS last, last_status AS status FROM monitors WHERE id = ?").get(deadlined.id) as { last: number; status: string };
  const journaledAt = readJournalFile(dataDir).filter((e) => e.monitorId === deadlined.id).map((e) => e.at);
  const deadlineRow = { ...row, last: Math.max(row.last, ...journaledAt) };
  db.close();
  expect(delivered.length).toBeGreaterThan(0);
  for (const id of delivered) expect(deliveredAtKill.get(id)).toBe(1);

  // restart on the same directory
  const s2 = await spawnServer(["--data", dataDir, ...FLAGS]);
  cleanup.push(() => (s2.proc.exitCode === null ? s2.proc.kill("SIGKILL") : undefined));
  const api2 = (method: string, path: string, body?: unknown) => call(s2.url, token, method, path, body);

  // every acknowledged write is there
  const check = openDb();
  for (const [id, n] of acked.pings) {
    const { c } = check.query("SELECT count(*) AS c FROM monitor_events WHERE monitor_id = ? AND kind = 'ping'").get(id) as { c: number };
    expect(c).toBeGreaterThanOrEqual(n);
  }
  const reasons = new Set((check.query("SELECT reason FROM monitor_events WHERE kind = 'fail'").all() as { reason: string }[]).map((r) => r.reason));
  for (const r of acked.failReasons) expect(reasons.has(r)).toBe(true);
  expect(acked.deadlinePing).toBeGreaterThan(0);
  expect(deadlineRow.last).toBeGreaterThanOrEqual(acked.deadlinePing);
  for (const [id, name] of acked.created) {
    const r = await api2("GET", `/api/v1/monitors/${id}`);
    expect(r.status).toBe(200);
    expect(r.json.data.attributes.name).toBe(name);
  }
  for (const [id, p] of acked.patched) {
    const r = await api2("GET", `/api/v1/monitors/${id}`);
    // the acknowledged rename, or one sent after it that got no answer (it may have committed unanswered)
    expect([p.acked, ...p.unanswered]).toContain(r.json.data.attributes.name);
  }

  // heartbeat deadlines resumed: the deadline set by the last ping before the crash fires after it
  const downAt = await waitFor(() => {
    const row = check.query("SELECT at FROM monitor_events WHERE monitor_id = ? AND kind = 'transition' AND to_state = 'down' AND at >= ?").get(deadlined.id, deadlineRow.last) as { at: number } | null;
    return row?.at ?? 0;
  }, { timeoutMs: 10_000 });
  expect(deadlineRow.status).toBe("up");
  expect(downAt).toBeGreaterThanOrEqual(deadlineRow.last + 3000);

  // the scheduler resumed: http monitors are checked again and the results recorded
  const checkedAgain = await waitFor(() => {
    const { c } = check.query(`SELECT count(*) AS c FROM checks WHERE monitor_id IN (${httpIds.join(",")}) AND checked_at > ?`).get(killedAt) as { c: number };
    return c > 0 && target.requests.length > targetAtKill;
  }, { timeoutMs: 15_000 });
  expect(checkedAgain).toBe(true);

  // the outbox drains; an alert recorded delivered before the crash is never sent again
  const drained = await waitFor(() => {
    const { c } = check.query("SELECT count(*) AS c FROM alerts WHERE status IN ('pending', 'sending')").get() as { c: number };
    return c === 0;
  }, { timeoutMs: 15_000 });
  expect(drained).toBe(true);
  const finalCounts = countById(receiver.deliveries);
  for (const id of delivered) expect(finalCounts.get(id)).toBe(1);
  const allAlerts = (check.query("SELECT delivery_id, status FROM alerts").all() as { delivery_id: string; status: string }[]);
  for (const a of allAlerts) {
    expect(a.status).toBe("delivered");
    expect(finalCounts.get(a.delivery_id) ?? 0).toBeGreaterThanOrEqual(1);
  }
  const resent = [...finalCounts].filter(([, n]) => n > 1).map(([id]) => id);
  for (const id of resent) expect(inFlight).toContain(id); // only an alert in flight at the crash may repeat
  check.close();

  console.log(
    `crash: killed with ${acked.created.size} monitors created, ${pingCount()} pings and ` +
      `${acked.failReasons.length} failures acknowledged, ${delivered.length} alerts delivered and ${inFlight.length} in flight; ` +
      `after restart ${allAlerts.length} alerts delivered, ${resent.length} re-sent (in flight at the crash)`,
  );

  expect(await s2.stop()).toBe(0);
  const after = openDb();
  expect(after.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  after.close();
}, 90_000);
