/**
 * The byte format of a packed block of one monitor's checks (table check_blocks).
 *
 * Why a format of our own: a check row costs ~63 bytes as a table row plus its index entry, so 30
 * days of 10,000 monitors at 60 s (432 million checks) would be ~26 GiB. Packed column by column,
 * the checks of a monitor are nearly all alike: ids and times advance by almost the same step
 * (stored as the change of the step), status, region, HTTP code and resolved IP repeat (stored as
 * runs), and only the latency carries real information. That is ~3 bytes a check, and zstd takes
 * it to ~2-3 bytes on a day's block (scripts/bench/storage.ts measures it).
 *
 * Layout (after one leading byte: 0 = as is, 1 = zstd):
 *   count, then ids (first, then delta-of-delta), times (same), latencies (0 = null, else
 *   zigzag + 1), then each other column as runs of (length, value).
 * Checks are kept in (checked_at, id) order, oldest first.
 */
import type { CheckRow } from "./tables.ts";

/** What a block holds of a check: the row without result_uid (used only to refuse repeats of fresh results) and the timings (check-blocks.ts). */
export type PackedCheck = Omit<CheckRow, "result_uid" | "dns_ms" | "connect_ms" | "tls_ms" | "ttfb_ms">;

/** The columns stored as runs, in format order. Changing it changes the format: add a version byte first. */
const RUN_COLUMNS = [
  "region", "status", "http_code", "error_code", "error_message", "degraded_reason", "resolved_ip", "ssl_not_after", "dns_answer", "synthetic_trace_json",
] as const satisfies readonly (keyof PackedCheck)[];

type RunValue = string | number | null;

const FORMAT_RAW = 0;
const FORMAT_ZSTD = 1;
const TAG_NULL = 0;
const TAG_INT = 1;
const TAG_TEXT = 2;
const TAG_FLOAT = 3;

/** A block that cannot be read back (disk damage): its monitor's packed checks are unreadable, others are not. */
export class DamagedBlockError extends Error {
  override name = "DamagedBlockError";
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

class Writer {
  private buf = new Uint8Array(256);
  length = 1; // byte 0 is the format

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.length + n));
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  /** unsigned varint; arithmetic rather than bit operations so values up to 2^53 survive */
  uint(n: number): void {
    this.room(8);
    while (n >= 128) {
      this.buf[this.length++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.length++] = n;
  }

  int(n: number): void {
    this.uint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  bytes(b: Uint8Array): void {
    this.uint(b.length);
    this.room(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  uint(): number {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (this.pos >= this.buf.length) throw new DamagedBlockError("check block is truncated");
      const b = this.buf[this.pos++]!;
      n += (b & 127) * scale;
      if (b < 128) return n;
      scale *= 128;
    }
  }

  int(): number {
    const z = this.uint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  bytes(): Uint8Array {
    const n = this.uint();
    if (this.pos + n > this.buf.length) throw new DamagedBlockError("check block is truncated");
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function writeSteps(w: Writer, values: number[]): void {
  if (values.length === 0) return;
  w.uint(values[0]!);
  let step = 0;
  for (let i = 1; i < values.length; i++) {
    const d = values[i]! - values[i - 1]!;
    w.int(d - step);
    step = d;
  }
}

function readSteps(r: Reader, n: number): number[] {
  if (n === 0) return [];
  const out = [r.uint()];
  let step = 0;
  for (let i = 1; i < n; i++) {
    step += r.int();
    out.push(out[i - 1]! + step);
  }
  return out;
}

function writeValue(w: Writer, v: RunValue): void {
  if (v === null) w.uint(TAG_NULL);
  else if (typeof v === "string") {
    w.uint(TAG_TEXT);
    w.bytes(utf8.encode(v));
  } else if (Number.isSafeInteger(v)) {
    w.uint(TAG_INT);
    w.int(v);
  } else {
    w.uint(TAG_FLOAT);
    w.bytes(utf8.encode(String(v)));
  }
}

function readValue(r: Reader): RunValue {
  const tag = r.uint();
  if (tag === TAG_NULL) return null;
  if (tag === TAG_INT) return r.int();
  if (tag === TAG_TEXT) return fromUtf8.decode(r.bytes());
  if (tag === TAG_FLOAT) return Number(fromUtf8.decode(r.bytes()));
  throw new DamagedBlockError(`check block has an unknown value tag ${tag}`);
}

/** Orders checks as a block keeps them: by time, then id. */
export function byTimeThenId(a: { checked_at: number; id: number }, b: { checked_at: number; id: number }): number {
  return a.checked_at - b.checked_at || a.id - b.id;
}

/** Packs one monitor's checks (any order; ids and times must be non-negative integers). */
export function encodeChecks(checks: readonly PackedCheck[]): Uint8Array {
  const list = [...checks].sort(byTimeThenId);
  const w = new Writer();
  w.uint(list.length);
  writeSteps(w, list.map((c) => c.id));
  writeSteps(w, list.map((c) => c.checked_at));
  for (const c of list) w.uint(c.latency_ms === null ? 0 : (c.latency_ms >= 0 ? c.latency_ms * 2 : -c.latency_ms * 2 - 1) + 1);
  for (const col of RUN_COLUMNS) {
    const runs: [RunValue, number][] = [];
    for (const c of list) {
      const v = c[col] as RunValue;
      const last = runs[runs.length - 1];
      if (last && last[0] === v) last[1]++;
      else runs.push([v, 1]);
    }
    w.uint(runs.length);
    for (const [v, n] of runs) {
      w.uint(n);
      writeValue(w, v);
    }
  }
  const raw = w.finish();
  raw[0] = FORMAT_RAW;
  const packed = Bun.zstdCompressSync(raw.subarray(1), { level: 9 });
  if (packed.length + 1 >= raw.length) return raw.slice();
  const out = new Uint8Array(packed.length + 1);
  out[0] = FORMAT_ZSTD;
  out.set(packed, 1);
  return out;
}

/** The checks of a block for `monitorId`, oldest first. Throws DamagedBlockError on a damaged block. */
export function decodeChecks(monitorId: number, data: Uint8Array): PackedCheck[] {
  if (data.length === 0) throw new DamagedBlockError("check block is empty");
  const format = data[0];
  let body: Uint8Array | null;
  try {
    body = format === FORMAT_ZSTD ? Bun.zstdDecompressSync(data.subarray(1)) : format === FORMAT_RAW ? data.subarray(1) : null;
  } catch (err) {
    throw new DamagedBlockError(`check block does not decompress: ${(err as Error).message}`);
  }
  if (!body) throw new DamagedBlockError(`check block has an unknown format ${format}`);
  const r = new Reader(body);
  const n = r.uint();
  const ids = readSteps(r, n);
  const times = readSteps(r, n);
  const out: PackedCheck[] = [];
  for (let i = 0; i < n; i++) {
    const l = r.uint();
    out.push({
      id: ids[i]!, monitor_id: monitorId, region: "", status: "", checked_at: times[i]!,
      latency_ms: l === 0 ? null : (l - 1) % 2 === 0 ? (l - 1) / 2 : -l / 2,
      http_code: null, error_code: null, error_message: null, degraded_reason: null, resolved_ip: null, ssl_not_after: null, dns_answer: null, synthetic_trace_json: null,
    });
  }
  for (const col of RUN_COLUMNS) {
    const runs = r.uint();
    let i = 0;
    for (let k = 0; k < runs; k++) {
      const len = r.uint();
      const v = readValue(r);
      if (i + len > n) throw new DamagedBlockError("check block's runs are longer than its checks");
      for (const end = i + len; i < end; i++) (out[i] as Record<string, RunValue>)[col] = v;
    }
    if (i !== n) throw new DamagedBlockError("check block's runs are shorter than its checks");
  }
  return out;
}
