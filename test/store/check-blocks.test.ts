/**
 * Packed checks (store/check-blocks.ts) read exactly like check rows: every list the API can ask
 * for is compared with a reference computed from the checks as written, before packing, after
 * packing, with late results landing in packed hours, and after those are packed in turn.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { DAY_MS, HOUR_MS } from "../../src/domain/uptime.ts";
import { runMaintenance } from "../../src/engine/retention.ts";
import { checkSamples, monitorsWithPackedChecksBefore } from "../../src/store/check-blocks.ts";
import { listChecks, type CheckFilter } from "../../src/store/check-queries.ts";
import { resultAlreadyStored } from "../../src/store/checks.ts";
import type { CheckRow } from "../../src/store/tables.ts";
import { recordCheckResult } from "../../src/engine/record-check.ts";
import { engineHarness, insertMonitor, result, type EngineHarness } from "../engine/helpers.ts";

const NOW = Date.UTC(2026, 11, 21, 12, 30);
let now = NOW;
let h: EngineHarness;
let a: number;
let b: number;

type Ref = Pick<CheckRow, "id" | "monitor_id" | "region" | "status" | "checked_at" | "latency_ms" | "http_code" | "error_code" | "error_message" | "resolved_ip">;
const written: Ref[] = [];
let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

beforeEach(async () => {
  now = NOW;
  written.length = 0;
  h = await engineHarness([], { now: () => now });
  a = await insertMonitor(h);
  b = await insertMonitor(h);
});
afterEach(async () => {
  await h.close();
});

async function write(monitorId: number, at: number): Promise<void> {
  const r = rand();
  const status = r < 0.1 ? "down" : r < 0.2 ? "degraded" : "up";
  const row = {
    monitor_id: monitorId, region: rand() < 0.3 ? "eu" : "local", status, checked_at: at, latency_ms: status === "down" ? null : Math.floor(rand() * 300),
    http_code: status === "down" ? null : 200, error_code: status === "down" ? "connection_refused" : null, error_message: status === "down" ? `refused ${Math.floor(rand() * 5)}` : null, resolved_ip: "127.0.0.1",
  };
  const { id } = await h.ctx.db.insertInto("checks").values(row).returning("id").executeTakeFirstOrThrow();
  written.push({ id, ...row });
}

/** Three days of checks every ~7 minutes for a, with two checks in one millisecond now and then and a silent 05:00-07:00 two days ago; a few for b. */
async function seedHistory(): Promise<void> {
  const silent = [NOW - 2 * DAY_MS - 7.5 * HOUR_MS, NOW - 2 * DAY_MS - 5.5 * HOUR_MS];
  for (let t = NOW - 3 * DAY_MS; t < NOW; t += 7 * 60_000 + Math.floor(rand() * 1000)) {
    const at = Math.floor(t);
    if (at >= silent[0]! && at < silent[1]!) continue;
    await write(a, at);
    if (rand() < 0.05) await write(a, at);
    if (rand() < 0.02) await write(b, at);
  }
}

const newestFirst = (x: Ref, y: Ref) => y.checked_at - x.checked_at || y.id - x.id;

async function expectListsMatch(label: string): Promise<number> {
  const mine = written.filter((r) => r.monitor_id === a);
  const times = mine.map((r) => r.checked_at).sort((x, y) => x - y);
  const mid = (q: number) => times[Math.floor(times.length * q)]!;
  const filters: CheckFilter[] = [
    {}, { status: "up" }, { status: "down" }, { status: "degraded" }, { region: "eu" },
    { from: mid(0.25) + 1 }, { to: mid(0.6) }, { from: mid(0.1), to: mid(0.9) - 1 }, { status: "down", from: mid(0.3), to: mid(0.35) },
    { from: NOW - 2 * DAY_MS - 7 * HOUR_MS, to: NOW - 2 * DAY_MS - 6 * HOUR_MS }, { region: "local", status: "up", from: mid(0.5) },
  ];
  let compared = 0;
  for (const f of filters) {
    const ref = mine
      .filter((r) => (!f.status || r.status === f.status) && (!f.region || r.region === f.region) && (f.from === undefined || r.checked_at >= f.from) && (f.to === undefined || r.checked_at <= f.to))
      .sort(newestFirst);
    for (const [offset, limit] of [[0, 25], [0, 100], [17, 40], [130, 100], [ref.length - 3, 10], [ref.length + 5, 10]] as const) {
      const got = await listChecks(h.ctx.pings, a, f, { offset: Math.max(0, offset), limit });
      const want = ref.slice(Math.max(0, offset), Math.max(0, offset) + limit);
      expect({ label, f, offset, total: got.total, ids: got.rows.map((r) => r.id) }).toEqual({ label, f, offset, total: ref.length, ids: want.map((r) => r.id) });
      for (let i = 0; i < want.length; i++) expect(got.rows[i]).toMatchObject({ ...want[i], result_uid: null });
      compared++;
    }
  }
  return compared;
}

const rowsLeft = async () => Number((await h.ctx.db.selectFrom("checks").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow()).n);
const blocks = () => h.ctx.db.selectFrom("check_blocks").select(["monitor_id", "block_start", "span", "up_count", "degraded_count", "down_count"]).orderBy("block_start").execute();

test("lists, totals and samples are the same from rows, from blocks, and with late results merged in", async () => {
  await seedHistory();
  let compared = await expectListsMatch("rows only");

  const report = await runMaintenance(h.ctx);
  expect(report.checksPacked).toBeGreaterThan(500);
  expect(report.daysMerged).toBeGreaterThanOrEqual(3);
  // at 12:30 the hour 11:00-12:00 is over by more than the grace: only the hour in progress stays rows
  expect(written.filter((r) => r.checked_at >= NOW - 30 * 60_000).length).toBe(await rowsLeft());
  const spans = await blocks();
  expect(spans.filter((x) => x.span === "d" && x.monitor_id === a).length).toBe(3);
  expect(spans.filter((x) => x.span === "h" && x.monitor_id === a).length).toBe(12);
  const packedCount = spans.reduce((n, x) => n + x.up_count + x.degraded_count + x.down_count, 0);
  expect(packedCount + (await rowsLeft())).toBe(written.length);
  compared += await expectListsMatch("packed");

  // late results: inside a day block, inside an hour block, and in the silent hours with no block
  for (const at of [NOW - 2 * DAY_MS + 1234, NOW - 5 * HOUR_MS + 99, NOW - 2 * DAY_MS - 6 * HOUR_MS, NOW - 3 * DAY_MS - HOUR_MS]) await write(a, at);
  compared += await expectListsMatch("late rows beside blocks");
  now = NOW + 5 * 60_000;
  const again = await runMaintenance(h.ctx);
  expect(again.checksPacked).toBe(4);
  compared += await expectListsMatch("late rows packed");

  const samples = await checkSamples(h.ctx.db, [a, b], NOW - 2 * DAY_MS, NOW - DAY_MS);
  expect(samples.length).toBe(written.filter((r) => r.checked_at >= NOW - 2 * DAY_MS && r.checked_at < NOW - DAY_MS).length);
  console.log(`packed checks: ${compared} pages compared with the reference`);
});

test("a probe's repeat of a packed result is recognised by region and time (blocks keep no uids)", async () => {
  await seedHistory();
  await runMaintenance(h.ctx);
  const old = written.find((r) => r.monitor_id === a && r.checked_at < NOW - DAY_MS)!;
  expect(await resultAlreadyStored(h.ctx.db, a, old.region, "uid-never-seen", old.checked_at)).toBe(true);
  expect(await resultAlreadyStored(h.ctx.db, a, old.region === "eu" ? "ap" : "eu", "uid-never-seen", old.checked_at)).toBe(false);
  expect(await resultAlreadyStored(h.ctx.db, a, old.region, "uid-never-seen", old.checked_at + 1)).toBe(false);
  // through the engine, as the leader's ingest meets a probe's very late resend
  const again = await recordCheckResult(h.ctx, a, old.region, { ...result(old.status as "up"), checked_at: old.checked_at, latency_ms: old.latency_ms }, "uid-of-the-resend");
  expect(again).toMatchObject({ recorded: false, reason: "duplicate" });
  const fresh = await recordCheckResult(h.ctx, a, old.region, { ...result("up"), checked_at: old.checked_at + 1 }, "uid-of-a-new-one");
  expect(fresh.recorded).toBe(true);
});

test("retention prunes packed checks too: whole blocks, and the older part of the block the cut falls in", async () => {
  await seedHistory();
  await runMaintenance(h.ctx);
  // 30 days after a whole hour inside the block of the day before yesterday
  const cut = Date.UTC(2026, 11, 19, 15);
  now = cut + 30 * DAY_MS;
  const report = await runMaintenance(h.ctx);
  const kept = written.filter((r) => r.checked_at >= cut);
  expect(kept.length).toBeGreaterThan(0);
  expect(report.checksPruned).toBe(written.length - kept.length);
  const left = await checkSamples(h.ctx.db, [a, b], 0, Number.MAX_SAFE_INTEGER);
  expect(left.map((r) => r.checked_at).sort((x, y) => x - y)).toEqual(kept.map((r) => r.checked_at).sort((x, y) => x - y));
  // the trimmed block starts after the cut now: the next runs pass it by instead of unpacking it again
  expect(await monitorsWithPackedChecksBefore(h.ctx.db, cut)).toEqual([]);
  now += 5 * 60_000;
  expect((await runMaintenance(h.ctx)).checksPruned).toBe(0);
});

test("a damaged block costs its own monitor's packing, not the run: other monitors are packed, its rows stay rows", async () => {
  await seedHistory();
  await runMaintenance(h.ctx);
  const day = Date.UTC(2026, 11, 19);
  await h.ctx.db.updateTable("check_blocks").set({ data: new Uint8Array([1, 0xff, 0x00, 0x13]) }).where("monitor_id", "=", a).where("block_start", "=", day).execute();
  // late results for both monitors, in that damaged day and in an undamaged one of b
  await write(a, day + 5 * HOUR_MS + 17);
  await write(b, day + 5 * HOUR_MS + 18);
  now = NOW + 5 * 60_000;
  const report = await runMaintenance(h.ctx);
  expect(report).toMatchObject({ stopped: false, damagedMonitors: 1, checksPacked: 1 });
  const left = await h.ctx.db.selectFrom("checks").select(["monitor_id", "checked_at"]).where("checked_at", "<", NOW - HOUR_MS).execute();
  expect(left).toEqual([{ monitor_id: a, checked_at: day + 5 * HOUR_MS + 17 }]);
  const errors = h.logs().filter((l) => l.level === "error" && l.monitor_id === a);
  expect(errors).toHaveLength(1);
  expect(String(errors[0]!.msg)).toContain("cannot be read");
  // reading that monitor's history says what is wrong instead of answering wrongly
  await expect(listChecks(h.ctx.pings, a, {}, { offset: 0, limit: 5000 })).rejects.toThrow(/check block/);
});
