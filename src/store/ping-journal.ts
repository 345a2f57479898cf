/**
 * The ping journal. The plain pings on up heartbeat monitors that one ping batch accepts are
 * appended as one record of the journal's segment files (ping-journal-file.ts) and acknowledged
 * once it is written; seconds later they are folded into their permanent rows in the main database:
 * a monitor_events ping and an up check (through the writers of store/monitor-events.ts and
 * store/checks.ts, the one module for each table) and the monitor's bookkeeping columns.
 *
 * Why a journal: written directly, each ping inserted into two (monitor_id, time) indexes and
 * updated its monitor row, three random pages per ping in every commit (heartbeat bench profile:
 * ~60% of the server's CPU). Folded a few seconds of pings at a time in monitor order, a monitor's
 * rows share their index pages.
 *
 * Why outside the main database: the fold's inserts cost ~4 µs a ping when this was built (2.5 µs
 * since they go 32 rows to a statement, store/multi-row-insert.ts; BENCHMARKS.md), and on the
 * thread that serves pings they were a fifth of its time. A fold worker (heartbeat/fold-worker.ts) does them on its own connection,
 * and because the journal is not in the main database, a plain ping's append never waits for its
 * write lock while the worker holds it (a worker folding a journal kept in the main database left
 * the serving thread idle 22% of the time, waiting on that lock).
 *
 * Which entries are folded is each monitor's watermark (monitors.heartbeat_journal_through, the
 * newest entry id folded), moved in the fold's own transaction: the worker and a reader's settle
 * folding the same entries, or a replay of records a crash left, write nothing twice. A segment is
 * deleted once a fold pass has folded everything in it.
 */
import type { Database, Statement } from "bun:sqlite";
import { prepareCheckWrites } from "./checks.ts";
import { prepareEventWrites } from "./monitor-events.ts";

export interface JournalEntry {
  /** given by the writer, increasing across restarts: a monitor's watermark compares against it */
  id: number;
  monitorId: number;
  at: number;
  sourceIp: string | null;
  durationMs: number | null;
  /** the monitor's deadline as this ping left it */
  deadlineAt: number | null;
}

/** An entry as stored and folded: [id, monitor id, at, source ip, duration ms, deadline at]. */
export type StoredEntry = [number, number, number, string | null, number | null, number | null];

export const storedEntry = (e: JournalEntry): StoredEntry => [e.id, e.monitorId, e.at, e.sourceIp, e.durationMs, e.deadlineAt];
export const entryOf = (s: StoredEntry): JournalEntry => ({ id: s[0], monitorId: s[1], at: s[2], sourceIp: s[3], durationMs: s[4], deadlineAt: s[5] });

// ---------------------------------------------------------------------------------------------
// The fold, on the main database (the serving thread's connection or the fold worker's)

export interface PingFold {
  /**
   * Writes these monitors' entries to monitor_events and checks (in monitor, then arrival order)
   * and moves each monitor's bookkeeping and watermark forward to the newest of them. Each list is
   * one monitor's, in id order. Entries at or below the monitor's watermark (folded before) and
   * entries of a monitor that no longer exists are not written. Returns how many pings were
   * written. Runs inside a transaction of the caller's.
   */
  fold(monitors: readonly (readonly StoredEntry[])[]): number;
}

/**
 * The next slice of a fold pass: whole monitors in `order` from place `from`, until `limit` entries
 * are reached or passed, so a monitor's rows go in together; a monitor with no entries is skipped.
 * `done` holds each monitor with its newest entry id; `next` is where the following slice starts.
 */
export function takeSlice(
  order: readonly number[], from: number, limit: number, entriesOf: (monitorId: number) => readonly StoredEntry[] | undefined,
): { monitors: (readonly StoredEntry[])[]; done: [number, number][]; next: number } {
  const monitors: (readonly StoredEntry[])[] = [];
  const done: [number, number][] = [];
  let i = from;
  let n = 0;
  while (i < order.length && n < limit) {
    const id = order[i++]!;
    const entries = entriesOf(id);
    if (entries === undefined || entries.length === 0) continue;
    monitors.push(entries);
    done.push([id, entries[entries.length - 1]![0]]);
    n += entries.length;
  }
  return { monitors, done, next: i };
}

/** Through prepared statements, the monitor's watermark read once per monitor, the rows many to an INSERT. */
export function preparePingFold(sqlite: Database, region: string): PingFold {
  const mark = sqlite.prepare("SELECT coalesce(heartbeat_journal_through, 0) AS n FROM monitors WHERE id = ? AND monitor_type = 'heartbeat'") as Statement<{ n: number }, [number]>;
  const events = prepareEventWrites(sqlite);
  const checks = prepareCheckWrites(sqlite, region);
  // Monotonic, so a fold arriving after a newer write of these columns never moves them back. The
  // deadline is the newest ping's only while the monitor is still up and running: a pause or a flip
  // since has set its own, and the evaluation that follows every change recomputes it anyway. Reads
  // nothing the fold's INSERTs write, so it may run before the rows it accounts for are flushed.
  const touch = sqlite.prepare(
    `UPDATE monitors SET
       heartbeat_last_ping_at = max(coalesce(heartbeat_last_ping_at, 0), ?1),
       last_checked_at = max(coalesce(last_checked_at, 0), ?1),
       heartbeat_last_start_at = CASE WHEN heartbeat_last_start_at <= ?1 THEN NULL ELSE heartbeat_last_start_at END,
       heartbeat_deadline_at = CASE WHEN is_paused = 0 AND last_status = 'up' AND coalesce(heartbeat_last_ping_at, 0) <= ?1 THEN ?2 ELSE heartbeat_deadline_at END,
       heartbeat_journal_through = ?4
     WHERE id = ?3 AND monitor_type = 'heartbeat' AND coalesce(heartbeat_journal_through, 0) < ?4`,
  );
  return {
    fold: (monitors) => {
      let written = 0;
      try {
        for (const entries of monitors) {
          if (entries.length === 0) continue;
          const monitorId = entries[0]![1];
          // no row: the monitor was deleted (or is no longer a heartbeat), and its pings go with it
          const through = mark.get(monitorId)?.n;
          if (through === undefined) continue;
          let newest = entries[0]!;
          for (const e of entries) {
            if (e[2] >= newest[2]) newest = e;
            if (e[0] <= through) continue;
            events.addPing(monitorId, e[2], e[3], e[4]);
            checks.addPing(monitorId, e[2], e[4]);
            written++;
          }
          touch.run(newest[2], newest[5], monitorId, entries[entries.length - 1]![0]);
        }
        events.flush();
        checks.flush();
      } catch (err) {
        // the transaction is rolled back: rows gathered for it must not reach the next one
        events.discard();
        checks.discard();
        throw err;
      }
      return written;
    },
  };
}

/** Each heartbeat monitor's watermark (0: nothing folded): entries at or below it are folded. */
export function watermarks(sqlite: Database): Map<number, number> {
  const rows = sqlite.query("SELECT id, coalesce(heartbeat_journal_through, 0) AS n FROM monitors WHERE monitor_type = 'heartbeat'").all() as { id: number; n: number }[];
  return new Map(rows.map((r) => [r.id, r.n]));
}


// ---------------------------------------------------------------------------------------------
// The ping_journal table: the entries `vigil backup` copies out of the journal's files that its copy
// has not folded (store/backup.ts), which a server started on the restored copy folds at start-up;
// a build before migration 013 journaled there too.

export interface CarriedPings {
  /** its entries, oldest first */
  all(): JournalEntry[];
  /** Deletes entries up to `id` (they are folded); inside a transaction of the caller's. */
  clearThrough(id: number): void;
  /** Appends entries (a backup copy); inside a transaction of the caller's. */
  add(entries: readonly JournalEntry[]): void;
}

type CarriedRow = { id: number; monitor_id: number; at: number; source_ip: string | null; duration_ms: number | null; deadline_at: number | null };

export function carriedPings(sqlite: Database): CarriedPings {
  const all = sqlite.prepare("SELECT id, monitor_id, at, source_ip, duration_ms, deadline_at FROM ping_journal ORDER BY id") as Statement<CarriedRow, []>;
  const clear = sqlite.prepare("DELETE FROM ping_journal WHERE id <= ?");
  const insert = sqlite.prepare("INSERT OR IGNORE INTO ping_journal (id, monitor_id, at, source_ip, duration_ms, deadline_at) VALUES (?, ?, ?, ?, ?, ?)");
  return {
    all: () => all.all().map((r) => ({ id: r.id, monitorId: r.monitor_id, at: r.at, sourceIp: r.source_ip, durationMs: r.duration_ms, deadlineAt: r.deadline_at })),
    clearThrough: (id) => {
      clear.run(id);
    },
    add: (entries) => {
      for (const e of entries) insert.run(...storedEntry(e));
    },
  };
}
