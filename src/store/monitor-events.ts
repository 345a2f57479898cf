/**
 * The one writer of `monitor_events` rows: transitions, token rotations and expiry alerts through Kysely
 * (insertMonitorEvent, in the caller's transaction), and the ping path's events many at a time: on
 * SQLite through prepared statements on the same connection (prepareEventWrites: a batch's one at a
 * time; prepareEventFold: the journal's fold many to a statement), on PostgreSQL a batch's events
 * gathered into one statement (gatherEventRows). All take the row's columns from eventValues.
 */
import type { Database, Statement } from "bun:sqlite";
import type { Insertable } from "kysely";
import type { Db } from "./database.ts";
import { arrayParams, GatheredRows, statementFrom } from "./gathered-rows.ts";
import { MultiRowInsert } from "./multi-row-insert.ts";
import type { MonitorEventsTable } from "./tables.ts";

export interface NewMonitorEvent {
  monitorId: number;
  kind: "ping" | "start" | "fail" | "transition" | "token_rotated" | "expiring" | "still_down" | "escalated";
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
  /** an expiring event's expiry date */
  expiresAt?: number | null;
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
    expires_at: e.expiresAt ?? null,
  };
}

const EVENT_COLUMNS = [
  "monitor_id", "kind", "at", "result", "reason", "source_ip", "from_state", "to_state", "duration_ms", "body", "body_bytes", "expires_at",
] as const satisfies readonly (keyof EventValues)[];

export async function insertMonitorEvent(db: Db, e: NewMonitorEvent): Promise<number> {
  const row = await db.insertInto("monitor_events").values(eventValues(e)).returning("id").executeTakeFirstOrThrow();
  return row.id;
}

/**
 * One ping batch's timeline events (heartbeat/apply-batch.ts), inside the write queue's
 * transaction, written in the order they were added: on SQLite at once, through statements prepared
 * once on the one connection (see store/checks.ts, PingCheckWrites); on PostgreSQL gathered, and
 * written with the batch's other rows (gatherEventRows).
 */
export interface PingEventWrites {
  add(e: NewMonitorEvent): void;
  /** an accepted ping's event, without an event object (the ping path's every request) */
  addPing(monitorId: number, at: number, sourceIp: string | null, durationMs: number | null): void;
}

const PING_EVENT_HEAD = "INSERT INTO monitor_events (monitor_id, kind, at, result, source_ip, duration_ms) VALUES";
const PING_EVENT_ROW = "(?, 'ping', ?, 'accepted', ?, ?)";

/** On SQLite: every event written at once. */
export function prepareEventWrites(sqlite: Database): PingEventWrites {
  const full = sqlite.prepare(`INSERT INTO monitor_events (${EVENT_COLUMNS.join(", ")}) VALUES (${EVENT_COLUMNS.map(() => "?").join(", ")})`);
  const ping = sqlite.prepare(`${PING_EVENT_HEAD} ${PING_EVENT_ROW}`) as Statement<unknown, [number, number, string | null, number | null]>;
  return {
    add(e) {
      const v = eventValues(e);
      full.run(...EVENT_COLUMNS.map((c) => v[c]));
    },
    addPing: (monitorId, at, sourceIp, durationMs) => void ping.run(monitorId, at, sourceIp, durationMs),
  };
}

/**
 * The ping journal's fold (store/ping-fold.ts, SQLite): ping events written many to a statement,
 * in the order added, by `flush`. Only inside a transaction of the caller's on the same connection.
 */
export interface FoldEventRows {
  addPing(monitorId: number, at: number, sourceIp: string | null, durationMs: number | null): void;
  flush(): void;
  /** forgets what was added and not flushed: its transaction is being rolled back */
  discard(): void;
}

export function prepareEventFold(sqlite: Database): FoldEventRows {
  const pings = new MultiRowInsert(sqlite, PING_EVENT_HEAD, PING_EVENT_ROW);
  return {
    addPing: (monitorId, at, sourceIp, durationMs) => pings.add(monitorId, at, sourceIp, durationMs),
    flush: () => pings.flush(),
    discard: () => pings.discard(),
  };
}

const EVENT_TYPES: Record<(typeof EVENT_COLUMNS)[number], string> = {
  monitor_id: "bigint", kind: "text", at: "bigint", result: "text", reason: "text", source_ip: "text", from_state: "text",
  to_state: "text", duration_ms: "bigint", body: "text", body_bytes: "bigint", expires_at: "bigint",
};
const INSERT_EVENTS = statementFrom(
  (first) => `INSERT INTO monitor_events (${EVENT_COLUMNS.join(", ")}) SELECT * FROM unnest(${arrayParams(first, EVENT_COLUMNS.map((c) => EVENT_TYPES[c]))})`,
);
/** the columns of an accepted ping's event, which every event sets; the others are null */
const [MONITOR, KIND, AT, RESULT, SOURCE_IP, DURATION] = ["monitor_id", "kind", "at", "result", "source_ip", "duration_ms"].map((c) => EVENT_COLUMNS.indexOf(c as never));

/** On PostgreSQL: events gathered into `rows`, written with the batch's other rows (store/gathered-rows.ts). */
export function gatherEventRows(): PingEventWrites & { rows: GatheredRows } {
  const rows = new GatheredRows(EVENT_COLUMNS.length, INSERT_EVENTS);
  return {
    rows,
    add(e) {
      const v = eventValues(e);
      for (let i = 0; i < EVENT_COLUMNS.length; i++) rows.sparse(i).push(v[EVENT_COLUMNS[i]!]);
      rows.added();
    },
    addPing(monitorId, at, sourceIp, durationMs) {
      const c = rows.columns;
      c[MONITOR]!.push(monitorId);
      c[KIND]!.push("ping");
      c[AT]!.push(at);
      c[RESULT]!.push("accepted");
      c[SOURCE_IP]!.push(sourceIp);
      c[DURATION]!.push(durationMs);
      rows.added();
    },
  };
}
