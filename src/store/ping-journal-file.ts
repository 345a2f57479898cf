/**
 * The ping journal on disk: `<data>/ping-journal/`, a directory of append-only segment files. A
 * ping batch's journaled pings are one record, written with one write(2) before the batch is
 * acknowledged.
 *
 * Why not an SQLite file: an SQLite transaction per batch (BEGIN, the insert, the WAL frames of the
 * table's pages, COMMIT) cost about ten times a write(2) of the same bytes, and was a fifth of the
 * serving thread (BENCHMARKS.md, heartbeat: "the journal as append-only segment files"). The
 * durability is the same as the main database's (WAL, synchronous=NORMAL): a written record is in
 * the page cache and survives a crash of the process; neither is fsynced per commit.
 *
 * A record: payload length (u32 LE), CRC-32 of the rest (u32 LE), batch id (f64 LE), then the pings
 * as a JSON array of arrays, [id, monitor id, at, source ip, duration ms, deadline at]: compact, and
 * only this file knows the order. A reader stops at the first record that is short or whose CRC does
 * not match: the tail a crash or a full disk cut off, never acknowledged. A write that fails is cut
 * off again at once (or, if that fails too, the segment is left for a new one), so a bad record is
 * only ever the last of its file.
 *
 * Segments: the writer starts a new one when it opens and whenever folded batches are dropped, and
 * deletes a closed segment once every batch in it is folded. So a segment lives about two fold
 * passes, and the fold worker reads only batches past the last pass by their ids in the headers.
 */
import { closeSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { makePrivateDir, PRIVATE_FILE_MODE, restrictToOwner } from "../lib/private-files.ts";

export const JOURNAL_DIR = "ping-journal";

/** An acknowledged plain ping on an up monitor, as the journal holds it until it is folded. */
export interface JournaledPing {
  /** given by the journal's writer, increasing across restarts: a monitor's watermark compares against it */
  id: number;
  monitorId: number;
  at: number;
  sourceIp: string | null;
  /** how long the job ran, after a /start */
  durationMs: number | null;
  /** the monitor's deadline as this ping left it */
  deadlineAt: number | null;
}

/** A ping as a record holds it. */
type EncodedPing = [number, number, number, string | null, number | null, number | null];

const encodePing = (p: JournaledPing): EncodedPing => [p.id, p.monitorId, p.at, p.sourceIp, p.durationMs, p.deadlineAt];
const decodePing = (e: EncodedPing): JournaledPing => ({ id: e[0], monitorId: e[1], at: e[2], sourceIp: e[3], durationMs: e[4], deadlineAt: e[5] });

const HEADER = 16;
const SEGMENT = /^(\d{12})\.log$/;

/** The journal's writer: only the process's serving thread has one. */
export interface PingJournalFile {
  /** Appends one batch's pings as batch `batchId`; throws (ENOSPC, EIO, ...) if they were not written. */
  append(batchId: number, pings: readonly JournaledPing[]): void;
  /** Deletes what holds only batches up to `batchId` (everything in them is folded) and starts a new segment. */
  dropBatches(batchId: number): void;
  /** the directory */
  path: string;
  close(): void;
}

export interface JournalBatch {
  id: number;
  pings: JournaledPing[];
}

interface Segment {
  file: string;
  /** the newest batch in it (0: none) */
  lastBatch: number;
}

export function openPingJournal(dataDir: string): PingJournalFile {
  const dir = join(dataDir, JOURNAL_DIR);
  makePrivateDir(dir);
  restrictToOwner(dir);
  const closed: Segment[] = [];
  let seq = 0;
  // which batches each segment holds, from the record headers alone: whoever replays the pings
  // (start-up) reads them with readJournalBatches
  for (const name of segmentNames(dir)) {
    seq = Math.max(seq, Number(SEGMENT.exec(name)![1]));
    const seg: Segment = { file: join(dir, name), lastBatch: 0 };
    eachRecord(readSegmentFile(seg.file), (id) => (seg.lastBatch = Math.max(seg.lastBatch, id)));
    closed.push(seg);
  }

  // the segment being written: opened at the first append after a start or a drop
  let active: (Segment & { fd: number; size: number }) | null = null;
  const openSegment = () => {
    for (;;) {
      const file = join(dir, `${String(++seq).padStart(12, "0")}.log`);
      try {
        // exclusive: another writer on the directory (a test's, say) never shares a segment
        return { file, lastBatch: 0, fd: openSync(file, "wx", PRIVATE_FILE_MODE), size: 0 };
      } catch (err) {
        if ((err as { code?: string }).code !== "EEXIST") throw err;
      }
    }
  };
  const closeActive = () => {
    if (active === null) return;
    closeSync(active.fd);
    closed.push({ file: active.file, lastBatch: active.lastBatch });
    active = null;
  };

  return {
    path: dir,
    append(batchId, pings) {
      const seg = (active ??= openSegment());
      const record = encodeRecord(batchId, pings);
      try {
        for (let off = 0; off < record.length; ) {
          const n = writeSync(seg.fd, record, off, record.length - off);
          if (n <= 0) throw Object.assign(new Error("the ping journal could not be written"), { code: "EIO" });
          off += n;
        }
      } catch (err) {
        try {
          ftruncateSync(seg.fd, seg.size);
        } catch {
          // a torn record stays at this segment's end, where readers stop: later records go elsewhere
          closeActive();
        }
        throw err;
      }
      seg.size += record.length;
      seg.lastBatch = batchId;
    },
    dropBatches(batchId) {
      closeActive();
      for (let i = closed.length - 1; i >= 0; i--) {
        if (closed[i]!.lastBatch > batchId) continue;
        rmSync(closed[i]!.file, { force: true });
        closed.splice(i, 1);
      }
    },
    close: () => {
      if (active !== null) closeSync(active.fd);
      active = null;
    },
  };
}

/**
 * The batches after `after` up to `through` in a data directory's journal, read without a writer
 * (start-up's replay, the fold worker's passes, backups, tests). Segments deleted while it reads are
 * skipped: only folded batches are deleted.
 */
export function readJournalBatches(dataDir: string, after = 0, through = Infinity): JournalBatch[] {
  const dir = join(dataDir, JOURNAL_DIR);
  const out: JournalBatch[] = [];
  for (const name of segmentNames(dir)) readSegment(join(dir, name), after, through, out);
  return out;
}

/** Every ping in a data directory's journal, folded or not (the caller compares them with the watermarks): for `vigil backup`, the benchmarks and tests. */
export function readJournalFile(dataDir: string): JournaledPing[] {
  return readJournalBatches(dataDir).flatMap((b) => b.pings);
}

function segmentNames(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return [];
    throw err;
  }
  return names.filter((n) => SEGMENT.test(n)).sort();
}

function encodeRecord(batchId: number, pings: readonly JournaledPing[]): Buffer {
  const json = JSON.stringify(pings.map(encodePing));
  const length = Buffer.byteLength(json);
  const record = Buffer.allocUnsafe(HEADER + length);
  record.writeDoubleLE(batchId, 8);
  record.write(json, HEADER, "utf8");
  record.writeUInt32LE(length, 0);
  record.writeUInt32LE(Bun.hash.crc32(record.subarray(8)), 4);
  return record;
}

/**
 * Adds a segment's sound records in (after, through] to `out`; the JSON of the others is not parsed.
 * (Appended one by one: a segment from a long outage can hold more batches than a spread's
 * arguments may number.)
 */
function readSegment(file: string, after: number, through: number, out: JournalBatch[]): void {
  const data = readSegmentFile(file);
  eachRecord(data, (id, start, end) => {
    if (id > after && id <= through) out.push({ id, pings: (JSON.parse(data.toString("utf8", start, end)) as EncodedPing[]).map(decodePing) });
  });
}

/** A segment's bytes; none for a segment deleted meanwhile (only folded batches are deleted). */
function readSegmentFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return Buffer.alloc(0);
    throw err;
  }
}

/** Each sound record's batch id and where its pings' JSON lies, up to the first short or corrupt one. */
function eachRecord(data: Buffer, visit: (id: number, start: number, end: number) => void): void {
  for (let off = 0; off + HEADER <= data.length; ) {
    const length = data.readUInt32LE(off);
    const end = off + HEADER + length;
    if (end > data.length || Bun.hash.crc32(data.subarray(off + 8, end)) !== data.readUInt32LE(off + 4)) return;
    visit(data.readDoubleLE(off + 8), off + HEADER, end);
    off = end;
  }
}
