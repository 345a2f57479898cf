/**
 * Deadlines survive restarts (rebuilt from monitors.heartbeat_deadline_at, neither lost nor fired
 * twice), and a 200 means the ping is durable: a kill -9 in the middle of a burst loses no
 * acknowledged ping.
 */
import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { randomToken } from "../../src/lib/tokens.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { openTestStore } from "../helpers/engine.ts";
import { createHeartbeat, monitorRow, ping, transitions } from "../helpers/heartbeat.ts";
import { spawnServer } from "../helpers/process.ts";
import { startTestServer, tempDir, waitFor } from "../helpers/server.ts";

/** every ping carries its own address through the trusted proxy header */
const FLAGS = ["--trusted-proxy", "127.0.0.1", "--ping-limit-token", "1000000", "--ping-limit-ip", "1000000", "--log-level", "info"];

describe("restart", () => {
  test("a restart in the middle of a period: the transitions still fire on time, once each", async () => {
    const s1 = await startTestServer([], { keepData: true });
    const dir = s1.dataDir;
    try {
      const m = await createHeartbeat(s1, { periodSec: 2, graceSec: 1 });
      await ping(s1.url, m.token);
      const pingAt = (await monitorRow(s1.ctx, m.id)).heartbeat_last_ping_at!;
      await s1.stop();

      const s2 = await startTestServer([], { dataDir: dir });
      try {
        expect(await waitFor(async () => (await monitorRow(s2.ctx, m.id)).last_status === "degraded", { timeoutMs: 8000 })).toBe(true);
        // stop again while degraded: the down deadline is rebuilt once more
        await s2.stop();
      } catch (e) {
        await s2.stop();
        throw e;
      }
      const s3 = await startTestServer([], { dataDir: dir });
      try {
        expect(await waitFor(async () => (await monitorRow(s3.ctx, m.id)).last_status === "down", { timeoutMs: 8000 })).toBe(true);
        const events = (await s3.ctx.db.selectFrom("monitor_events").selectAll().where("monitor_id", "=", m.id).where("kind", "=", "transition").orderBy("id").execute());
        expect(events.map((e) => `${e.from_state}->${e.to_state}`)).toEqual(["unknown->up", "up->degraded", "degraded->down"]);
        expect(events[1]!.at).toBeGreaterThanOrEqual(pingAt + 2000);
        expect(events[2]!.at).toBeGreaterThanOrEqual(pingAt + 3000);
        expect((await s3.ctx.db.selectFrom("incidents").selectAll().where("monitor_id", "=", m.id).execute()).length).toBe(1);
      } finally {
        await s3.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a deadline that passed while the server was down fires at once on start", async () => {
    const s1 = await startTestServer([], { keepData: true });
    const dir = s1.dataDir;
    try {
      const m = await createHeartbeat(s1, { periodSec: 1, graceSec: 0 });
      await ping(s1.url, m.token);
      const deadline = (await monitorRow(s1.ctx, m.id)).heartbeat_deadline_at!;
      await s1.stop();
      expect(await waitFor(() => Date.now() > deadline + 300, { timeoutMs: 5000 })).toBe(true);

      const startedAt = Date.now();
      const s2 = await startTestServer([], { dataDir: dir });
      try {
        expect(await waitFor(async () => (await monitorRow(s2.ctx, m.id)).last_status === "down", { timeoutMs: 5000 })).toBe(true);
        expect(await transitions(s2.ctx, m.id)).toEqual(["unknown->up", "up->down"]);
        const down = (await s2.ctx.db.selectFrom("monitor_events").selectAll().where("monitor_id", "=", m.id).where("to_state", "=", "down").executeTakeFirstOrThrow());
        expect(down.at).toBeGreaterThanOrEqual(startedAt);
        expect(s2.logs.some((l) => l.component === "heartbeat" && l.msg === "heartbeat timers rebuilt" && l.overdue === 1)).toBe(true);
      } finally {
        await s2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("kill -9 during a ping burst", () => {
  test("every acknowledged ping is in the timeline and the checks after a restart", async () => {
    const dir = tempDir();
    const MONITORS = 20;
    const tokens: { id: number; token: string }[] = [];
    {
      const store = await openTestStore(dir);
      const account = await createAccount(store.db, "default", "enterprise", Date.now());
      for (let i = 0; i < MONITORS; i++) {
        const token = randomToken(24);
        const row = await store.db
          .insertInto("monitors")
          .values({ account_id: account.id, name: `job ${i}`, monitor_type: "heartbeat", target: null, interval_sec: 60, timeout_ms: 1000, group_id: null, created_at: Date.now(), updated_at: Date.now(), heartbeat_token: token, heartbeat_period_sec: 3600 } as never)
          .returning("id")
          .executeTakeFirstOrThrow();
        tokens.push({ id: row.id, token });
      }
      await store.close();
    }

    let server = await spawnServer(["--data", dir, ...FLAGS]);
    try {
      // Every ping carries its own address through the trusted proxy header, so each acknowledged
      // one can be found again by source_ip.
      const acked: string[] = [];
      const ackedPer = new Map<number, number>();
      let sent = 0;
      let killed = false;
      const KILL_AFTER = 400;
      const worker = async (w: number) => {
        for (let i = 0; i < 10_000 && !killed; i++) {
          const n = sent++;
          const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
          const { id, token } = tokens[(w + i) % MONITORS]!;
          try {
            const res = await fetch(`${server.url}/h/${token}`, { headers: { "x-forwarded-for": ip } });
            if (res.status === 200 && (await res.json()).result === "accepted") {
              acked.push(ip);
              ackedPer.set(id, (ackedPer.get(id) ?? 0) + 1);
            }
          } catch {
            return; // the server is gone
          }
          if (acked.length >= KILL_AFTER && !killed) {
            killed = true;
            server.proc.kill(9); // SIGKILL by pid, while the other workers' pings are in flight
          }
        }
      };
      await Promise.all(Array.from({ length: 32 }, (_, w) => worker(w)));
      expect(killed).toBe(true);
      await server.proc.exited; // reaped, so its lock on the data directory is stale
      expect(server.proc.signalCode).toBe("SIGKILL");
      expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER);

      server = await spawnServer(["--data", dir, ...FLAGS]);
      const store = await openTestStore(dir);
      try {
        const rows = await store.db.selectFrom("monitor_events").select("source_ip").where("kind", "=", "ping").where("result", "=", "accepted").execute();
        const recorded = new Set(rows.map((r) => r.source_ip));
        const missing = acked.filter((ip) => !recorded.has(ip));
        expect(missing).toEqual([]);
        // each accepted ping is an up check too (they carry no address: counted per monitor)
        const checks = await store.db.selectFrom("checks").select(["monitor_id", (eb) => eb.fn.countAll<number>().as("n")]).where("status", "=", "up").groupBy("monitor_id").execute();
        const upChecks = new Map(checks.map((c) => [c.monitor_id, Number(c.n)]));
        const short = [...ackedPer].filter(([id, n]) => (upChecks.get(id) ?? 0) < n);
        expect(short).toEqual([]);
        // and the server that came back serves pings
        expect((await fetch(`${server.url}/h/${tokens[0]!.token}`)).status).toBe(200);
      } finally {
        await store.close();
      }
    } finally {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
