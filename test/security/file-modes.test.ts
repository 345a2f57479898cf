/**
 * The data directory Vigil creates is 0700 and every file it writes there 0600 (database, WAL and
 * shared memory, ping journal segments, secret key, bootstrap token, lock), as are backups wherever
 * they go and before-restore copies (README "Security"). Checked on a real `vigil serve`, `vigil
 * backup` and `vigil restore`, and in this process under umask 022, where only the modes the code
 * sets protect the files.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { backupDatabase, restoreDatabase } from "../../src/store/backup.ts";
import { openPingJournal } from "../../src/store/ping-journal-file.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { runVigil, spawnServer } from "../helpers/process.ts";
import { startTestServer, tempDir } from "../helpers/server.ts";

const dirs: string[] = [];
const fresh = () => {
  const d = tempDir("vigil-modes-");
  dirs.push(d);
  return d;
};
let umask = 0;
beforeAll(() => {
  umask = process.umask(0o022); // a usual login umask: files would be 0644 unless the code says otherwise
});
afterAll(() => {
  process.umask(umask);
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);

/** Every path under `dir` with its mode, directories included. */
function modesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) out[name] = mode(join(dir, name));
  return out;
}

function expectPrivate(dir: string, mustHave: string[]) {
  const modes = modesUnder(dir);
  for (const name of mustHave) expect({ name, present: name in modes }).toEqual({ name, present: true });
  for (const [name, m] of Object.entries(modes)) expect({ name, mode: m }).toEqual({ name, mode: statSync(join(dir, name)).isDirectory() ? "700" : "600" });
}

/** Three pings: the first is written at once, the next two wait in the journal for the fold. */
async function pingThrice(url: string, token: string): Promise<void> {
  const res = await fetch(url + "/api/v1/monitors", {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "nightly", monitor_type: "heartbeat", interval_sec: 600, timeout_ms: 1000 }),
  });
  const hb = ((await res.json()) as { data: { attributes: { heartbeat_token: string } } }).data.attributes.heartbeat_token;
  for (let i = 0; i < 3; i++) expect(((await (await fetch(`${url}/h/${hb}`)).json()) as { result: string }).result).toBe("accepted");
}

// The first two are about SQLite's files in the data directory (the database, its WAL, the ping
// journal, backups of that directory); on PostgreSQL none of them is there, and the third holds the
// instance's own files to the same modes.
test.skipIf(TEST_ENGINE === "postgres")("vigil serve, backup and restore: a 0700 data directory, 0600 files, a 0600 backup", async () => {
  const data = join(fresh(), "new", "data");
  const out = fresh();
  const server = await spawnServer(["--data", data]);
  const backup = join(out, "snap.db");
  try {
    await pingThrice(server.url, readFileSync(join(data, "bootstrap-token"), "utf8").trim());
    expect(mode(data)).toBe("700");
    expect(mode(join(data, ".."))).toBe("700");
    const segments = readdirSync(join(data, "ping-journal")).map((f) => `ping-journal/${f}`);
    expect(segments.length).toBeGreaterThan(0);
    expectPrivate(data, ["vigil.db", "vigil.db-wal", "vigil.db-shm", "secret.key", "bootstrap-token", "serve.lock", "ping-journal", ...segments]);
    const r = await runVigil(["backup", backup, "--data", data]);
    expect(r.code).toBe(0);
    expect(mode(backup)).toBe("600");
  } finally {
    expect(await server.stop()).toBe(0);
  }
  expect((await runVigil(["restore", backup, "--data", data])).code).toBe(0);
  const kept = readdirSync(data).filter((f) => f.includes("before-restore"));
  expect(kept.some((f) => f.startsWith("vigil.db.before-restore-"))).toBe(true);
  expectPrivate(data, ["vigil.db", ...kept]);
}, 60_000);

test.skipIf(TEST_ENGINE === "postgres")("without the CLI's umask: the store, the journal, backups and restores still write 0700 and 0600", async () => {
  const data = join(fresh(), "data");
  const s = await startTestServer([], { dataDir: data });
  try {
    await pingThrice(s.url, s.token);
    expect(mode(data)).toBe("700");
    expectPrivate(data, ["vigil.db", "vigil.db-wal", "vigil.db-shm", "secret.key", "bootstrap-token", "serve.lock", "ping-journal"]);
  } finally {
    await s.stop();
  }
  const journal = openPingJournal(fresh());
  journal.append(1, []);
  expect(mode(journal.path)).toBe("700");
  for (const f of readdirSync(journal.path)) expect(mode(join(journal.path, f))).toBe("600");
  journal.close();

  const backup = join(fresh(), "copy.db");
  backupDatabase(data, backup);
  expect(mode(backup)).toBe("600");
  expect(() => backupDatabase(data, backup)).toThrow("already exists");
  restoreDatabase(data, backup, Date.now());
  expectPrivate(data, ["vigil.db", ...readdirSync(data).filter((f) => f.includes("before-restore"))]);
}, 60_000);

test("an older install's 0644 files are made 0600 on start; the directory keeps the mode it was given, with a warning", async () => {
  const data = fresh();
  chmodSync(data, 0o755);
  const first = await startTestServer([], { dataDir: data });
  await first.stop();
  // as a build before this one left them
  for (const f of readdirSync(data)) chmodSync(join(data, f), 0o644);
  mkdirSync(join(data, "ping-journal"), { recursive: true });
  chmodSync(join(data, "ping-journal"), 0o755);
  const again = await startTestServer([], { dataDir: data });
  try {
    expect(mode(data)).toBe("755");
    // on PostgreSQL the data directory holds no database, only the instance's own files
    const store = TEST_ENGINE === "sqlite" ? ["vigil.db", "vigil.db-wal", "vigil.db-shm"] : [];
    for (const f of [...store, "secret.key", "bootstrap-token", "serve.lock"]) expect({ f, mode: existsSync(join(data, f)) ? mode(join(data, f)) : "missing" }).toEqual({ f, mode: "600" });
    // SQLite's ping journal (PostgreSQL has none; the directory an older build left is not touched)
    if (TEST_ENGINE === "sqlite") expect(mode(join(data, "ping-journal"))).toBe("700");
    expect(again.logs.some((l) => l.level === "warn" && String(l.msg).includes("data directory is open to other users"))).toBe(true);
  } finally {
    await again.stop();
  }
}, 60_000);
