/**
 * `vigil backup FILE` and `vigil restore FILE` on PostgreSQL (README, "Backup and restore"): a backup
 * of a PostgreSQL database is the same SQLite file as SQLite's, read from one snapshot while a server
 * and a writer keep writing; it restores on SQLite (`--data`) and into an empty PostgreSQL database
 * (`--database-url`), and so does an SQLite backup with the pings it carries; a server on each copy
 * answers as the original did. A restore never writes into a database that holds data.
 *
 * Runs in the PostgreSQL run (`npm run test:postgres`), on the run's cluster; SQLite's own backup
 * and restore are test/ops/backup.test.ts.
 */
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/store/database.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";
import { postgresAvailable } from "../helpers/postgres.ts";
import { apiSnapshot } from "../helpers/api-snapshot.ts";
import { runVigil, spawnServer, type ChildServer } from "../helpers/process.ts";
import { apiClient, tempDir } from "../helpers/server.ts";

/** `--database-url ""`: on SQLite under --data, whatever the suite's engine */
const ON_SQLITE = ["--database-url", ""];

const dirs: string[] = [];
const fresh = (prefix = "vigil-pgbackup-") => {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const newDatabase = async () => (await testCluster()).createDatabase();
const tokenOf = (dataDir: string) => readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim();

/** Monitors, checks, an incident and a status page through the API of `s`. */
async function fill(s: ChildServer, token: string): Promise<void> {
  const api = apiClient(s.url, token);
  const ids: number[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await api("POST", "/api/v1/monitors", { name: `web ${i}`, monitor_type: "http", target: `http://127.0.0.1:9/${i}`, interval_sec: 60, timeout_ms: 1000, is_paused: true, api_auth_type: "bearer", api_auth_bearer_token: `secret-${i}` });
    expect(r.status).toBe(201);
    ids.push(Number(r.json.data.id));
  }
  const hb = await api("POST", "/api/v1/monitors", { name: "job", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000, is_paused: true });
  ids.push(Number(hb.json.data.id));
  expect((await api("POST", "/api/v1/status-pages", { name: "Ours", slug: "ours", monitor_ids: ids })).status).toBe(201);
  expect((await api("POST", "/api/v1/notification-channels", { name: "hook", channel_type: "webhook", url: "http://127.0.0.1:9/hook", secret: "s" })).status).toBe(201);
  expect((await api("POST", "/api/v1/maintenance-windows", { name: "Move", monitor_ids: ids, starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T04:00:00Z" })).status).toBe(201);
}

describe.skipIf(TEST_ENGINE !== "postgres" || !postgresAvailable("PostgreSQL backup tests"))("backup and restore on PostgreSQL", () => {
  test("a backup while a server and a writer keep writing is one consistent snapshot, in SQLite's format", async () => {
    const url = await newDatabase();
    const data = fresh();
    const server = await spawnServer(["--data", data, "--database-url", url]);
    const file = join(fresh(), "snap.db");
    const writer = new SQL({ url, max: 1 });
    try {
      // accounts inserted one after another while the backup runs: the copy must hold a prefix of them
      let written = 0;
      let stop = false;
      const loop = (async () => {
        while (!stop && written < 3000) {
          await writer`INSERT INTO accounts (name, plan, created_at) VALUES (${`acct-${written}`}, 'pro', ${Date.now()})`;
          written++;
        }
      })();
      await Bun.sleep(50);
      const r = await runVigil(["backup", file, "--database-url", url]);
      stop = true;
      await loop;
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: expect.stringContaining("accounts:") });
      expect(r.stdout).toContain(`written to ${file}`);
      expect(r.stdout).toContain("from one snapshot");
      expect(existsSync(`${file}.partial`)).toBe(false);

      const copy = new Database(file, { readonly: true });
      expect((copy.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
      // SQLite's own schema, every index and trigger included, at this build's version
      const schemaOf = (db: Database) => db.query("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
      const reference = openStore(fresh());
      expect(schemaOf(copy)).toEqual(schemaOf(reference.sqlite));
      expect(copy.query("PRAGMA user_version").get()).toEqual(reference.sqlite.query("PRAGMA user_version").get());
      await reference.close();
      const names = (copy.query("SELECT name FROM accounts ORDER BY id").all() as { name: string }[]).map((a) => a.name);
      copy.close();
      expect(names[0]).toBe("default");
      expect(names.length).toBeGreaterThan(1);
      names.slice(1).forEach((n, i) => expect(n).toBe(`acct-${i}`));
      // never over an existing file
      const twice = await runVigil(["backup", file, "--database-url", url]);
      expect(twice.code).toBe(1);
      expect(twice.stderr).toContain("already exists");
    } finally {
      await writer.close();
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);

  test("a PostgreSQL backup restores on SQLite and into an empty PostgreSQL database; both answer as the original", async () => {
    const url = await newDatabase();
    const data = fresh();
    const file = join(fresh(), "pg.db");
    let original: Record<string, unknown>;
    const token = await (async () => {
      const s = await spawnServer(["--data", data, "--database-url", url]);
      try {
        const t = tokenOf(data);
        await fill(s, t);
        original = await apiSnapshot(s.url, t, "ours");
        const r = await runVigil(["backup", file, "--database-url", url]);
        expect(r.code).toBe(0);
        return t;
      } finally {
        expect(await s.stop()).toBe(0);
      }
    })();

    // on SQLite: the data directory of a new instance, with the original's key for the secrets
    const onSqlite = fresh();
    expect((await runVigil(["restore", file, "--data", onSqlite, ...ON_SQLITE])).code).toBe(0);
    const env = { VIGIL_SECRET_KEY: readFileSync(join(data, "secret.key"), "utf8").trim() };
    const a = await spawnServer(["--data", onSqlite, ...ON_SQLITE], { env });
    try {
      expect(await apiSnapshot(a.url, token, "ours")).toEqual(original!);
    } finally {
      expect(await a.stop()).toBe(0);
    }

    // into an empty PostgreSQL database
    const restored = await newDatabase();
    const r = await runVigil(["restore", file, "--database-url", restored]);
    expect({ code: r.code, out: r.stdout }).toEqual({ code: 0, out: expect.stringContaining("the row counts of every table match") });
    const b = await spawnServer(["--data", fresh(), "--database-url", restored], { env });
    try {
      expect(await apiSnapshot(b.url, token, "ours")).toEqual(original!);
    } finally {
      expect(await b.stop()).toBe(0);
    }

    // never into a database in use: the original is refused, and left as it was
    const refused = await runVigil(["restore", file, "--database-url", url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("already holds Vigil data");
    expect(refused.stderr).toContain("nothing was written");
  }, 90_000);

  test("an SQLite backup restores into PostgreSQL with the pings it carried", async () => {
    const data = fresh();
    const file = join(fresh(), "sqlite.db");
    const s = await spawnServer(["--data", data, ...ON_SQLITE]);
    const token = tokenOf(data);
    const api = apiClient(s.url, token);
    let id: string;
    let original: Record<string, unknown>;
    try {
      await fill(s, token);
      const hb = await api("POST", "/api/v1/monitors", { name: "nightly", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000 });
      id = hb.json.data.id;
      for (let i = 0; i < 4; i++) expect(((await (await fetch(`${s.url}/h/${hb.json.data.attributes.heartbeat_token}`)).json()) as any).result).toBe("accepted");
      const r = await runVigil(["backup", file, "--data", data, ...ON_SQLITE]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/\d+ acknowledged pings not yet folded carried along/);
      original = await apiSnapshot(s.url, token, "ours");
    } finally {
      expect(await s.stop()).toBe(0);
    }
    const url = await newDatabase();
    const r = await runVigil(["restore", file, "--database-url", url, "--region", "local"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/folded \d+ journaled pings/);
    const b = await spawnServer(["--data", fresh(), "--database-url", url], { env: { VIGIL_SECRET_KEY: readFileSync(join(data, "secret.key"), "utf8").trim() } });
    try {
      const after = await apiSnapshot(b.url, token, "ours");
      const events = (after[`/api/v1/monitors/${id!}/events?per_page=100`] as { data: { attributes: { kind: string } }[] }).data;
      expect(events.filter((e) => e.attributes.kind === "ping").length).toBe(4);
      expect(after).toEqual(original!);
    } finally {
      expect(await b.stop()).toBe(0);
    }
    // the backup file itself was only read
    const copy = new Database(file, { readonly: true });
    expect((copy.query("SELECT count(*) AS n FROM ping_journal").get() as { n: number }).n).toBeGreaterThan(0);
    copy.close();
  }, 90_000);
});
