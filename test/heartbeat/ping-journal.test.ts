/**
 * The ping journal (store/ping-journal.ts, heartbeat/ping-batches.ts, store/ping-fold-scheduler.ts,
 * store/ping-fold-worker.ts): a plain ping on an up monitor is acknowledged once it is journaled in
 * <data>/ping-journal/ and folded into monitor_events, checks and the row later, by the fold worker. These tests check that nothing
 * acknowledged is lost or written twice on the way, and that nobody reading a monitor, or judging
 * its deadline, sees it before the fold.
 *
 * The journal is SQLite's: PostgreSQL writes every ping in its batch's transaction, so these are
 * skipped there (test/heartbeat/batch-writes.test.ts and the rest of test/heartbeat/ cover that path).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FOLD_AFTER_MS } from "../../src/store/ping-fold-scheduler.ts";
import { randomToken } from "../../src/lib/tokens.ts";
import { createAccount } from "../../src/store/accounts.ts";
import { asSqlite, openStore, type SqliteStore } from "../../src/store/database.ts";
import { ROWS_PER_INSERT } from "../../src/store/multi-row-insert.ts";
import { PendingPings } from "../../src/store/pending-pings.ts";
import { preparePingFold } from "../../src/store/ping-fold.ts";
import { JOURNAL_DIR, openPingJournal, readJournalBatches, readJournalFile, type JournaledPing } from "../../src/store/ping-journal-file.ts";
import { carriedPings } from "../../src/store/ping-journal.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { createHeartbeat, monitorRow, ping, timeline, transitions, updateHeartbeat } from "../helpers/heartbeat.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";

const watermark = (server: TestServer, id: number) =>
  (asSqlite(server.ctx.store, "this").sqlite.query("SELECT coalesce(heartbeat_journal_through, 0) AS n FROM monitors WHERE id = ?").get(id) as { n: number }).n;
/** a monitor's entries in the journal that are not folded yet */
const journaled = (server: TestServer, id: number) => {
  const mark = watermark(server, id);
  return readJournalFile(server.dataDir).filter((e) => e.monitorId === id && e.id > mark).length;
};
/** batch records in the journal's segments, folded or not */
const batchRows = (server: TestServer) => readJournalBatches(server.dataDir).length;
const rowAsStored = (server: TestServer, id: number) =>
  asSqlite(server.ctx.store, "this").sqlite.query("SELECT heartbeat_last_ping_at AS last, last_status AS status FROM monitors WHERE id = ?").get(id) as { last: number | null; status: string };

describe.skipIf(TEST_ENGINE === "postgres")("the ping journal, through the server", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"]);
  });
  afterAll(async () => {
    await server.stop();
  });

  test("a plain ping on an up monitor is journaled; the API shows it at once and its timeline and checks hold it once", async () => {
    const m = await createHeartbeat(server, { periodSec: 600, graceSec: 60 });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" }); // unknown -> up, written directly
    const up = rowAsStored(server, m.id);
    expect(up.status).toBe("up");
    for (let i = 0; i < 3; i++) expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    // acknowledged, in the journal, not yet in the row
    expect(journaled(server, m.id)).toBe(3);
    expect(rowAsStored(server, m.id).last).toBe(up.last);

    const api = await server.api("GET", `/api/v1/monitors/${m.id}`);
    const shown = Date.parse(api.json.data.attributes.heartbeat_last_ping_at);
    expect(shown).toBeGreaterThan(up.last!);
    const list = await server.api("GET", `/api/v1/monitors?per_page=100`);
    expect(list.json.data.find((d: { id: string }) => Number(d.id) === m.id).attributes.heartbeat_last_ping_at).toBe(api.json.data.attributes.heartbeat_last_ping_at);

    const events = await server.api("GET", `/api/v1/monitors/${m.id}/events?per_page=100`);
    expect(events.json.data.filter((e: { attributes: { kind: string } }) => e.attributes.kind === "ping").length).toBe(4);
    expect(journaled(server, m.id)).toBe(0);
    expect(rowAsStored(server, m.id).last).toBe(shown);
    const checks = await server.api("GET", `/api/v1/monitors/${m.id}/checks?per_page=100`);
    expect(checks.json.data.map((c: { attributes: { status: string } }) => c.attributes.status)).toEqual(["up", "up", "up", "up"]);
    // newest first, ids in the order of the pings
    const ids = checks.json.data.map((c: { id: string }) => Number(c.id));
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    // settled again: nothing is written twice
    expect((await timeline(server.ctx, m.id)).filter((e) => e.kind === "ping").length).toBe(4);
  });

  test("the fold worker folds journaled pings with nobody reading, and their journal segments go", async () => {
    const m = await createHeartbeat(server, { periodSec: 600, graceSec: 60 });
    await ping(server.url, m.token);
    const up = rowAsStored(server, m.id).last!;
    for (let i = 0; i < 3; i++) await ping(server.url, m.token);
    expect(journaled(server, m.id)).toBe(3);
    expect(batchRows(server)).toBeGreaterThan(0);
    // FOLD_AFTER_MS after the first entry waited, the worker folds, then the segments are deleted
    await waitFor(() => journaled(server, m.id) === 0 && batchRows(server) === 0, { timeoutMs: FOLD_AFTER_MS + 20_000 });
    expect(rowAsStored(server, m.id).last).toBeGreaterThan(up);
    expect(watermark(server, m.id)).toBeGreaterThan(0);
    const pings = asSqlite(server.ctx.store, "this").sqlite.query("SELECT count(*) AS n FROM monitor_events WHERE monitor_id = ? AND kind = 'ping'").get(m.id) as { n: number };
    expect(pings.n).toBe(4);
    const checks = asSqlite(server.ctx.store, "this").sqlite.query("SELECT count(*) AS n FROM checks WHERE monitor_id = ? AND status = 'up'").get(m.id) as { n: number };
    expect(checks.n).toBe(4);
    // a reader's settle after the worker folded writes nothing again
    expect((await timeline(server.ctx, m.id)).filter((e) => e.kind === "ping").length).toBe(4);
  }, FOLD_AFTER_MS + 30_000);


  test("a deadline judged while pings wait in the journal counts them", async () => {
    // period 2 s, no grace: the row says degraded 2 s after the first ping; the journaled second
    // ping moves that 1 s later. An edit at 2.3 s re-evaluates the monitor: it must still be up.
    const m = await createHeartbeat(server, { periodSec: 2, graceSec: 5, direct: true });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    const first = rowAsStored(server, m.id).last!;
    await waitFor(() => Date.now() >= first + 1000, { timeoutMs: 3000 });
    expect((await ping(server.url, m.token)).json).toEqual({ result: "accepted" });
    expect(journaled(server, m.id)).toBe(1);
    await waitFor(() => Date.now() >= first + 2300, { timeoutMs: 3000 });
    await updateHeartbeat(server, m.id, { name: "renamed" });
    await waitFor(() => journaled(server, m.id) === 0, { timeoutMs: 3000 });
    expect(rowAsStored(server, m.id).status).toBe("up");
    expect(await transitions(server.ctx, m.id)).toEqual(["unknown->up"]);
    // and the deadline it keeps is the second ping's
    const row = await monitorRow(server.ctx, m.id);
    expect(row.heartbeat_last_ping_at).toBeGreaterThanOrEqual(first + 1000);
    expect(row.heartbeat_deadline_at).toBe(row.heartbeat_last_ping_at! + 2000);
  });

  test("a /start or /fail after journaled pings keeps the timeline in order", async () => {
    const m = await createHeartbeat(server, { periodSec: 600, graceSec: 60 });
    await ping(server.url, m.token);
    await ping(server.url, m.token); // journaled
    expect(journaled(server, m.id)).toBe(1);
    await ping(server.url, m.token, { suffix: "/fail", body: "disk full" });
    const kinds = (await timeline(server.ctx, m.id)).map((e) => (e.kind === "transition" ? `${e.from_state}->${e.to_state}` : e.kind));
    expect(kinds).toEqual(["ping", "unknown->up", "ping", "fail", "up->down"]);
  });
});

describe.skipIf(TEST_ENGINE === "postgres")("the ping journal's store statements", () => {
  let dir: string;
  let store: SqliteStore;
  let monitorId: number;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vigil-journal-"));
    store = openStore(dir);
    const account = await createAccount(store.db, "default", "enterprise", Date.now());
    const row = await store.db
      .insertInto("monitors")
      .values({ account_id: account.id, name: "job", monitor_type: "heartbeat", target: null, interval_sec: 60, timeout_ms: 1000, group_id: null, created_at: 1, updated_at: 1, heartbeat_token: randomToken(24), heartbeat_period_sec: 60, last_status: "up" } as never)
      .returning("id")
      .executeTakeFirstOrThrow();
    monitorId = row.id;
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const entry = (id: number, at: number, monitor = monitorId): JournaledPing => ({ id, monitorId: monitor, at, sourceIp: "10.0.0.1", durationMs: id === 2 ? 1500 : null, deadlineAt: at + 60_000 });
  const count = (table: string) => (store.sqlite.query(`SELECT count(*) AS n FROM ${table} WHERE monitor_id = ?`).get(monitorId) as { n: number }).n;

  /** a fresh data directory for a journal of its own */
  function withJournalDir(f: (dir: string) => void): void {
    const jdir = mkdtempSync(join(tmpdir(), "vigil-journal-file-"));
    try {
      f(jdir);
    } finally {
      rmSync(jdir, { recursive: true, force: true });
    }
  }
  const segments = (jdir: string) => readdirSync(join(jdir, JOURNAL_DIR)).sort();

  test("the journal keeps batches as written, reads them by id range, and deletes segments once all they hold is folded", () => {
    withJournalDir((jdir) => {
      const file = openPingJournal(jdir);
      try {
        expect(readJournalBatches(jdir, 0, Infinity)).toEqual([]);
        file.append(1, [entry(1, 1000), entry(2, 2000)]);
        file.append(2, [entry(3, 1500)]);
        // [batch id, newest entry id]
        expect(readJournalBatches(jdir, 0, Infinity).map((b) => [b.id, b.pings.at(-1)!.id])).toEqual([[1, 2], [2, 3]]);
        expect(readJournalBatches(jdir, 0, 1)).toEqual([{ id: 1, pings: [entry(1, 1000), entry(2, 2000)] }]);
        expect(readJournalBatches(jdir, 1, 10).map((b) => b.id)).toEqual([2]);
        expect(readJournalFile(jdir)).toEqual([entry(1, 1000), entry(2, 2000), entry(3, 1500)]);
        // batch 2 is not folded: its segment stays, and later batches go to a new one
        file.dropBatches(1);
        expect(segments(jdir).length).toBe(1);
        file.append(3, [entry(4, 3000)]);
        expect(segments(jdir).length).toBe(2);
        expect(readJournalBatches(jdir, 0, 10).map((b) => b.id)).toEqual([1, 2, 3]);
        file.dropBatches(2);
        expect(segments(jdir).length).toBe(1);
        expect(readJournalBatches(jdir).map((b) => b.id)).toEqual([3]);
        file.dropBatches(3);
        expect(segments(jdir)).toEqual([]);
      } finally {
        file.close();
      }
      // a writer opened again finds nothing left
      const again = openPingJournal(jdir);
      expect(readJournalBatches(jdir, 0, Infinity)).toEqual([]);
      again.close();
    });
  });

  test("a segment from a long outage, with more batches than a spread's arguments may number, reads whole", () => {
    withJournalDir((jdir) => {
      // the record format written by hand: length, CRC-32 of the rest, batch id, JSON entries
      const n = 2_100_000;
      const payload = Buffer.from("[]");
      const size = 16 + payload.length;
      const data = Buffer.alloc(n * size);
      for (let i = 0; i < n; i++) {
        const off = i * size;
        data.writeUInt32LE(payload.length, off);
        data.writeDoubleLE(i + 1, off + 8);
        payload.copy(data, off + 16);
        data.writeUInt32LE(Bun.hash.crc32(data.subarray(off + 8, off + size)), off + 4);
      }
      mkdirSync(join(jdir, JOURNAL_DIR));
      writeFileSync(join(jdir, JOURNAL_DIR, "000000000001.log"), data);
      const batches = readJournalBatches(jdir);
      expect(batches.length).toBe(n);
      expect(batches.at(-1)).toEqual({ id: n, pings: [] });
      const file = openPingJournal(jdir);
      expect(readJournalBatches(jdir, n - 2, n).map((b) => b.id)).toEqual([n - 1, n]);
      // the writer opened on it knows its newest batch is n: the segment goes only once n is folded
      file.dropBatches(n - 1);
      expect(segments(jdir).length).toBe(1);
      file.dropBatches(n);
      expect(segments(jdir)).toEqual([]);
      file.close();
    });
  }, 60_000);

  test("a record a crash cut short, or one whose bytes changed, ends its segment's reading; the rest of the journal reads on", () => {
    withJournalDir((jdir) => {
      const file = openPingJournal(jdir);
      file.append(1, [entry(1, 1000)]);
      file.append(2, [entry(2, 2000)]);
      file.close();
      const [first] = segments(jdir);
      const path = join(jdir, JOURNAL_DIR, first!);
      const whole = readFileSync(path);
      // the second record loses its last byte, as a write cut off by a crash leaves it
      writeFileSync(path, whole.subarray(0, whole.length - 1));
      expect(readJournalBatches(jdir).map((b) => b.id)).toEqual([1]);
      // a changed byte inside the first record's entries: its checksum fails, nothing after it is trusted
      const flipped = Buffer.from(whole);
      flipped[20] = flipped[20]! ^ 0x01;
      writeFileSync(path, flipped);
      expect(readJournalBatches(jdir)).toEqual([]);
      writeFileSync(path, whole.subarray(0, whole.length - 1));
      // a new writer starts a segment of its own; what it writes reads after the cut record
      const next = openPingJournal(jdir);
      expect(readJournalBatches(jdir, 0, Infinity)).toEqual([{ id: 1, pings: [entry(1, 1000)] }]);
      next.append(3, [entry(3, 3000)]);
      next.close();
      expect(segments(jdir).length).toBe(2);
      expect(readJournalFile(jdir).map((e) => e.id)).toEqual([1, 3]);
    });
  });

  test("folding the same entries twice writes them once, and the row and watermark move to the newest", () => {
    const f = preparePingFold(store.sqlite, "local");
    const entries = [entry(1, 1000), entry(2, 2000), entry(3, 1500)];
    expect(store.sqlite.transaction(() => f.fold([entries]))()).toBe(3);
    expect(store.sqlite.transaction(() => f.fold([entries]))()).toBe(0);
    expect(count("monitor_events")).toBe(3);
    expect(count("checks")).toBe(3);
    const row = store.sqlite.query("SELECT heartbeat_last_ping_at AS last, last_checked_at AS checked, heartbeat_deadline_at AS deadline, heartbeat_journal_through AS mark FROM monitors WHERE id = ?").get(monitorId);
    expect(row).toEqual({ last: 2000, checked: 2000, deadline: 62_000, mark: 3 });
    const durations = store.sqlite.query("SELECT duration_ms AS d FROM monitor_events WHERE monitor_id = ? ORDER BY id").all(monitorId);
    expect(durations).toEqual([{ d: null }, { d: 1500 }, { d: null }]);
    // a fold that overlaps the watermark writes only what lies past it
    expect(store.sqlite.transaction(() => f.fold([[entry(3, 1500), entry(4, 2500)]]))()).toBe(1);
    expect(count("monitor_events")).toBe(4);
    // an older entry folded late never moves the row back
    store.sqlite.transaction(() => f.fold([[entry(5, 500)]]))();
    expect(count("monitor_events")).toBe(5);
    expect((store.sqlite.query("SELECT heartbeat_last_ping_at AS last FROM monitors WHERE id = ?").get(monitorId) as { last: number }).last).toBe(2500);
  });

  test("a deleted monitor's entries are dropped, not written, and the rest of the slice is", () => {
    const f = preparePingFold(store.sqlite, "local");
    const before = count("monitor_events");
    expect(store.sqlite.transaction(() => f.fold([[entry(11, 3000, 999_999)], [entry(10, 3000)]]))()).toBe(1);
    expect(count("monitor_events")).toBe(before + 1);
  });

  test("a fold of more rows than one INSERT takes writes every row once, in monitor then entry order, with its own values", async () => {
    const account = (store.sqlite.query("SELECT account_id AS a FROM monitors WHERE id = ?").get(monitorId) as { a: number }).a;
    const other = (await store.db
      .insertInto("monitors")
      .values({ account_id: account, name: "job 2", monitor_type: "heartbeat", target: null, interval_sec: 60, timeout_ms: 1000, group_id: null, created_at: 1, updated_at: 1, heartbeat_token: randomToken(24), heartbeat_period_sec: 60, last_status: "up" } as never)
      .returning("id")
      .executeTakeFirstOrThrow()).id;
    const f = preparePingFold(store.sqlite, "eu-west");
    // ROWS_PER_INSERT twice over and a remainder, then a monitor whose first entries are folded already
    const first = Array.from({ length: 2 * ROWS_PER_INSERT + 6 }, (_, i): JournaledPing => ({ id: 1000 + i, monitorId: other, at: 100_000 + i, sourceIp: `10.0.${i >> 8}.${i & 255}`, durationMs: i % 3 === 0 ? i : null, deadlineAt: 200_000 + i }));
    const second = [1, 2, 3].map((k): JournaledPing => ({ id: 2000 + k, monitorId, at: 300_000 + k, sourceIp: null, durationMs: null, deadlineAt: 400_000 + k }));
    store.sqlite.run("UPDATE monitors SET heartbeat_journal_through = 2001 WHERE id = ?", [monitorId]);
    const eventsBefore = (store.sqlite.query("SELECT coalesce(max(id), 0) AS n FROM monitor_events").get() as { n: number }).n;
    const checksBefore = (store.sqlite.query("SELECT coalesce(max(id), 0) AS n FROM checks").get() as { n: number }).n;
    expect(store.sqlite.transaction(() => f.fold([first, second]))()).toBe(first.length + 2);
    const events = store.sqlite.query("SELECT monitor_id AS m, kind, at, result, source_ip AS ip, duration_ms AS d FROM monitor_events WHERE id > ? ORDER BY id").all(eventsBefore);
    const checks = store.sqlite.query("SELECT monitor_id AS m, region, status, checked_at AS at, latency_ms AS d FROM checks WHERE id > ? ORDER BY id").all(checksBefore);
    const written = [...first, ...second.slice(1)];
    expect(events).toEqual(written.map((e) => ({ m: e.monitorId, kind: "ping", at: e.at, result: "accepted", ip: e.sourceIp, d: e.durationMs })));
    expect(checks).toEqual(written.map((e) => ({ m: e.monitorId, region: "eu-west", status: "up", at: e.at, d: e.durationMs })));
    const marks = store.sqlite.query("SELECT id, heartbeat_journal_through AS mark, heartbeat_last_ping_at AS last FROM monitors WHERE id IN (?, ?) ORDER BY id").all(monitorId, other);
    expect(marks).toEqual([
      { id: monitorId, mark: 2003, last: 300_003 },
      { id: other, mark: 1000 + first.length - 1, last: 100_000 + first.length - 1 },
    ]);
    store.sqlite.run("DELETE FROM monitors WHERE id = ?", [other]);
  });

  test("the ping_journal table (older builds, backups) keeps entries until cleared", () => {
    const carried = carriedPings(store.sqlite);
    store.sqlite.transaction(() => carried.add([entry(20, 1), entry(21, 2)]))();
    store.sqlite.transaction(() => carried.add([entry(21, 2)]))(); // a repeat is ignored
    expect(carried.all()).toEqual([entry(20, 1), entry(21, 2)]);
    store.sqlite.transaction(() => carried.clearThrough(20))();
    expect(carried.all()).toEqual([entry(21, 2)]);
    store.sqlite.transaction(() => carried.clearThrough(21))();
  });

  test("pending entries: ids never repeat, and dropping is by id, so a later entry survives", () => {
    const p = new PendingPings(41);
    expect(p.nextId()).toBe(42);
    p.add(entry(42, 1));
    p.add(entry(50, 2));
    p.add(entry(51, 3, 7));
    expect(p.nextId()).toBe(52);
    expect(p.size).toBe(3);
    expect(p.monitorIds()).toEqual([7, monitorId].sort((a, b) => a - b));
    p.dropThrough(monitorId, 42);
    expect(p.of(monitorId)).toEqual([entry(50, 2)]);
    expect(p.lastPingAt(monitorId)).toBe(2);
    p.dropThrough(monitorId, 42); // again: nothing else goes
    expect(p.size).toBe(2);
    p.dropThrough(monitorId, 50);
    expect(p.of(monitorId)).toBeUndefined();
    expect(p.lastPingAt(monitorId)).toBeUndefined();
    expect(p.size).toBe(1);
  });

  test("pending entries, packed: thousands added and dropped in turns come back whole, nulls and addresses as given", () => {
    const p = new PendingPings();
    const made = (id: number, monitor: number): JournaledPing => ({
      id, monitorId: monitor, at: 1_000_000 + id * 7,
      sourceIp: id % 3 === 0 ? null : `10.0.${id % 5}.${id % 251}`,
      durationMs: id % 4 === 0 ? null : id * 11,
      deadlineAt: id % 6 === 0 ? null : 2_000_000 + id,
    });
    const expected = new Map<number, JournaledPing[]>([[1, []], [2, []]]);
    let id = 0;
    // rounds of adds and drops make each monitor's array both grow and move its pings to the front
    for (let round = 0; round < 40; round++) {
      for (let k = 0; k < 50 + round * 5; k++) {
        const ping = made(++id, k % 2 === 0 ? 1 : 2);
        p.add(ping);
        expected.get(ping.monitorId)!.push(ping);
      }
      for (const monitor of [1, 2]) {
        const list = expected.get(monitor)!;
        const through = list[Math.floor(list.length * 0.6)]!.id;
        p.dropThrough(monitor, through);
        expected.set(monitor, list.filter((e) => e.id > through));
      }
      for (const monitor of [1, 2]) expect(p.of(monitor)).toEqual(expected.get(monitor)!);
    }
    expect(p.size).toBe(expected.get(1)!.length + expected.get(2)!.length);
    expect(p.lastPingAt(2)).toBe(Math.max(...expected.get(2)!.map((e) => e.at)));
    expect(p.has(1)).toBe(true);
    p.dropThrough(1, id);
    expect([p.has(1), p.of(1)]).toEqual([false, undefined]);
  });

  test("pending entries, packed: senders from 30,000 addresses and 250,000 emptied entries lose no pending ping's address", () => {
    const p = new PendingPings();
    const ping = (id: number, monitor: number, ip: string | null): JournaledPing => ({ id, monitorId: monitor, at: id, sourceIp: ip, durationMs: null, deadlineAt: null });
    let id = 0;
    // monitor 1 keeps what it was sent; monitor 2's each ping comes from a new address and is folded at once
    const kept: JournaledPing[] = [];
    for (let k = 0; k < 30_000; k++) {
      if (k % 1000 === 0) {
        const e = ping(++id, 1, k % 2000 === 0 ? null : `192.0.2.${k / 1000}`);
        p.add(e);
        kept.push(e);
      }
      p.add(ping(++id, 2, `2001:db8::${k.toString(16)}`));
      p.dropThrough(2, id);
    }
    // monitor 3 is emptied again and again: the entries of idle monitors are swept meanwhile
    for (let k = 0; k < 250_000; k++) {
      p.add(ping(++id, 3, "198.51.100.7"));
      p.dropThrough(3, id);
    }
    p.add(ping(++id, 3, "198.51.100.8"));
    expect(p.of(1)).toEqual(kept);
    expect(p.of(2)).toBeUndefined();
    expect(p.of(3)).toEqual([ping(id, 3, "198.51.100.8")]);
    expect(p.monitorIds()).toEqual([1, 3]);
    expect(p.size).toBe(kept.length + 1);
  });

  test("pending batches: ids follow the newest on disk, and batchesThrough moves only as batches are added", () => {
    const p = new PendingPings(100, 7);
    expect(p.batchesThrough).toBe(7);
    const b = p.nextBatchId();
    expect(b).toBe(8);
    expect(p.batchesThrough).toBe(7); // given out, not committed
    p.addBatch(b, [entry(p.nextId(), 1), entry(p.nextId(), 2)]);
    expect(p.batchesThrough).toBe(8);
    expect(p.of(monitorId)!.map((e) => e.id)).toEqual([101, 102]);
  });
});

describe.skipIf(TEST_ENGINE === "postgres")("the ping journal across a restart", () => {
  test("entries the last run acknowledged but did not fold are folded before the deadlines are rebuilt", async () => {
    const server = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"], { keepData: true });
    const dir = server.dataDir;
    let id: number;
    let second: TestServer | null = null;
    try {
      const m = await createHeartbeat(server, { periodSec: 600, graceSec: 60 });
      id = m.id;
      await ping(server.url, m.token);
      const up = rowAsStored(server, m.id).last!;
      // as a killed process leaves it: acknowledged pings in the journal, the row behind
      const file = openPingJournal(dir);
      file.append(1_000_000, [{ id: 1_000_000, monitorId: m.id, at: up + 5000, sourceIp: "10.9.9.9", durationMs: null, deadlineAt: up + 5000 + 600_000 }]);
      file.close();
      await server.stop();
      second = await startTestServer(["--ping-limit-token", "1000", "--ping-limit-ip", "100000"], { dataDir: dir });
      expect(journaled(second, id)).toBe(0);
      expect(batchRows(second)).toBe(0);
      expect(rowAsStored(second, id).last).toBe(up + 5000);
      const events = await timeline(second.ctx, id);
      expect(events.filter((e) => e.kind === "ping").map((e) => e.source_ip).at(-1)).toBe("10.9.9.9");
      expect(second.logs.some((l) => l.component === "heartbeat" && l.msg === "folded the pings the last run journaled" && l.pings === 1)).toBe(true);
    } finally {
      await second?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const flags = ["--ping-limit-token", "1000", "--ping-limit-ip", "100000"];

  type Monitor = { id: number; token: string };

  /**
   * A heartbeat monitor pinged once (unknown -> up, written directly; `up` is that ping's time),
   * then `before` on that server, then `after` on a second one started on the same data directory.
   */
  async function acrossRestart(
    before: (server: TestServer, m: Monitor, up: number) => Promise<void>,
    after: (second: TestServer, m: Monitor, up: number, first: TestServer) => Promise<void>,
  ): Promise<void> {
    const server = await startTestServer(flags, { keepData: true });
    const dir = server.dataDir;
    let second: TestServer | null = null;
    try {
      const m = await createHeartbeat(server, { periodSec: 600, graceSec: 60 });
      await ping(server.url, m.token);
      const up = rowAsStored(server, m.id).last!;
      await before(server, m, up);
      await server.stop();
      second = await startTestServer(flags, { dataDir: dir });
      await after(second, m, up, server);
    } finally {
      await second?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  test("a batch record a crash left half folded: only the entries past the monitor's watermark are written", async () => {
    await acrossRestart(
      async (server, m, up) => {
        const sqlite = asSqlite(server.ctx.store, "this").sqlite;
        const entryAt = (id: number, at: number, ip: string): JournaledPing => ({ id, monitorId: m.id, at, sourceIp: ip, durationMs: null, deadlineAt: at + 600_000 });
        // entry 2_000_000 was folded (rows and watermark committed), 2_000_001 was not; their batch row stayed
        sqlite.transaction(() => preparePingFold(sqlite, "local").fold([[entryAt(2_000_000, up + 1000, "10.1.1.1")]]))();
        const file = openPingJournal(server.dataDir);
        file.append(2_000_000, [entryAt(2_000_000, up + 1000, "10.1.1.1"), entryAt(2_000_001, up + 2000, "10.2.2.2")]);
        file.close();
        expect(journaled(server, m.id)).toBe(1);
      },
      async (second, m, up) => {
        const ips = (await timeline(second.ctx, m.id)).filter((e) => e.kind === "ping").map((e) => e.source_ip);
        expect(ips.slice(1)).toEqual(["10.1.1.1", "10.2.2.2"]);
        expect(batchRows(second)).toBe(0);
        expect(rowAsStored(second, m.id).last).toBe(up + 2000);
        expect(second.logs.some((l) => l.msg === "folded the pings the last run journaled" && l.pings === 1)).toBe(true);
      },
    );
  });

  test("after a restart with an empty journal, new entries are numbered above every watermark and are folded", async () => {
    await acrossRestart(
      async (server, m) => {
        for (let i = 0; i < 2; i++) await ping(server.url, m.token); // after the one written directly, two journaled; the stop folds them
      },
      async (second, m, _up, first) => {
        expect(first.logs.some((l) => l.component === "heartbeat" && l.msg === "folded the journaled pings before stopping" && l.pings === 2 && typeof l.ms === "number")).toBe(true);
        expect(batchRows(second)).toBe(0);
        const mark = watermark(second, m.id);
        expect(mark).toBeGreaterThan(0);
        await ping(second.url, m.token); // reads the row (a new process caches none): written directly
        await ping(second.url, m.token); // journaled
        expect(journaled(second, m.id)).toBe(1);
        expect(readJournalFile(second.dataDir).find((e) => e.monitorId === m.id)!.id).toBeGreaterThan(mark);
        const events = await second.api("GET", `/api/v1/monitors/${m.id}/events?per_page=100`);
        expect(events.json.data.filter((e: { attributes: { kind: string } }) => e.attributes.kind === "ping").length).toBe(5);
      },
    );
  });

  test("entries in the ping_journal table (an older build's, a backup's) are folded at start-up and the table emptied", async () => {
    await acrossRestart(
      async (server, m, up) => {
        const sqlite = asSqlite(server.ctx.store, "this").sqlite;
        sqlite.transaction(() => carriedPings(sqlite).add([{ id: 5, monitorId: m.id, at: up + 3000, sourceIp: "10.5.5.5", durationMs: null, deadlineAt: up + 603_000 }]))();
      },
      async (second, m, up) => {
        expect(carriedPings(asSqlite(second.ctx.store, "this").sqlite).all()).toEqual([]);
        expect(rowAsStored(second, m.id).last).toBe(up + 3000);
        const ips = (await timeline(second.ctx, m.id)).filter((e) => e.kind === "ping").map((e) => e.source_ip);
        expect(ips.at(-1)).toBe("10.5.5.5");
      },
    );
  });
});
