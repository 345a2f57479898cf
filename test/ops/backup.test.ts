import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { backupDatabase, restoreDatabase } from "../../src/store/backup.ts";
import { openStore } from "../../src/store/database.ts";
import { JOURNAL_DIR, openPingJournal, readJournalBatches } from "../../src/store/ping-journal-file.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { runVigil, spawnServer } from "../helpers/process.ts";
import { tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
const fresh = () => {
  const d = tempDir("vigil-ops-");
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

// SQLite's backup (VACUUM INTO, the ping journal's files): PostgreSQL's counterpart is
// test/ops/backup-postgres.test.ts
describe.skipIf(TEST_ENGINE === "postgres")("on SQLite", () => {
  test("backup while serving and writing; restore refused while serving; restore brings the copy back", async () => {
    const data = fresh();
    const out = fresh();
    const server = await spawnServer(["--data", data]);
    const backupFile = join(out, "snap.db");
    try {
      // A writer in this process keeps inserting while the backup runs: the copy must be consistent.
      const writer = new Database(join(data, "vigil.db"));
      writer.exec("PRAGMA busy_timeout = 5000");
      let written = 0;
      let stop = false;
      const loop = (async () => {
        while (!stop && written < 5000) {
          writer.query("INSERT INTO accounts (name, plan, created_at) VALUES (?, 'pro', ?)").run(`acct-${written}`, Date.now());
          written++;
          if (written % 50 === 0) await Bun.sleep(0);
        }
      })();
      await Bun.sleep(20);
      const r = await runVigil(["backup", backupFile, "--data", data]);
      stop = true;
      await loop;
      writer.close();
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("backup written");

      const copy = new Database(backupFile, { readonly: true });
      expect((copy.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
      const names = (copy.query("SELECT name FROM accounts ORDER BY id").all() as { name: string }[]).map((a) => a.name);
      copy.close();
      // a prefix of the writer's sequence, plus the bootstrap account: consistent, no torn state
      expect(names[0]).toBe("default");
      names.slice(1).forEach((n, i) => expect(n).toBe(`acct-${i}`));

      const refused = await runVigil(["restore", backupFile, "--data", data]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain("stop it before restoring");
      expect((await runVigil(["backup", backupFile, "--data", data])).code).toBe(1); // never overwrites
    } finally {
      expect(await server.stop()).toBe(0);
    }

    const restored = await runVigil(["restore", backupFile, "--data", data]);
    expect(restored.code).toBe(0);
    expect(readdirSync(data).some((f) => f.startsWith("vigil.db.before-restore-"))).toBe(true);
    const db = new Database(join(data, "vigil.db"), { readonly: true });
    const count = (db.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n;
    db.close();
    const snap = new Database(backupFile, { readonly: true });
    expect(count).toBe((snap.query("SELECT count(*) AS n FROM accounts").get() as { n: number }).n);
    snap.close();
    // and the restored directory serves again
    const again = await spawnServer(["--data", data]);
    expect(await again.stop()).toBe(0);
  });

  test("pings acknowledged but not yet folded are in a backup, and a server on the restored copy has them", async () => {
    const data = fresh();
    const out = fresh();
    const server = await spawnServer(["--data", data]);
    const backupFile = join(out, "snap.db");
    const token = readFileSync(join(data, "bootstrap-token"), "utf8").trim();
    const call = async (base: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
      return (await res.json()) as any;
    };
    let id: string;
    try {
      const created = await call(server.url, "POST", "/api/v1/monitors", { name: "nightly", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000 });
      id = created.data.id;
      const hb = created.data.attributes.heartbeat_token;
      // one ping written directly (unknown -> up), two journaled; the fold waits seconds, the backup does not
      for (let i = 0; i < 3; i++) expect(((await (await fetch(`${server.url}/h/${hb}`)).json()) as any).result).toBe("accepted");
      const r = await runVigil(["backup", backupFile, "--data", data]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("2 acknowledged pings not yet folded carried along");
      const copy = new Database(backupFile, { readonly: true });
      expect((copy.query("SELECT count(*) AS n FROM ping_journal WHERE monitor_id = ?").get(Number(id)) as { n: number }).n).toBe(2);
      copy.close();
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const target = fresh();
    expect((await runVigil(["restore", backupFile, "--data", target])).code).toBe(0);
    const again = await spawnServer(["--data", target]);
    try {
      const events = await call(again.url, "GET", `/api/v1/monitors/${id}/events?per_page=100`);
      expect(events.data.filter((e: any) => e.attributes.kind === "ping").length).toBe(3);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  }, 60_000);
});

test("restore refuses files that are not sound Vigil databases", async () => {
  const data = fresh();
  const junk = join(data, "junk.db");
  writeFileSync(junk, "this is not sqlite at all, just text padded out ".repeat(20));
  const r = await runVigil(["restore", junk, "--data", data]);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/not an SQLite database|cannot be read|not a Vigil database/);
  const other = join(data, "other.db");
  const db = new Database(other);
  db.exec("CREATE TABLE t(x)");
  db.close();
  const r2 = await runVigil(["restore", other, "--data", data]);
  expect(r2.code).toBe(1);
  expect(r2.stderr).toContain("not a Vigil database");
  expect(existsSync(join(data, "vigil.db"))).toBe(false);
});

test("a second server on the same data directory is refused", async () => {
  const data = fresh();
  const first = await spawnServer(["--data", data]);
  try {
    const second = await runVigil(["serve", "--data", data, "--port", "0", "--host", "127.0.0.1"]);
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("in use by another vigil process");
  } finally {
    await first.stop();
  }
});

test("restore sets the replaced database's ping journal aside, so a server on the copy never folds it", async () => {
  const data = fresh();
  const out = fresh();
  const store = openStore(data);
  await store.close();
  const snap = join(out, "snap.db");
  backupDatabase(data, snap);
  // pings the old database acknowledged after the backup: they belong to it, not to the copy
  const journal = openPingJournal(data);
  journal.append(1, [{ id: 1, monitorId: 1, at: 1_000, sourceIp: "10.0.0.1", durationMs: null, deadlineAt: 61_000 }]);
  journal.close();
  expect(readJournalBatches(data).length).toBe(1);
  restoreDatabase(data, snap, Date.parse("2026-11-23T12:00:00Z"));
  expect(readJournalBatches(data)).toEqual([]);
  const aside = readdirSync(data).find((f) => f.startsWith(`${JOURNAL_DIR}.before-restore-`));
  expect(aside).toBeDefined();
  expect(readdirSync(join(data, aside!)).length).toBe(1);
});
