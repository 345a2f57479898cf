/**
 * `vigil migrate --from DATA_DIR --to postgres://…` (README, "Moving to PostgreSQL"): a real SQLite
 * instance filled through the API (monitors of every type with secrets, checks packed into blocks by
 * maintenance, incidents, delivered alerts, a status page, users, tokens, heartbeat pings a killed
 * server left in its journal) is copied into an empty PostgreSQL database; a `vigil serve
 * --database-url` on the copy answers every list and detail endpoint as the SQLite instance did, its
 * tokens and logins work, and its stored secrets open with the same key.
 *
 * Runs in the PostgreSQL run (`npm run test:postgres`), on the run's cluster: the source instance
 * is on SQLite whatever the suite's engine (an empty --database-url).
 */
import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { copyFileSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createUser } from "../../src/auth/users.ts";
import { emptyResult } from "../../src/domain/check-result.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { findAccountByName } from "../../src/store/accounts.ts";
import { insertCheck } from "../../src/store/checks.ts";
import { openStore } from "../../src/store/database.ts";
import { getKv, putKv } from "../../src/store/kv.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { postgresAvailable } from "../helpers/postgres.ts";
import { runVigil, spawnServer } from "../helpers/process.ts";
import { apiSnapshot as snapshot } from "../helpers/api-snapshot.ts";
import { apiClient, makeAccount, startTestServer, startupMaintenanceDone, tempDir, waitFor } from "../helpers/server.ts";
import { startHttpTarget } from "../helpers/targets.ts";
import { PASSWORD, WebClient } from "../web/helpers.ts";

/** `--database-url ""`: this instance is on SQLite under --data, whatever the suite's engine */
const ON_SQLITE = ["--database-url", ""];
const DAY = 86_400_000;

const dirs: string[] = [];
const fresh = (prefix: string) => {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("migrate tests"))("vigil migrate", () => {
  test("an SQLite instance moves to PostgreSQL whole: same answers, tokens, logins and secrets", async () => {
    const data = fresh("vigil-migrate-src-");
    const target = await startHttpTarget({ "/ok": () => new Response("fine") });
    const hooks = await startHttpTarget({ "/hook": () => new Response("ok") });
    const bearer = "bearer-secret-1234";
    const basicPass = "basic-secret-5678";
    const apiKey = "apikey-secret-9012";
    const hookSecret = "hook-secret-3456";
    let other: { token: string };
    let hb: { id: string; token: string };
    let webIds: string[] = [];
    let deletedId = 0;
    const slug = "moving-day";

    // 1. an SQLite instance, filled through the API (and old checks written as the engine writes them)
    const s = await startTestServer(ON_SQLITE, { dataDir: data });
    try {
      expect(s.ctx.store.engine).toBe("sqlite");
      other = await makeAccount(s.ctx, "second", "pro");
      const channel = await s.api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: `${hooks.url}/hook`, secret: hookSecret });
      expect(channel.status).toBe(201);
      const ch = channel.json.data.id;
      const paused = { interval_sec: 60, timeout_ms: 2000, is_paused: true };
      const created: Record<string, unknown>[] = [
        { name: "bearer web", monitor_type: "http", target: `${target.url}/ok?auth=bearer`, api_auth_type: "bearer", api_auth_bearer_token: bearer, notification_channel_ids: [Number(ch)], ...paused },
        { name: "basic web", monitor_type: "http", target: `${target.url}/ok?auth=basic`, api_auth_type: "basic", api_auth_basic_user: "bob", api_auth_basic_pass: basicPass, ...paused },
        { name: "key web", monitor_type: "http", target: `${target.url}/ok?auth=key`, api_auth_type: "api_key", api_auth_api_key_header: "X-Key", api_auth_api_key_value: apiKey, ...paused },
        { name: "db", monitor_type: "tcp", target: "127.0.0.1:5432", ...paused },
        { name: "resolver", monitor_type: "dns", target: "localhost", ...paused },
        { name: "cert", monitor_type: "ssl", target: "127.0.0.1:443", ...paused, interval_sec: 3600 },
        { name: "icmp", monitor_type: "ping", target: "127.0.0.1", ...paused },
      ];
      const ids: string[] = [];
      for (const attrs of created) {
        const r = await s.api("POST", "/api/v1/monitors", attrs);
        expect({ name: attrs.name, status: r.status }).toEqual({ name: attrs.name, status: 201 });
        ids.push(r.json.data.id);
      }
      webIds = ids.slice(0, 3);
      // checks older than the packing grace, then maintenance packs them into blocks; after the
      // start-up run, which would otherwise pack some of them first when it starts late
      expect(await startupMaintenanceDone(s)).toBe(true);
      const now = Date.now();
      for (let k = 0; k < 40; k++) {
        const at = now - 2 * DAY + k * 5 * 60_000;
        await insertCheck(s.ctx.db, Number(ids[0]), k % 3 ? "local" : "eu", { ...emptyResult(at), status: k % 7 ? "up" : "down", latency_ms: 10 + k, http_code: k % 7 ? 200 : 503 });
      }
      expect((await runMaintenance(s.ctx)).checksPacked).toBeGreaterThan(0);
      // and recent checks, as rows
      for (let k = 0; k < 5; k++) await insertCheck(s.ctx.db, Number(ids[1]), "local", { ...emptyResult(now - k * 60_000), status: "up", latency_ms: 5 + k, http_code: 200 });
      // a heartbeat that goes down and up again: an incident, resolved, and two alerts delivered
      const hbRes = await s.api("POST", "/api/v1/monitors", { name: "nightly", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000, notification_channel_ids: [Number(ch)] });
      hb = { id: hbRes.json.data.id, token: hbRes.json.data.attributes.heartbeat_token };
      for (const path of ["", "/fail", ""]) expect((await fetch(`${s.url}/h/${hb.token}${path}`, { method: "POST", body: path ? "disk full" : undefined })).status).toBe(200);
      expect(await waitFor(() => hooks.requests.length >= 2)).toBe(true);
      // another that stays down: an open incident, with a parent, and its reminder and escalation due
      const alerting = { depends_on_ids: [Number(hb.id)], alert_repeat_minutes: 5, escalation_channel_ids: [Number(ch)], escalate_after_minutes: 60 };
      const down = await s.api("POST", "/api/v1/monitors", { name: "weekly", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000, ...alerting });
      for (const path of ["", "/fail"]) expect((await fetch(`${s.url}/h/${down.json.data.attributes.heartbeat_token}${path}`)).status).toBe(200);
      const page = await s.api("POST", "/api/v1/status-pages", { name: "Moving day", slug, monitor_ids: [ids[0], ids[1], hb.id].map(Number) });
      expect(page.status).toBe(201);
      const window = await s.api("POST", "/api/v1/maintenance-windows", { name: "Move", monitor_ids: [ids[0], hb.id].map(Number), starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T04:00:00Z" });
      expect(window.status).toBe(201);
      // a group, tags, and an update written on the page
      const group = await s.api("POST", "/api/v1/groups", { name: "Web", sort_order: 2 });
      expect((await s.api("PATCH", `/api/v1/monitors/${ids[0]}`, { group_id: Number(group.json.data.id), tags: ["env:prod", "team/web"] })).status).toBe(200);
      expect((await s.api("POST", `/api/v1/status-pages/${page.json.data.id}/updates`, { title: "Moving", kind: "maintenance", body: "To PostgreSQL", affected_monitor_ids: [Number(ids[0])] })).status).toBe(201);
      // the newest monitor deleted: SQLite never hands its id out again, nor must PostgreSQL
      const gone = await s.api("POST", "/api/v1/monitors", { name: "gone", monitor_type: "tcp", target: "127.0.0.1:1", ...paused });
      deletedId = Number(gone.json.data.id);
      expect((await s.api("DELETE", `/api/v1/monitors/${deletedId}`)).status).toBe(200);
      const account = await findAccountByName(s.ctx.db, "default");
      await createUser(s.ctx.db, { accountId: account!.id, username: "alice", password: PASSWORD, now });
      expect(await waitFor(async () => (await s.api("GET", "/api/v1/incidents")).json.data.length === 2)).toBe(true);
    } finally {
      await s.stop();
    }
    const sqlite = new Database(join(data, "vigil.db"), { readonly: true });
    expect((sqlite.query("SELECT count(*) AS n FROM check_blocks").get() as { n: number }).n).toBeGreaterThan(0);
    expect((sqlite.query("SELECT count(*) AS n FROM incident_followups").get() as { n: number }).n).toBe(2);
    expect((sqlite.query("SELECT count(*) AS n FROM alerts WHERE status = 'delivered'").get() as { n: number }).n).toBe(2);
    sqlite.close();

    // 2. pings acknowledged and journaled; migrate is refused while the server holds the directory;
    // then the server is killed before it folds the pings
    const url = await (await testCluster()).createDatabase();
    const killed = await spawnServer(["--data", data, ...ON_SQLITE]);
    try {
      for (let i = 0; i < 3; i++) expect(((await (await fetch(`${killed.url}/h/${hb.token}`)).json()) as any).result).toBe("accepted");
      const refused = await runVigil(["migrate", "--from", data, "--to", url]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("stop it before migrating");
    } finally {
      killed.proc.kill("SIGKILL");
      await killed.proc.exited;
    }

    // 3. migrate
    const migrated = await runVigil(["migrate", "--from", data, "--to", url]);
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: expect.stringContaining("checks:") });
    // (the first ping after a start may be written directly; the rest wait in the journal)
    expect(Number(/folded (\d+) journaled pings/.exec(migrated.stdout)?.[1])).toBeGreaterThanOrEqual(2);
    expect(migrated.stdout).toContain("the row counts of every table match");
    expect(migrated.stdout).toContain(join(data, "secret.key"));
    expect(migrated.stderr).toMatch(/check_blocks: \d+ rows?/);
    // a second run finds the database taken
    const again = await runVigil(["migrate", "--from", data, "--to", url]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already holds Vigil data");

    // identity counters past the copied ids: a new row gets the next id, never a taken one
    const pgStore = await openPostgresStore(url, { poolSize: 1 });
    try {
      const max = await pgStore.db.selectFrom("monitors").select((eb) => eb.fn.max<number>("id").as("m")).executeTakeFirstOrThrow();
      const next = (await pgStore.sql`SELECT nextval(pg_get_serial_sequence('monitors', 'id')) AS n`) as { n: bigint }[];
      expect(Number(next[0]!.n)).toBeGreaterThan(Number(max.m));
      expect(Number(next[0]!.n)).toBeGreaterThan(deletedId);
      expect(deletedId).toBeGreaterThan(Number(max.m));
      // planner statistics and the visibility map from the start, not once autovacuum comes round
      const stats = (await pgStore.sql`SELECT relname, last_vacuum, last_analyze FROM pg_stat_user_tables WHERE relname IN ('monitors', 'checks', 'monitor_events')`) as { relname: string; last_vacuum: Date | null; last_analyze: Date | null }[];
      expect(stats.map((r) => [r.relname, r.last_vacuum !== null, r.last_analyze !== null]).sort()).toEqual([["checks", true, true], ["monitor_events", true, true], ["monitors", true, true]]);
    } finally {
      await pgStore.close();
    }

    // 4. the same answers from SQLite (restarted on the migrated directory) and from PostgreSQL
    const token = readFileSync(join(data, "bootstrap-token"), "utf8").trim();
    const onSqlite = await spawnServer(["--data", data, ...ON_SQLITE]);
    let before: Record<string, unknown>;
    let beforeOther: Record<string, unknown>;
    try {
      before = await snapshot(onSqlite.url, token, slug);
      beforeOther = (await apiClient(onSqlite.url, other!.token)("GET", "/api/v1/monitors")).json.data;
    } finally {
      expect(await onSqlite.stop()).toBe(0);
    }
    // the key travels apart from the database, as the output says: here as secret.key in --data
    const pgData = fresh("vigil-migrate-pg-");
    mkdirSync(pgData, { recursive: true });
    copyFileSync(join(data, "secret.key"), join(pgData, "secret.key"));
    const onPostgres = await spawnServer(["--data", pgData, "--database-url", url]);
    try {
      const after = await snapshot(onPostgres.url, token, slug);
      for (const path of Object.keys(before)) expect({ path, body: after[path] }).toEqual({ path, body: before[path] });
      expect(Object.keys(after)).toEqual(Object.keys(before));
      // the pings the killed server journaled are there: 1 + 2 before it, 3 journaled
      const events = (after[`/api/v1/monitors/${hb.id}/events?per_page=100`] as { data: { attributes: { kind: string } }[] }).data;
      expect(events.filter((e) => e.attributes.kind === "ping").length).toBe(5);
      // the other account's token, and no more than its own monitors
      const otherApi = apiClient(onPostgres.url, other!.token);
      expect((await otherApi("GET", "/api/v1/monitors")).json.data).toEqual(beforeOther);
      expect((await apiClient(onPostgres.url, "not-a-token")("GET", "/api/v1/monitors")).status).toBe(401);
      // a dashboard login
      const web = new WebClient(onPostgres.url);
      await web.get("/login");
      expect((await web.post("/login", { username: "alice", password: PASSWORD, next: "/" })).res.status).toBe(303);
      expect((await web.get("/")).res.status).toBe(200);
      // stored secrets open: the checks send them, the webhook signs with its secret
      const api = apiClient(onPostgres.url, token);
      for (const id of webIds) expect((await api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false })).status).toBe(200);
      const sent = (auth: string) => target.requests.find((r) => r.path === `/ok?auth=${auth}`);
      expect(await waitFor(() => sent("bearer") && sent("basic") && sent("key"), { timeoutMs: 15_000 })).toBeTruthy();
      expect(sent("bearer")!.headers.authorization).toBe(`Bearer ${bearer}`);
      expect(sent("basic")!.headers.authorization).toBe(`Basic ${Buffer.from(`bob:${basicPass}`).toString("base64")}`);
      expect(sent("key")!.headers["x-key"]).toBe(apiKey);
      const channelId = (await api("GET", "/api/v1/notification-channels")).json.data[0].id;
      const hooksBefore = hooks.requests.length;
      expect((await api("POST", `/api/v1/notification-channels/${channelId}/test`)).status).toBe(200);
      expect(await waitFor(() => hooks.requests.length > hooksBefore)).toBe(true);
      const testSend = hooks.requests.at(-1)!;
      expect(testSend.headers["x-vigil-signature"]).toBe("sha256=" + createHmac("sha256", hookSecret).update(testSend.body).digest("hex"));
    } finally {
      expect(await onPostgres.stop()).toBe(0);
      await target.close();
      await hooks.close();
    }
  }, 120_000);

  test("refuses what it cannot copy: no database in --from, a URL that is not postgres://", async () => {
    const empty = fresh("vigil-migrate-empty-");
    const url = await (await testCluster()).createDatabase();
    const none = await runVigil(["migrate", "--from", empty, "--to", url]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no Vigil database");
    const usage = await runVigil(["migrate", "--from", empty, "--to", "mysql://x@y/z"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--to must be a postgres:// URL");
    expect((await runVigil(["migrate", "--to", url])).code).toBe(2);
  });

  test("text PostgreSQL cannot hold (NUL) is written with U+FFFD and said; differing counts fail the run and name the table", async () => {
    const data = fresh("vigil-migrate-kv-");
    const store = openStore(data);
    await putKv(store.db, "note", "before\0after");
    await store.close();
    const url = await (await testCluster()).createDatabase();
    const r = await runVigil(["migrate", "--from", data, "--to", url]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("1 text values held NUL characters");
    const pg = await openPostgresStore(url, { poolSize: 1 });
    try {
      expect(await getKv(pg.db, "note")).toBe("before\uFFFDafter");
    } finally {
      await pg.close();
    }

    // a target that loses rows (here a trigger someone left in it): the counts tell, exit 1
    const lossy = await (await testCluster()).createDatabase();
    const target = await openPostgresStore(lossy, { poolSize: 1 });
    try {
      await target.sql.unsafe(`CREATE FUNCTION lose_kv() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM kv WHERE key = NEW.key; RETURN NULL; END $$;
        CREATE TRIGGER lose_kv AFTER INSERT ON kv FOR EACH ROW EXECUTE FUNCTION lose_kv()`);
    } finally {
      await target.close();
    }
    const lost = await runVigil(["migrate", "--from", data, "--to", lossy]);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toMatch(/the row counts differ after the copy:\n {2}kv: \d+ rows in SQLite, 0 in PostgreSQL/);
    expect(lost.stdout).not.toContain("row counts of every table match");
  });
});
