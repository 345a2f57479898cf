/**
 * The one writer of `monitor_events` rows: transitions and token rotations through Kysely
 * (insertMonitorEvent, in the caller's transaction), and the ping path's events through prepared
 * statements on the same connection (prepareEventWrites: the direct path's one at a time, the
 * journal's fold many to a statement). Both take the row's columns from eventValues.
 */
import type { Database, Statement } from "bun:sqlite";
import type { Insertable } from "kysely";
import type { Db } from "./database.ts";
import { MultiRowInsert } from "./multi-row-insert.ts";
import type { MonitorEventsTable } from "./tables.ts";

export interface NewMonitorEvent {
  monitorId: number;
  kind: "ping" | "start" | "fail" | "transition" | "token_rotated";
  at: number;
  result?: string | null;
  reason?: string | null;
  sourceIp?: string | null;
  fromState?: string | null;
  toState?: string | null;
  durationMs?: number | null;
  /** a failure ping's body, as much as is kept */
  body?: string | null;
  /** the ping body's size as sent, when longer than what was kept */
  bodyBytes?: number | null;
}

type EventValues = Required<Omit<Insertable<MonitorEventsTable>, "id">>;

function eventValues(e: NewMonitorEvent): EventValues {
  return {
    monitor_id: e.monitorId,
    kind: e.kind,
    at: e.at,
    result: e.result ?? null,
    reason: e.reason ?? null,
    source_ip: e.sourceIp ?? null,
    from_state: e.fromState ?? null,
    to_state: e.toState ?? null,
    duration_ms: e.durationMs ?? null,
    body: e.body ?? null,
    body_bytes: e.bodyBytes ?? null,
  };
}

const EVENT_COLUMNS = [
  "monitor_id", "kind", "at", "result", "reason", "source_ip", "from_state", "to_state", "duration_ms", "body", "body_bytes",
] as const satisfies readonly (keyof EventValues)[];

export async function insertMonitorEvent(db: Db, e: NewMonitorEvent): Promise<number> {
  const row = await db.insertInto("monitor_events").values(eventValues(e)).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Timeline events through statements prepared once on one connection, for the ping path (see
 * store/checks.ts, CheckWrites). Run only inside a transaction the caller holds on that connection.
 */
export interface EventWrites {
  insert(e: NewMonitorEvent): void;
  /** an accepted ping's event, without an event object (the ping path's every request) */
  insertPing(monitorId: number, at: number, sourceIp: string | null, durationMs: number | null): void;
  /** the same rows for many pings (the journal's fold): written many to a statement, in the order added, by `flush` */
  addPing(monitorId: number, at: number, sourceIp: string | null, durationMs: number | null): void;
  flush(): void;
  /** forgets what was added and not flushed: its transaction is being rolled back */
  discard(): void;
}

const PING_EVENT_HEAD = "INSERT INTO monitor_events (monitor_id, kind, at, result, source_ip, duration_ms) VALUES";
const PING_EVENT_ROW = "(?, 'ping', ?, 'accepted', ?, ?)";

export function prepareEventWrites(sqlite: Database): EventWrites {
  const full = sqlite.prepare(`INSERT INTO monitor_events (${EVENT_COLUMNS.join(", ")}) VALUES (${EVENT_COLUMNS.map(() => "?").join(", ")})`);
  const ping = sqlite.prepare(`${PING_EVENT_HEAD} ${PING_EVENT_ROW}`) as Statement<unknown, [number, number, string | null, number | null]>;
  const pings = new MultiRowInsert(sqlite, PING_EVENT_HEAD, PING_EVENT_ROW);
  return {
    insert(e) {
      const v = eventValues(e);
      full.run(...EVENT_COLUMNS.map((c) => v[c]));
    },
    insertPing: (monitorId, at, sourceIp, durationMs) => {
      ping.run(monitorId, at, sourceIp, durationMs);
    },
    addPing: (monitorId, at, sourceIp, durationMs) => pings.add(monitorId, at, sourceIp, durationMs),
    flush: () => pings.flush(),
    discard: () => pings.discard(),
  };
}
