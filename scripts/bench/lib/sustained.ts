/**
 * Sustained runs (issue 18, point 9): what a server does minute by minute as its tables grow. A
 * sample is taken at the end of every interval, and each row of the report is the difference
 * between two samples:
 * - CPU per thread, from /proc/<pid>/task (the workers name their threads: vigil-fold,
 *   vigil-checkpnt, vigil-maint; the serving thread's id is the process's), and the read(2) and write(2) bytes
 *   of the thread that writes the rows (the fold worker's for pings, the serving thread's for
 *   checks) from /proc/<pid>/task/<tid>/io: SQLite reads a page its connection's page cache misses
 *   with one pread and writes each committed page to the WAL, so those bytes per row are its cache
 *   misses and its WAL frames (for pings, the journal segments the fold reads add ~70 bytes a row);
 * - rows written, from sqlite_sequence (ids are AUTOINCREMENT and nothing is deleted during a run
 *   shorter than the packing grace), the database's and the WAL file's size, the server's /metrics
 *   (checkpoint durations, WAL frames, pings not folded yet);
 * - optionally the b-trees of the tables and indexes that grow (pages, depth, fill), through
 *   SQLite's dbstat on a read-only connection: it reads every page of those b-trees, ~1 s a sample
 *   at 30 million rows, so it is taken after the interval's measurement, not during it.
 */
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fmt } from "./load.ts";
import { scrape, total, type Scrape } from "./metrics.ts";

const CLK_TCK = 100;

/** CPU seconds by thread name; the process's own thread is "serving", unnamed others are summed as "other". */
export function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = Number(tid) === pid ? "serving" : comm.startsWith("vigil-") ? comm : "other";
      out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) / CLK_TCK);
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** read(2)/write(2) bytes of the named thread ("serving": the process's own; 0 when it does not exist). */
export function threadIo(pid: number, name: string): { read: number; written: number } {
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      if (name === "serving" ? Number(tid) !== pid : readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim() !== name) continue;
      const io = readFileSync(`/proc/${pid}/task/${tid}/io`, "utf8");
      const g = (k: string) => Number(io.match(new RegExp(`${k}: (\\d+)`))?.[1] ?? 0);
      return { read: g("rchar"), written: g("wchar") };
    } catch {
      // gone
    }
  }
  return { read: 0, written: 0 };
}

export interface BtreeStats {
  pages: number;
  depth: number;
  /** share of the pages' bytes in use */
  fill: number;
}

export interface Sample {
  at: number;
  cpu: Map<string, number>;
  /** of the thread that writes the rows (SamplerOptions.writer) */
  writerIo: { read: number; written: number };
  /** newest id per AUTOINCREMENT table */
  seq: Map<string, number>;
  /** rows per counted table (SamplerOptions.counts) */
  counts: Map<string, number>;
  dbBytes: number;
  walBytes: number;
  metrics: Scrape;
  btrees: Map<string, BtreeStats> | null;
}

/** B-trees whose growth the heartbeat report follows (the scheduler's: the first two). */
export const GROWING = ["checks", "checks_monitor_time", "monitor_events", "monitor_events_monitor_at"];

export interface SamplerOptions {
  /** the thread that writes the rows followed: "vigil-fold" (pings), "serving" (checks) */
  writer: string;
  /** b-trees to follow through dbstat (none: skip) */
  btrees: string[];
  /** tables whose rows are counted at every sample (rows are deleted from them during the run) */
  counts?: string[];
}

export class Sampler {
  private readonly db: Database;
  private readonly seqQuery;
  private readonly btreeQuery;

  constructor(
    private readonly pid: number,
    private readonly dataDir: string,
    private readonly url: string,
    private readonly o: SamplerOptions,
  ) {
    this.db = new Database(join(dataDir, "vigil.db"), { readonly: true });
    this.db.exec("PRAGMA busy_timeout = 5000");
    this.seqQuery = this.db.query("SELECT name, seq FROM sqlite_sequence");
    this.btreeQuery = this.db.query(
      "SELECT count(*) AS pages, max(length(path) - length(replace(path, '/', ''))) AS depth, sum(pgsize - unused) * 1.0 / sum(pgsize) AS fill FROM dbstat WHERE name = ?",
    );
  }

  async sample(): Promise<Sample> {
    const at = performance.now();
    const cpu = threadCpu(this.pid);
    const writerIo = threadIo(this.pid, this.o.writer);
    const metrics = await scrape(this.url);
    const seq = new Map((this.seqQuery.all() as { name: string; seq: number }[]).map((r) => [r.name, r.seq]));
    const size = (f: string) => (existsSync(join(this.dataDir, f)) ? statSync(join(this.dataDir, f)).size : 0);
    let btrees: Map<string, BtreeStats> | null = null;
    if (this.o.btrees.length) {
      btrees = new Map();
      for (const name of this.o.btrees) btrees.set(name, this.btreeQuery.get(name) as BtreeStats);
    }
    const counts = new Map((this.o.counts ?? []).map((t) => [t, this.count(t)]));
    return { at, cpu, writerIo, seq, counts, dbBytes: size("vigil.db"), walBytes: size("vigil.db-wal"), metrics, btrees };
  }

  /** rows now in a table (exact: one count, at the start) */
  count(table: string): number {
    return (this.db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  }

  close(): void {
    this.db.close();
  }
}

/** Buckets of a histogram summed over its label sets, between two scrapes: count, sum and the bound holding quantile q. */
export function histogramDelta(a: Scrape, b: Scrape, name: string, q: number): { count: number; sum: number; le: number } {
  const byLe = new Map<number, number>();
  for (const [k, v] of b) {
    const m = k.match(new RegExp(`^${name}_bucket\\{.*le="([^"]+)".*\\}$`));
    if (!m) continue;
    const le = m[1] === "+Inf" ? Infinity : Number(m[1]);
    byLe.set(le, (byLe.get(le) ?? 0) + v - (a.get(k) ?? 0));
  }
  const buckets = [...byLe].sort((x, y) => x[0] - y[0]);
  const count = buckets.at(-1)?.[1] ?? 0;
  const rank = Math.max(1, Math.ceil(q * count));
  const le = count === 0 ? NaN : buckets.find(([, n]) => n >= rank)?.[0] ?? NaN;
  return { count, sum: total(b, `${name}_sum`) - total(a, `${name}_sum`), le };
}

/** What the store did between two samples. */
export interface StoreInterval {
  seconds: number;
  /** % of one core, by thread */
  cpu: Map<string, number>;
  /** rows added per AUTOINCREMENT table */
  rows: Map<string, number>;
  /** the writing thread's read(2) and write(2) bytes per row */
  readPerRow: number;
  writtenPerRow: number;
  checkpoints: number;
  checkpointMeanMs: number;
  /** the bucket bound holding the longest checkpoint */
  checkpointMaxMs: number;
  restarts: number;
  /**
   * How late the serving thread's event loop ran a 10 ms timer since the previous scrape: p99 and
   * max in ms (vigil_event_loop_delay_{p99,max}_seconds, reset at each scrape). A stall of the thread
   * (garbage collection, a synchronous call) shows here; a request that waits for a core does not.
   */
  loopP99Ms: number;
  loopMaxMs: number;
}

export function storeInterval(a: Sample, b: Sample, rowsTable: string): StoreInterval {
  const seconds = (b.at - a.at) / 1000;
  const cpu = new Map<string, number>();
  for (const [k, v] of b.cpu) cpu.set(k, ((v - (a.cpu.get(k) ?? 0)) / seconds) * 100);
  const rows = new Map<string, number>();
  for (const [k, v] of b.seq) rows.set(k, v - (a.seq.get(k) ?? 0));
  const n = Math.max(1, rows.get(rowsTable) ?? 0);
  const ck = histogramDelta(a.metrics, b.metrics, "vigil_wal_checkpoint_duration_seconds", 1);
  return {
    seconds,
    cpu,
    rows,
    readPerRow: (b.writerIo.read - a.writerIo.read) / n,
    writtenPerRow: (b.writerIo.written - a.writerIo.written) / n,
    checkpoints: ck.count,
    checkpointMeanMs: ck.count ? (ck.sum / ck.count) * 1000 : 0,
    checkpointMaxMs: ck.le * 1000,
    restarts: total(b.metrics, "vigil_wal_checkpoint_duration_seconds_count", 'mode="restart"') - total(a.metrics, "vigil_wal_checkpoint_duration_seconds_count", 'mode="restart"'),
    loopP99Ms: total(b.metrics, "vigil_event_loop_delay_p99_seconds") * 1000,
    loopMaxMs: total(b.metrics, "vigil_event_loop_delay_max_seconds") * 1000,
  };
}

const MiB = 1024 * 1024;

/** The store's side of an interval as one line (header: storeHeader), the writing thread's CPU and bytes per row. */
export function storeHeader(writer: string): string {
  return `  serving  fold  ckpt  maint  other  ${`${writer} µs/row`.padStart(17)}  read B/row  WAL B/row  ckpts  mean ms  max ms  restarts  WAL MiB   db MiB  loop p99 ms  loop max ms`;
}

export function storeLine(s: StoreInterval, b: Sample, rowsTable: string, writer: string): string {
  const c = (k: string) => fmt(s.cpu.get(k) ?? 0).padStart(k === "serving" ? 8 : 5);
  const rows = Math.max(1, s.rows.get(rowsTable) ?? 0);
  const us = ((s.cpu.get(writer) ?? 0) / 100) * s.seconds * 1e6 / rows;
  return (
    `${c("serving")}% ${c("vigil-fold")}% ${c("vigil-checkpnt")}% ${c("vigil-maint")}% ${fmt(s.cpu.get("other") ?? 0).padStart(5)}%` +
    `  ${fmt(us, 2).padStart(17)}  ${fmt(s.readPerRow).padStart(10)}  ${fmt(s.writtenPerRow).padStart(9)}` +
    `  ${fmt(s.checkpoints).padStart(5)}  ${fmt(s.checkpointMeanMs, 1).padStart(7)}  ${fmt(s.checkpointMaxMs).padStart(6)}  ${fmt(s.restarts).padStart(8)}` +
    `  ${fmt(b.walBytes / MiB).padStart(7)}  ${fmt(b.dbBytes / MiB).padStart(7)}` +
    `  ${fmt(s.loopP99Ms, 2).padStart(11)}  ${fmt(s.loopMaxMs, 1).padStart(11)}`
  );
}

/** The b-trees at a sample, one line. */
export function btreeLine(b: Sample): string {
  if (!b.btrees) return "";
  return [...b.btrees].map(([name, s]) => `${name} ${fmt(s.pages)} pages, depth ${s.depth}, ${fmt(s.fill * 100)}% full`).join("; ");
}

/** The last interval's figure over the first's. */
export function flatness(values: number[]): { first: number; last: number; ratio: number } {
  const first = values[0] ?? NaN;
  const last = values.at(-1) ?? NaN;
  return { first, last, ratio: last / first };
}
