/**
 * The ping store on PostgreSQL (the interface: ping-store.ts). There is no journal and no row
 * cache: every batch is one job of the write queue, answered once it commits. Its statements (the
 * interface: ping-statements.ts) read the rows of all its monitors in one query, and write its
 * events, checks and bookkeeping in one statement when it flushes (gathered-rows.ts), all on the
 * write queue's transaction: a few round trips per batch whatever its size, where a statement per
 * ping would cost one per ping. Several instances may share the database, each taking pings.
 */
import { CompiledQuery } from "kysely";
import { gatherCheckRows } from "./checks.ts";
import type { Db } from "./database.ts";
import { GatheredRows, statementFrom, writeGathered } from "./gathered-rows.ts";
import { gatherEventRows } from "./monitor-events.ts";
import { nothingJournaled } from "./ping-journal.ts";
import { PING_MONITOR_COLUMNS, type BatchStatements, type PingMonitorRow } from "./ping-statements.ts";
import type { PingStore, PingStoreOptions } from "./ping-store.ts";

/**
 * Locked in id order until the commit: two instances' batches for the same monitors take turns
 * instead of deadlocking, and the second reads what the first wrote (pings sent to both instances
 * of a pair never move the row back). NO KEY: the event and check rows that reference the monitor,
 * this batch's or anyone's, take only KEY SHARE on it, which this does not block.
 */
const READ_ROWS = `SELECT ${PING_MONITOR_COLUMNS.join(", ")} FROM monitors WHERE id = ANY($1::bigint[]) ORDER BY id FOR NO KEY UPDATE`;

const UPDATE_BOOKKEEPING = statementFrom(
  (first) => `UPDATE monitors AS m SET heartbeat_last_ping_at = v.last_ping, heartbeat_last_start_at = v.last_start, heartbeat_deadline_at = v.deadline, last_checked_at = v.checked
     FROM unnest($${first}::bigint[], $${first + 1}::bigint[], $${first + 2}::bigint[], $${first + 3}::bigint[], $${first + 4}::bigint[]) AS v(id, last_ping, last_start, deadline, checked)
     WHERE m.id = v.id`,
);

const NO_DEADLINES: ReadonlyMap<number, number | null> = new Map();

export function openGatheredPingStore(db: Db, o: PingStoreOptions): PingStore {
  const nothingTaken = async () => {};
  return {
    sharedByInstances: true,
    // nothing waits: every acknowledged ping is in its rows
    reads: nothingJournaled(db),
    waiting: 0,
    take: (ops) => ({ accepted: [], deadlines: NO_DEADLINES, rest: ops.map((_, i) => i) }),
    write: (_ops, apply) => o.writes.run((trx) => apply(trx, batchStatements(trx, o.region)), { gathered: true }),
    forget() {},
    afterBatch() {},
    start: nothingTaken,
    settleAll: nothingTaken,
    close: nothingTaken,
  };
}

function batchStatements(trx: Db, region: string): BatchStatements {
  const events = gatherEventRows();
  const checks = gatherCheckRows(region);
  const bookkeeping = new GatheredRows(5, UPDATE_BOOKKEEPING);
  const [id, lastPing, lastStart, deadline, checked] = [0, 1, 2, 3, 4];
  return {
    async pingMonitors(ids) {
      const rows = new Map<number, PingMonitorRow | null>();
      for (const id of ids) rows.set(id, null);
      const found = await trx.executeQuery<PingMonitorRow>(CompiledQuery.raw(READ_ROWS, [[...rows.keys()]]));
      for (const r of found.rows) rows.set(r.id, r);
      return rows;
    },
    async monitor(id) {
      return (await trx.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirst()) ?? null;
    },
    events,
    checks,
    updateBookkeeping(r) {
      const c = bookkeeping.columns;
      c[id]!.push(r.id);
      c[lastPing]!.push(r.heartbeat_last_ping_at);
      c[lastStart]!.push(r.heartbeat_last_start_at);
      c[deadline]!.push(r.heartbeat_deadline_at);
      c[checked]!.push(r.last_checked_at);
      bookkeeping.added();
    },
    flush: () => writeGathered(trx, [events.rows, checks.rows, bookkeeping]),
  };
}
