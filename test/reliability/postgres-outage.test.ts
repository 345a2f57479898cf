/**
 * PostgreSQL goes away under load and comes back (README, "When the database is unreachable"): a
 * real server on a cluster of this file's own, which the test stops (fast shutdown: sessions are
 * cut) while API requests, pings and checks against a local HTTP target go on. Meanwhile the API
 * answers 503 storage_unavailable with Retry-After, never a 500; /readyz says not ready; checks keep
 * running and their results wait in memory. When the cluster is started again, everything resumes
 * without a restart, and every check the target saw is in the database. /metrics keeps serving the
 * instance's own figures meanwhile, without the per-monitor series, which come back with the database.
 *
 * PostgreSQL only: SQLite's counterpart, a full disk, is test/reliability/disk-full.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { postgresAvailable, startPostgres, type PostgresServer } from "../helpers/postgres.ts";
import { startTestServer, waitFor, type ApiResult, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";

const MONITORS = 12;

/** A gauge or counter from /metrics (started with --metrics-public). */
async function metric(s: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(" ")[1]) : NaN;
}

/** The times of the checks stored per monitor, in the order they were written (by id), read straight from the database. */
async function storedChecks(url: string): Promise<Map<number, number[]>> {
  const store = await openPostgresStore(url, { poolSize: 1 });
  try {
    const rows = await store.db.selectFrom("checks").select(["monitor_id", "checked_at"]).orderBy("id").execute();
    const out = new Map<number, number[]>();
    for (const r of rows) (out.get(r.monitor_id) ?? out.set(r.monitor_id, []).get(r.monitor_id)!).push(r.checked_at);
    return out;
  } finally {
    await store.close();
  }
}

/** Keeps calling `fn` until stopped, one call at a time; returns every answer (a call that threw fails the test at stop). */
function loop<T>(fn: () => Promise<T>): { stop(): Promise<T[]> } {
  const seen: T[] = [];
  let running = true;
  const done = (async () => {
    for (let i = 0; running && i < 100_000; i++) {
      seen.push(await fn());
      await Bun.sleep(20);
    }
  })();
  done.catch(() => {}); // reported by stop()
  return {
    async stop() {
      running = false;
      await done;
      return seen;
    },
  };
}

// PostgreSQL only (see the comment at the top); a cluster of its own, since the test stops it
describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("PostgreSQL outage tests"))("PostgreSQL unreachable", () => {
  let pg: PostgresServer;
  let target: HttpTarget;

  beforeAll(async () => {
    pg = (await startPostgres())!;
    target = await startHttpTarget({ "/ok": () => new Response("fine") });
  });
  afterAll(async () => {
    await target?.close();
    await pg?.stop();
  });

  const checksAt = (m: number) => target.requests.filter((r) => r.path === `/ok?m=${m}`).length;

  test("API 503 with Retry-After, /readyz not ready, checks held in memory; all resumes and every check is stored", async () => {
    const url = await pg.createDatabase();
    const s = await startTestServer(["--database-url", url, "--metrics-public", "--rate-limit", "pro=1000000,enterprise=1000000"]);
    const ids: number[] = [];
    let reads: ReturnType<typeof loop<ApiResult>> | null = null;
    let writes: ReturnType<typeof loop<ApiResult>> | null = null;
    try {
      for (let m = 0; m < MONITORS; m++) {
        const r = await s.api("POST", "/api/v1/monitors", { name: `web ${m}`, monitor_type: "http", target: `${target.url}/ok?m=${m}`, interval_sec: 10, timeout_ms: 2000 });
        expect(r.status).toBe(201);
        ids.push(Number(r.json.data.id));
      }
      expect(await waitFor(async () => (await s.api("GET", "/api/v1/monitors?per_page=100")).json.data.every((m: any) => m.attributes.last_checked_at !== null), { timeoutMs: 20_000 })).toBe(true);

      let created = 0;
      reads = loop(() => s.api("GET", `/api/v1/monitors/${ids[0]}`));
      writes = loop(() => s.api("POST", "/api/v1/monitors", { name: `during ${created++}`, monitor_type: "http", target: `${target.url}/ok?m=x`, interval_sec: 60, timeout_ms: 1000, is_paused: true }));

      const hitsBefore = target.requests.length;
      await pg.stopServer();
      // the outage is seen everywhere: API answers, readiness, checks held in memory
      const refused = await waitFor(async () => {
        const r = await s.api("GET", "/api/v1/monitors");
        return r.status === 503 ? r : null;
      });
      expect(refused).not.toBeNull();
      expect(refused!.json.error.code).toBe("storage_unavailable");
      expect(refused!.headers.get("retry-after")).toBe("5");
      // the dashboard too: a wait, not a failure
      const page = await fetch(`${s.url}/`, { redirect: "manual" });
      expect(page.status).toBe(503);
      expect(page.headers.get("retry-after")).toBe("5");
      const ready = await fetch(`${s.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as any).status).toBe("not_ready");
      expect(await waitFor(async () => (await metric(s, "vigil_check_results_held")) >= 3, { timeoutMs: 30_000 })).toBe(true);
      // the checks kept running: the target was asked while the database was away
      expect(target.requests.length).toBeGreaterThan(hitsBefore);

      await pg.startServer();
      // back without a restart: the pool reconnects, held results are written
      expect(await waitFor(async () => (await s.api("GET", "/api/v1/monitors")).status === 200, { timeoutMs: 30_000 })).toBe(true);
      expect(await waitFor(async () => (await fetch(`${s.url}/readyz`)).status === 200, { timeoutMs: 30_000 })).toBe(true);
      expect(await waitFor(async () => (await metric(s, "vigil_check_results_held")) === 0, { timeoutMs: 30_000 })).toBe(true);
      expect(await metric(s, "vigil_check_results_dropped_total")).toBe(0);
      expect(s.logs.some((l) => l.msg === "the database is back: held check results written")).toBe(true);
      // the API writes again
      const written = await writes.stop();
      expect(written.at(-1)!.status).toBe(201);
      const answers = [...(await reads.stop()), ...written];
      // never a 500: an answer is the data, or 503 storage_unavailable with Retry-After
      for (const a of answers) {
        expect([200, 201, 503]).toContain(a.status);
        if (a.status === 503) {
          expect(a.json.error.code).toBe("storage_unavailable");
          expect(a.headers.get("retry-after")).toBe("5");
        }
      }
      expect(answers.some((a) => a.status === 503)).toBe(true);
      expect(s.logs.filter((l) => l.msg === "unexpected failure")).toEqual([]);
    } finally {
      await Promise.allSettled([reads?.stop(), writes?.stop()]);
      await pg.startServer(); // when an assertion failed during the outage
      // a graceful stop waits for checks in flight and writes their results
      await s.stop();
    }
    // every check the target answered, before, during and after the outage, is in the database,
    // and each monitor's were written in the order they were taken
    const stored = await storedChecks(url);
    for (let m = 0; m < MONITORS; m++) {
      const times = stored.get(ids[m]!) ?? [];
      expect({ monitor: m, stored: times.length }).toEqual({ monitor: m, stored: checksAt(m) });
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
  }, 120_000);

  test("past the bound, the oldest held results are dropped, counted and logged", async () => {
    const url = await pg.createDatabase();
    const s = await startTestServer(["--database-url", url, "--metrics-public"], { heldResultsLimit: 2 });
    try {
      for (let m = 0; m < MONITORS; m++) {
        expect((await s.api("POST", "/api/v1/monitors", { name: `web ${m}`, monitor_type: "http", target: `${target.url}/ok?b=${m}`, interval_sec: 10, timeout_ms: 2000 })).status).toBe(201);
      }
      await pg.stopServer();
      try {
        expect(await waitFor(async () => (await metric(s, "vigil_check_results_dropped_total")) >= 1, { timeoutMs: 30_000 })).toBe(true);
        expect(await metric(s, "vigil_check_results_held")).toBeLessThanOrEqual(2);
        expect(s.logs.some((l) => l.msg === "check results dropped: more were held than the bound while the database could not be reached" && l.level === "error")).toBe(true);
        // the per-monitor series (README "Per-monitor metrics") cannot be read: left out, the rest is served
        const res = await fetch(`${s.url}/metrics`);
        expect(res.status).toBe(200);
        expect(await res.text()).not.toContain("vigil_monitor_status");
      } finally {
        await pg.startServer();
      }
      expect(await waitFor(async () => (await metric(s, "vigil_check_results_held")) === 0, { timeoutMs: 30_000 })).toBe(true);
      const back = await (await fetch(`${s.url}/metrics`)).text();
      expect(back.split("\n").filter((l) => l.startsWith("vigil_monitor_status{")).length).toBe(MONITORS);
    } finally {
      await s.stop();
    }
  }, 120_000);

  test("pings answer 503 while the database is away, never 200 for a ping not stored; every acknowledged ping is stored", async () => {
    const url = await pg.createDatabase();
    const s = await startTestServer(["--database-url", url, "--metrics-public", "--ping-limit-token", "1000000", "--ping-limit-ip", "1000000"]);
    let monitorId = 0;
    const acknowledged: number[] = [];
    let refused = 0;
    let pings: ReturnType<typeof loop<{ status: number; retryAfter: string | null; body: any }>> | null = null;
    try {
      const created = await s.api("POST", "/api/v1/monitors", { name: "job", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000 });
      expect(created.status).toBe(201);
      monitorId = Number(created.json.data.id);
      const token = created.json.data.attributes.heartbeat_token;
      pings = loop(async () => {
        const res = await fetch(`${s.url}/h/${token}`);
        const body = (await res.json()) as any;
        if (res.status === 200) acknowledged.push(Date.now());
        if (res.status === 503) refused++;
        return { status: res.status, retryAfter: res.headers.get("retry-after"), body };
      });
      expect(await waitFor(() => acknowledged.length >= 5)).toBe(true);
      await pg.stopServer();
      const before = acknowledged.length;
      // pings keep being sent while the database is away, and are refused
      expect(await waitFor(() => refused >= 3, { timeoutMs: 30_000 })).toBe(true);
      await pg.startServer();
      expect(await waitFor(() => acknowledged.length >= before + 5, { timeoutMs: 30_000 })).toBe(true);
      const answers = await pings.stop();
      for (const a of answers) {
        expect([200, 201, 503]).toContain(a.status);
        if (a.status === 200) expect(a.body.result).toBe("accepted");
        else {
          expect(a.body.error.code).toBe("storage_unavailable");
          expect(a.retryAfter).toBe("5");
        }
      }
      expect(answers.some((a) => a.status === 503)).toBe(true);
    } finally {
      await pings?.stop().catch(() => {});
      await pg.startServer();
      await s.stop();
    }
    // every 200 is a ping in the database; nothing refused is
    const store = await openPostgresStore(url, { poolSize: 1 });
    try {
      const stored = await store.db.selectFrom("monitor_events").select((eb) => eb.fn.countAll<number>().as("n")).where("monitor_id", "=", monitorId).where("kind", "=", "ping").executeTakeFirstOrThrow();
      expect(Number(stored.n)).toBe(acknowledged.length);
    } finally {
      await store.close();
    }
  });
});
