/**
 * The ping journal's statements (schema: ping_journal). A plain ping on an up heartbeat monitor is
 * appended here and acknowledged once that commits; about a second later it is folded into its
 * permanent rows: a monitor_events ping, an up check and the monitor's bookkeeping columns.
 *
 * Why: written directly, each ping inserted into two (monitor_id, time) indexes and updated its
 * monitor row, three random pages per ping in every commit. Heartbeat bench profile: those inserts,
 * the UPDATE and the COMMIT writing their pages were ~60% of the server's CPU, and a micro bench of
 * the same tables (10,000 monitors, 500k rows) cost 31.8 µs a ping against 7.2 µs appended here and
 * folded 50,000 at a time in monitor order, where a monitor's rows share their index pages.
 *
 * Like store/ping-statements.ts these are prepared on the raw connection and run only inside a
 * write-queue transaction.
 */
import type { Database, Statement } from "bun:sqlite";

export interface JournalEntry {
  /** given by the writer, increasing, never reused: a fold that finds it gone knows it was folded */
  id: number;
  monitorId: number;
  at: number;
  sourceIp: string | null;
  durationMs: number | null;
  /** the monitor's deadline as this ping left it */
  deadlineAt: number | null;
}

export interface PingJournalStatements {
  append(e: JournalEntry): void;
  /**
   * Writes these monitors' journaled pings to monitor_events and checks (in monitor, then arrival
   * order), moves each monitor's bookkeeping forward to the newest of them and deletes them from
   * the journal. An entry no longer in the journal (folded before) is not written again; a monitor
   * that no longer exists only loses its entries. Returns how many pings were written.
   */
  fold(monitors: readonly (readonly JournalEntry[])[]): number;
  /** every entry on disk, oldest first: what the last run acknowledged and did not fold */
  all(): JournalEntry[];
}

type Row = { id: number; monitor_id: number; at: number; source_ip: string | null; duration_ms: number | null; deadline_at: number | null };

export function preparePingJournal(sqlite: Database, region: string): PingJournalStatements {
  const append = sqlite.prepare("INSERT INTO ping_journal (id, monitor_id, at, source_ip, duration_ms, deadline_at) VALUES (?, ?, ?, ?, ?, ?)");
  const all = sqlite.prepare("SELECT id, monitor_id, at, source_ip, duration_ms, deadline_at FROM ping_journal ORDER BY id") as Statement<Row, []>;
  // Set-based, the ids passed as one JSON array: reading the rows from the journal itself is what
  // makes a second fold of the same entry write nothing, and one statement per slice instead of
  // three calls per ping saves bun:sqlite's per-call cost (~1 µs each in the bench profile). The
  // array is in slice order (monitor by monitor), which CROSS JOIN keeps, so the rows reach the
  // (monitor_id, time) indexes in index order without a sort (fold micro bench, 10,000 monitors,
  // 500k rows: 10.6 against 13.6 µs a folded ping with IN (...) ORDER BY, four runs each).
  const picked = "SELECT j.monitor_id, j.at, j.source_ip, j.duration_ms FROM json_each(?1) AS v CROSS JOIN ping_journal j ON j.id = v.value";
  const events = sqlite.prepare(`INSERT INTO monitor_events (monitor_id, kind, at, result, source_ip, duration_ms) SELECT monitor_id, 'ping', at, 'accepted', source_ip, duration_ms FROM (${picked})`);
  const checks = sqlite.prepare(`INSERT INTO checks (monitor_id, region, status, checked_at, latency_ms) SELECT monitor_id, ?2, 'up', at, duration_ms FROM (${picked})`);
  const remove = sqlite.prepare("DELETE FROM ping_journal WHERE id IN (SELECT value FROM json_each(?))");
  // Monotonic, so a fold arriving after a newer write of these columns never moves them back. The
  // deadline is the newest ping's only while the monitor is still up and running: a pause or a flip
  // since has set its own, and the evaluation that follows every change recomputes it anyway.
  const touch = sqlite.prepare(
    `UPDATE monitors SET
       heartbeat_last_ping_at = max(coalesce(heartbeat_last_ping_at, 0), ?1),
       last_checked_at = max(coalesce(last_checked_at, 0), ?1),
       heartbeat_last_start_at = CASE WHEN heartbeat_last_start_at <= ?1 THEN NULL ELSE heartbeat_last_start_at END,
       heartbeat_deadline_at = CASE WHEN is_paused = 0 AND last_status = 'up' AND coalesce(heartbeat_last_ping_at, 0) <= ?1 THEN ?2 ELSE heartbeat_deadline_at END
     WHERE id = ?3 AND monitor_type = 'heartbeat'`,
  );
  return {
    append: (e) => {
      append.run(e.id, e.monitorId, e.at, e.sourceIp, e.durationMs, e.deadlineAt);
    },
    fold: (monitors) => {
      const live: number[] = [];
      const gone: number[] = [];
      for (const entries of monitors) {
        if (entries.length === 0) continue;
        let newest = entries[0]!;
        for (const e of entries) if (e.at >= newest.at) newest = e;
        // the journal entries are committed ones, so the bookkeeping may move before they are written
        const into = touch.run(newest.at, newest.deadlineAt, newest.monitorId).changes === 1 ? live : gone;
        for (const e of entries) into.push(e.id);
      }
      let written = 0;
      if (live.length > 0) {
        const ids = JSON.stringify(live);
        written = events.run(ids).changes;
        checks.run(ids, region);
        remove.run(ids);
      }
      if (gone.length > 0) remove.run(JSON.stringify(gone));
      return written;
    },
    all: () => all.all().map((r) => ({ id: r.id, monitorId: r.monitor_id, at: r.at, sourceIp: r.source_ip, durationMs: r.duration_ms, deadlineAt: r.deadline_at })),
  };
}
