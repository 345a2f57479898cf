import { blockCount, blockEnd, blockMetas, packedUntil, readBlock, type BlockMeta } from "./check-blocks.ts";
import type { PackedCheck } from "./check-block-codec.ts";
import type { Db } from "./database.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { JournaledPings } from "./ping-journal.ts";
import type { CheckRow } from "./tables.ts";

export interface CheckFilter {
  status?: string;
  /** epoch ms, inclusive */
  from?: number;
  /** epoch ms, inclusive */
  to?: number;
  region?: string;
}

/** Newest first; id breaks ties between checks of the same millisecond so paging never repeats or skips one. */
const newestFirst = (a: PackedCheck, b: PackedCheck) => b.checked_at - a.checked_at || b.id - a.id;

function matches(c: PackedCheck, f: CheckFilter): boolean {
  return (
    (!f.status || c.status === f.status) &&
    (f.from === undefined || c.checked_at >= f.from) &&
    (f.to === undefined || c.checked_at <= f.to) &&
    (!f.region || c.region === f.region)
  );
}

// late table rows pass through here too and keep their timings; unpacked checks have none
const asRow = (c: PackedCheck): CheckRow => ({ dns_ms: null, connect_ms: null, tls_ms: null, ttfb_ms: null, ...c, result_uid: null });

/** A run of checks, newest first, whose size is known before its checks are read. */
interface Chunk {
  count(): Promise<number>;
  read(): Promise<PackedCheck[]>;
}

/**
 * A monitor's checks, newest first (docs/api-rules.md "Paging and sorting": checked_at descending),
 * its journaled pings' included, from the checks table and the packed blocks alike
 * (store/check-blocks.ts). The recent page most callers ask for comes from the table alone; deeper
 * pages skip whole blocks by their counts and unpack only the one or two they land in.
 */
export async function listChecks(pings: JournaledPings, monitorId: number, f: CheckFilter, page: PageWindow): Promise<{ rows: CheckRow[]; total: number }> {
  // no stored text holds a NUL (docs/api-rules.md "Text"), so such a region names none
  if (f.region?.includes("\0")) return { rows: [], total: 0 };
  const db = await pings.settled([monitorId]);
  let query = db.selectFrom("checks").where("monitor_id", "=", monitorId);
  if (f.status) query = query.where("status", "=", f.status);
  if (f.from !== undefined) query = query.where("checked_at", ">=", f.from);
  if (f.to !== undefined) query = query.where("checked_at", "<=", f.to);
  if (f.region) query = query.where("region", "=", f.region);
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const hotTotal = Number(n);

  // rows newer than every block come first, straight from the table
  const packed = await packedUntil(db, monitorId);
  const recent = packed === null ? query : query.where("checked_at", ">=", packed);
  const late = packed === null ? [] : (await query.selectAll().where("checked_at", "<", packed).execute()).sort(newestFirst);
  const recentCount = hotTotal - late.length;
  const rows: CheckRow[] = [];
  if (page.offset < recentCount) {
    rows.push(...(await recent.selectAll().orderBy("checked_at", "desc").orderBy("id", "desc").limit(page.limit).offset(page.offset).execute()));
  }
  if (packed === null) return { rows, total: hotTotal };

  const metas = await blockMetas(db, monitorId, f.from, f.to === undefined ? undefined : f.to + 1);
  const chunks = packedChunks(db, monitorId, f, metas, late);
  // the late rows are counted inside the chunks they fall in
  let total = recentCount;
  for (const c of chunks) total += await c.count();
  let skip = Math.max(0, page.offset - recentCount);
  let need = page.limit - rows.length;
  for (const c of chunks) {
    if (need <= 0) break;
    const count = await c.count();
    if (skip >= count) {
      skip -= count;
      continue;
    }
    const list = await c.read();
    const taken = list.slice(skip, skip + need);
    rows.push(...taken.map(asRow));
    need -= taken.length;
    skip = 0;
  }
  return { rows, total };
}

/**
 * The older checks as chunks, newest first: each block (with any late rows in its time merged in)
 * and the late rows that fall between blocks. A block wholly inside the filter's time range with
 * no region filter is counted from its counts without being unpacked.
 */
function packedChunks(db: Db, monitorId: number, f: CheckFilter, metas: BlockMeta[], late: PackedCheck[]): Chunk[] {
  const out: Chunk[] = [];
  const fixed = (list: PackedCheck[]) => out.push({ count: async () => list.length, read: async () => list });
  let i = 0;
  for (const b of metas) {
    const end = blockEnd(b);
    const between: PackedCheck[] = [];
    while (i < late.length && late[i]!.checked_at >= end) between.push(late[i++]!);
    if (between.length) fixed(between);
    const inside: PackedCheck[] = [];
    while (i < late.length && late[i]!.checked_at >= b.block_start) inside.push(late[i++]!);
    const whole = !f.region && (f.from === undefined || f.from <= b.block_start) && (f.to === undefined || f.to >= end - 1);
    let decoded: Promise<PackedCheck[]> | null = null;
    const read = () =>
      (decoded ??= readBlock(db, monitorId, b.block_start).then((list) => [...list.filter((c) => matches(c, f)), ...inside].sort(newestFirst)));
    const counted = whole ? (f.status ? (b[`${f.status}_count` as keyof BlockMeta] as number | undefined) ?? 0 : blockCount(b)) + inside.length : null;
    out.push({ count: async () => counted ?? (await read()).length, read });
  }
  if (i < late.length) fixed(late.slice(i));
  return out;
}
