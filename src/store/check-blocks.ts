/**
 * Packed checks (table check_blocks, format in check-block-codec.ts). Recent checks live in the
 * checks table, one row each; the maintenance job moves those older than about an hour into one
 * block per monitor per UTC hour, and merges a finished day's hours into one block. Blocks of a
 * monitor never overlap, and a check is either a row or in a block, never both (each move is one
 * transaction). A check that arrives late (a probe's spool) lands in the checks table like any
 * other and is merged into its block by the next run.
 */
import { sql } from "kysely";
import { bucketStart, DAY_MS, HOUR_MS } from "../domain/uptime.ts";
import { byTimeThenId, decodeChecks, encodeChecks, type PackedCheck } from "./check-block-codec.ts";
import type { Db } from "./database.ts";
import { monitorIdsWhere } from "./monitor-ids.ts";
import type { CheckBlocksTable } from "./tables.ts";

export type BlockSpan = CheckBlocksTable["span"];

export interface BlockMeta {
  monitor_id: number;
  block_start: number;
  span: BlockSpan;
  first_at: number;
  up_count: number;
  degraded_count: number;
  down_count: number;
}

export const spanMs = (s: BlockSpan): number => (s === "d" ? DAY_MS : HOUR_MS);
export const blockEnd = (b: { block_start: number; span: BlockSpan }): number => b.block_start + spanMs(b.span);
export const blockCount = (b: BlockMeta): number => b.up_count + b.degraded_count + b.down_count;

/**
 * The checks columns a block keeps: all but result_uid and the connection timings. Timings vary with
 * every check, so packed they would about double a block's size (README, Storage); they are for
 * looking into recent checks, and a packed check reads back with none.
 */
export const PACKED_COLUMNS = [
  "id", "monitor_id", "region", "status", "checked_at", "latency_ms", "http_code", "error_code", "error_message", "degraded_reason", "resolved_ip", "ssl_not_after", "dns_answer", "synthetic_trace_json",
] as const;

const META_COLUMNS = ["monitor_id", "block_start", "span", "first_at", "up_count", "degraded_count", "down_count"] as const;

/** A monitor's blocks that hold checks in [from, to), newest first, without their data. */
export async function blockMetas(db: Db, monitorId: number, from = Number.MIN_SAFE_INTEGER, to = Number.MAX_SAFE_INTEGER): Promise<BlockMeta[]> {
  const rows = await db
    .selectFrom("check_blocks")
    .select(META_COLUMNS)
    .where("monitor_id", "=", monitorId)
    .where("block_start", "<", to)
    .where("block_start", ">", from - DAY_MS)
    .orderBy("block_start", "desc")
    .execute();
  return rows.filter((b) => blockEnd(b) > from);
}

/** Where the monitor's newest block ends: every packed check is older. null: nothing packed. */
export async function packedUntil(db: Db, monitorId: number): Promise<number | null> {
  const b = await db.selectFrom("check_blocks").select(["block_start", "span"]).where("monitor_id", "=", monitorId).orderBy("block_start", "desc").limit(1).executeTakeFirst();
  return b ? blockEnd(b) : null;
}

export async function readBlock(db: Db, monitorId: number, blockStart: number): Promise<PackedCheck[]> {
  const b = await db.selectFrom("check_blocks").select("data").where("monitor_id", "=", monitorId).where("block_start", "=", blockStart).executeTakeFirst();
  return b ? decodeChecks(monitorId, b.data) : [];
}

/** Writes a block holding exactly `checks` (deletes it when there are none). */
async function writeBlock(db: Db, monitorId: number, blockStart: number, span: BlockSpan, checks: PackedCheck[]): Promise<void> {
  if (checks.length === 0) {
    await db.deleteFrom("check_blocks").where("monitor_id", "=", monitorId).where("block_start", "=", blockStart).execute();
    return;
  }
  const counts = { first_at: Infinity, up_count: 0, degraded_count: 0, down_count: 0 };
  for (const c of checks) {
    counts.first_at = Math.min(counts.first_at, c.checked_at);
    if (c.status === "up") counts.up_count++;
    else if (c.status === "degraded") counts.degraded_count++;
    else counts.down_count++;
  }
  const row = { monitor_id: monitorId, block_start: blockStart, span, ...counts, data: encodeChecks(checks) };
  await db
    .insertInto("check_blocks")
    .values(row)
    .onConflict((oc) => oc.columns(["monitor_id", "block_start"]).doUpdateSet({ span, ...counts, data: row.data }))
    .execute();
}

/** Merges checks into a list, an id once (a repeat replaces the older copy). */
function mergeById(a: PackedCheck[], b: PackedCheck[]): PackedCheck[] {
  const byId = new Map<number, PackedCheck>();
  for (const c of a) byId.set(c.id, c);
  for (const c of b) byId.set(c.id, c);
  return [...byId.values()].sort(byTimeThenId);
}

/**
 * Moves one monitor's check rows older than `before` into blocks: into the block that covers their
 * time if there is one (late arrivals), else into a new hourly block. Returns how many moved. Run
 * it inside a transaction: the rows go and the blocks come in one commit.
 */
export async function packMonitorChecks(db: Db, monitorId: number, before: number): Promise<number> {
  const rows = await db.selectFrom("checks").select(PACKED_COLUMNS).where("monitor_id", "=", monitorId).where("checked_at", "<", before).execute();
  if (rows.length === 0) return 0;
  let oldest = Infinity;
  for (const r of rows) oldest = Math.min(oldest, r.checked_at);
  const existing = await blockMetas(db, monitorId, oldest, before);
  const groups = new Map<number, { span: BlockSpan; rows: PackedCheck[] }>();
  for (const r of rows) {
    const cover = existing.find((b) => b.block_start <= r.checked_at && r.checked_at < blockEnd(b));
    const start = cover ? cover.block_start : bucketStart(r.checked_at, "h");
    let g = groups.get(start);
    if (!g) groups.set(start, (g = { span: cover?.span ?? "h", rows: [] }));
    g.rows.push(r);
  }
  // every block is read before anything is written: a damaged one throws with nothing changed
  const had = new Map<number, PackedCheck[]>();
  for (const start of groups.keys()) if (existing.some((b) => b.block_start === start)) had.set(start, await readBlock(db, monitorId, start));
  for (const [start, g] of groups) await writeBlock(db, monitorId, start, g.span, mergeById(had.get(start) ?? [], g.rows));
  await db.deleteFrom("checks").where("monitor_id", "=", monitorId).where("checked_at", "<", before).execute();
  return rows.length;
}

/** Merges one monitor's hourly blocks of the UTC days that end by `before` into one block a day. */
export async function mergeMonitorDays(db: Db, monitorId: number, before: number): Promise<number> {
  const until = bucketStart(before, "d");
  const hours = await db.selectFrom("check_blocks").select(["block_start", "data"]).where("monitor_id", "=", monitorId).where("span", "=", "h").where("block_start", "<", until).orderBy("block_start").execute();
  // everything is read before anything is written: a damaged block throws with nothing changed
  const days = new Map<number, PackedCheck[]>();
  for (const h of hours) {
    const day = bucketStart(h.block_start, "d");
    let list = days.get(day);
    if (!list) {
      // a day block of its own cannot sit beside the day's hours, but if one does, nothing is lost
      const own = await db.selectFrom("check_blocks").select("data").where("monitor_id", "=", monitorId).where("block_start", "=", day).where("span", "=", "d").executeTakeFirst();
      days.set(day, (list = own ? decodeChecks(monitorId, own.data) : []));
    }
    list.push(...decodeChecks(monitorId, h.data));
  }
  for (const [day, checks] of days) {
    await db.deleteFrom("check_blocks").where("monitor_id", "=", monitorId).where("span", "=", "h").where("block_start", ">=", day).where("block_start", "<", day + DAY_MS).execute();
    await writeBlock(db, monitorId, day, "d", mergeById([], checks));
  }
  return days.size;
}

/**
 * Deletes one monitor's packed checks older than `before`: whole blocks, and the older part of
 * the block `before` falls in. Returns how many checks went.
 */
export async function prunePackedChecks(db: Db, monitorId: number, before: number): Promise<number> {
  const metas = (await blockMetas(db, monitorId, Number.MIN_SAFE_INTEGER, before)).filter((b) => b.first_at < before);
  // the block the cut falls in is read before anything is written: a damaged one throws with nothing changed
  const cut = metas.find((b) => blockEnd(b) > before);
  const all = cut ? await readBlock(db, monitorId, cut.block_start) : [];
  let removed = 0;
  for (const b of metas) {
    if (b === cut) continue;
    await db.deleteFrom("check_blocks").where("monitor_id", "=", monitorId).where("block_start", "=", b.block_start).execute();
    removed += blockCount(b);
  }
  if (cut) {
    const kept = all.filter((c) => c.checked_at >= before);
    if (kept.length < all.length) await writeBlock(db, monitorId, cut.block_start, cut.span, kept);
    removed += all.length - kept.length;
  }
  return removed;
}

/** Ids of the monitors with packed checks in [from, to): one statement, an index probe per monitor. */
export async function monitorsWithPackedChecks(db: Db, from: number, to: number): Promise<number[]> {
  return monitorIdsWhere(db, (eb) =>
    eb.exists(
      eb
        .selectFrom("check_blocks")
        .select("check_blocks.block_start")
        .whereRef("check_blocks.monitor_id", "=", "monitors.id")
        .where("check_blocks.block_start", "<", to)
        .where("check_blocks.block_start", ">", from - DAY_MS)
        .where(sql<number>`check_blocks.block_start + CASE check_blocks.span WHEN 'd' THEN ${DAY_MS} ELSE ${HOUR_MS} END`, ">", from),
    ),
  );
}

/** Ids of the monitors with packed checks older than `before`, which retention must delete. */
export async function monitorsWithPackedChecksBefore(db: Db, before: number): Promise<number[]> {
  return monitorIdsWhere(db, (eb) =>
    eb.exists(
      eb.selectFrom("check_blocks").select("check_blocks.block_start").whereRef("check_blocks.monitor_id", "=", "monitors.id").where("check_blocks.block_start", "<", before).where("check_blocks.first_at", "<", before),
    ),
  );
}

/** Ids of the monitors with hourly blocks before `before`. */
export async function monitorsWithHourBlocks(db: Db, before: number): Promise<number[]> {
  return monitorIdsWhere(db, (eb) =>
    eb.exists(eb.selectFrom("check_blocks").select("check_blocks.block_start").whereRef("check_blocks.monitor_id", "=", "monitors.id").where("check_blocks.span", "=", "h").where("check_blocks.block_start", "<", before)),
  );
}

/** Whether a packed check of this monitor, region and time exists (a probe's very late repeat). */
export async function packedCheckExists(db: Db, monitorId: number, region: string, checkedAt: number): Promise<boolean> {
  for (const b of await blockMetas(db, monitorId, checkedAt, checkedAt + 1)) {
    if ((await readBlock(db, monitorId, b.block_start)).some((c) => c.checked_at === checkedAt && c.region === region)) return true;
  }
  return false;
}

export interface Sample {
  monitor_id: number;
  status: string;
  latency_ms: number | null;
  checked_at: number;
}

/** Status, latency and time of the checks of these monitors in [from, to), rows and packed alike. */
export async function checkSamples(db: Db, monitorIds: number[], from: number, to: number): Promise<Sample[]> {
  if (monitorIds.length === 0 || to <= from) return [];
  const out: Sample[] = await db
    .selectFrom("checks")
    .select(["monitor_id", "status", "latency_ms", "checked_at"])
    .where("monitor_id", "in", monitorIds)
    .where("checked_at", ">=", from)
    .where("checked_at", "<", to)
    .execute();
  const blocks = await db
    .selectFrom("check_blocks")
    .select(["monitor_id", "block_start", "span", "data"])
    .where("monitor_id", "in", monitorIds)
    .where("block_start", "<", to)
    .where("block_start", ">", from - DAY_MS)
    .execute();
  for (const b of blocks) {
    if (blockEnd(b) <= from) continue;
    for (const c of decodeChecks(b.monitor_id, b.data)) {
      if (c.checked_at >= from && c.checked_at < to) out.push({ monitor_id: b.monitor_id, status: c.status, latency_ms: c.latency_ms, checked_at: c.checked_at });
    }
  }
  return out;
}
