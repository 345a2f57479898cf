/**
 * The ping journal's fold: journaled pings written into their permanent rows in the main database
 * (a monitor_events ping and an up check each, through the writers of store/monitor-events.ts and
 * store/checks.ts, and the monitor's bookkeeping), on whichever connection folds: the serving
 * thread's (store/ping-journal.ts) or the fold worker's (ping-fold-worker.ts).
 *
 * Which pings are folded is each monitor's watermark (monitors.heartbeat_journal_through, the
 * newest ping id folded), moved in the fold's own transaction: the worker and a reader's settle
 * folding the same pings, or a replay of records a crash left, write nothing twice.
 */
import type { Database, Statement } from "bun:sqlite";
import { prepareCheckFold } from "./checks.ts";
import { prepareEventFold } from "./monitor-events.ts";
import type { JournaledPing } from "./ping-journal-file.ts";

export interface PingFold {
  /**
   * Writes these monitors' pings to monitor_events and checks (in monitor, then arrival order) and
   * moves each monitor's bookkeeping and watermark forward to the newest of them. Each list is one
   * monitor's, in id order. Pings at or below the monitor's watermark (folded before) and pings of
   * a monitor that no longer exists are not written. Returns how many pings were written. Runs
   * inside a transaction of the caller's.
   */
  fold(monitors: readonly (readonly JournaledPing[])[]): number;
}

/**
 * The next slice of a fold pass: whole monitors in `order` from place `from`, until `limit` pings
 * are reached or passed, so a monitor's rows go in together; a monitor with no pings is skipped.
 * `done` holds each monitor with its newest ping id; `next` is where the following slice starts.
 */
export function takeSlice(
  order: readonly number[], from: number, limit: number, pingsOf: (monitorId: number) => readonly JournaledPing[] | undefined,
): { monitors: (readonly JournaledPing[])[]; done: [number, number][]; next: number } {
  const monitors: (readonly JournaledPing[])[] = [];
  const done: [number, number][] = [];
  let i = from;
  let n = 0;
  while (i < order.length && n < limit) {
    const id = order[i++]!;
    const pings = pingsOf(id);
    if (pings === undefined || pings.length === 0) continue;
    monitors.push(pings);
    done.push([id, pings[pings.length - 1]!.id]);
    n += pings.length;
  }
  return { monitors, done, next: i };
}

/** Through prepared statements, the monitor's watermark read once per monitor, the rows many to an INSERT. */
export function preparePingFold(sqlite: Database, region: string): PingFold {
  const mark = sqlite.prepare("SELECT coalesce(heartbeat_journal_through, 0) AS n FROM monitors WHERE id = ? AND monitor_type = 'heartbeat'") as Statement<{ n: number }, [number]>;
  const events = prepareEventFold(sqlite);
  const checks = prepareCheckFold(sqlite, region);
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
        for (const pings of monitors) {
          if (pings.length === 0) continue;
          const monitorId = pings[0]!.monitorId;
          // no row: the monitor was deleted (or is no longer a heartbeat), and its pings go with it
          const through = mark.get(monitorId)?.n;
          if (through === undefined) continue;
          let newest = pings[0]!;
          for (const p of pings) {
            if (p.at >= newest.at) newest = p;
            if (p.id <= through) continue;
            events.addPing(monitorId, p.at, p.sourceIp, p.durationMs);
            checks.addPing(monitorId, p.at, p.durationMs);
            written++;
          }
          touch.run(newest.at, newest.deadlineAt, monitorId, pings[pings.length - 1]!.id);
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

/** Each heartbeat monitor's watermark (0: nothing folded): pings at or below it are folded. */
export function watermarks(sqlite: Database): Map<number, number> {
  const rows = sqlite.query("SELECT id, coalesce(heartbeat_journal_through, 0) AS n FROM monitors WHERE monitor_type = 'heartbeat'").all() as { id: number; n: number }[];
  return new Map(rows.map((r) => [r.id, r.n]));
}
