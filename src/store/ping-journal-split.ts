/**
 * Which of a batch's ops the ping journal (ping-journal.ts) may take: plain pings on monitors that
 * committed batches left up, while the heartbeat epoch says nothing about them has changed since,
 * so the cached row is still true. They are acknowledged once their journal record is written,
 * without the main database's write lock, and folded into their rows later. Nearly every request is
 * one of them.
 *
 * The rest are written in a transaction of the main database (ping-store-sqlite.ts `write`). A
 * monitor with any other op in the batch (/start, /fail, a deadline evaluation), or with a ping its
 * cached row cannot vouch for (no row cached, another token, not up, paused, a payload the policy
 * refuses), goes there from that op on, so a monitor's ops are applied in their order.
 */
import { laterPing, runDuration, type HeartbeatOp } from "../domain/heartbeat-ping.ts";
import { heartbeatPlanOf, nextHeartbeatTransition } from "../domain/heartbeat-rules.ts";
import { evaluatePingPayload } from "../domain/payload-policy.ts";
import { cutAt, PING_BODY_KEEP } from "../domain/ping-body.ts";
import type { JournaledPing } from "./ping-journal-file.ts";
import type { PingMonitorRow } from "./ping-statements.ts";

export interface JournalPart {
  /** the journaled ops' places in the batch */
  indexes: number[];
  /** written to the journal and kept pending as they are */
  pings: JournaledPing[];
  /** per monitor, what these pings change in its cached row: applied once the journal record is written */
  updates: Map<number, RowUpdate>;
}

/** A cached row and the bookkeeping a batch's pings move it to (no copy of the row per ping). */
export interface RowUpdate {
  row: PingMonitorRow;
  lastPingAt: number;
  deadline: number | null;
  at: number;
}

/** Applies a committed journal part to the cached rows; returns the monitors' new deadlines. */
export function applyToCache(part: JournalPart): Map<number, number | null> {
  const deadlines = new Map<number, number | null>();
  for (const [id, u] of part.updates) {
    u.row.heartbeat_last_ping_at = u.lastPingAt;
    u.row.heartbeat_last_start_at = null;
    u.row.heartbeat_deadline_at = u.deadline;
    u.row.last_checked_at = u.at;
    deadlines.set(id, u.deadline);
  }
  return deadlines;
}

/**
 * Splits a batch: the journal part, and the places of the ops left for the transaction. `cache` holds
 * rows as committed batches left them, and must be empty unless the heartbeat epoch has not moved
 * since it was filled; `nextId` numbers the journaled pings.
 */
export function splitJournalable(ops: readonly HeartbeatOp[], cache: ReadonlyMap<number, PingMonitorRow>, nextId: () => number): { journal: JournalPart; rest: number[] } {
  const elsewhere = new Set<number>();
  for (const op of ops) {
    if (op.type === "evaluate") elsewhere.add(op.monitorId);
    else if (op.ping.kind !== "ping") elsewhere.add(op.ping.monitorId);
  }
  const journal: JournalPart = { indexes: [], pings: [], updates: new Map() };
  const rest: number[] = [];
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    if (op.type !== "ping" || elsewhere.has(op.ping.monitorId)) {
      rest.push(i);
      continue;
    }
    const { ping, at } = op;
    const id = ping.monitorId;
    const update = journal.updates.get(id);
    const row = update?.row ?? cache.get(id);
    if (
      row === undefined || row.heartbeat_token !== ping.token || row.last_status !== "up" || row.is_paused || row.monitor_type !== "heartbeat" ||
      // a cut body's event records its size, which the journal does not carry
      cutAt(ping, PING_BODY_KEEP) !== null ||
      !evaluatePingPayload(row.heartbeat_payload_policy, row.heartbeat_payload_status_key, ping.body, ping.exitCode).valid
    ) {
      elsewhere.add(id);
      rest.push(i);
      continue;
    }
    // the row itself changes only once the journal record is written (applyToCache)
    const lastPingAt = laterPing(update ? update.lastPingAt : row.heartbeat_last_ping_at, at);
    const deadline = nextHeartbeatTransition("up", lastPingAt, heartbeatPlanOf(row))?.at ?? null;
    const durationMs = runDuration(update ? null : row.heartbeat_last_start_at, at);
    journal.pings.push({ id: nextId(), monitorId: id, at, sourceIp: ping.sourceIp, durationMs, deadlineAt: deadline });
    journal.indexes.push(i);
    if (update === undefined) journal.updates.set(id, { row, lastPingAt, deadline, at });
    else {
      update.lastPingAt = lastPingAt;
      update.deadline = deadline;
      update.at = at;
    }
  }
  return { journal, rest };
}
