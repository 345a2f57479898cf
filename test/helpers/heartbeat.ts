import { apiRoutes } from "../../src/api/routes.ts";
import type { AppContext } from "../../src/context.ts";
import { PingBatches, type Committed } from "../../src/heartbeat/ping-batches.ts";
import { openPingStore } from "../../src/store/ping-store.ts";
import { randomToken } from "../../src/lib/tokens.ts";
import { findAccountByName } from "../../src/store/accounts.ts";
import type { MonitorEventRow, MonitorRow } from "../../src/store/tables.ts";
import type { TestServer } from "./server.ts";

export interface HeartbeatOptions {
  name?: string;
  periodSec?: number;
  graceSec?: number;
  notifyOnLate?: boolean;
  policy?: "none" | "status_ok";
  statusKey?: string | null;
  schedule?: string | null;
  timezone?: string | null;
  paused?: boolean;
  accountId?: number;
  /** insert the row directly even when POST /api/v1/monitors exists (periods below its minimums) */
  direct?: boolean;
}

export interface HeartbeatMonitor {
  id: number;
  token: string;
}

const hasRoute = (method: string, path: string) => apiRoutes.some((r) => r.method === method && r.path === path);

/**
 * A heartbeat monitor of the default account: through POST /api/v1/monitors when that endpoint
 * exists, else (or with `direct`) inserted as a row, with `monitor.changed` emitted as the API would.
 */
export async function createHeartbeat(server: TestServer, o: HeartbeatOptions = {}): Promise<HeartbeatMonitor> {
  const attrs = {
    name: o.name ?? "job",
    monitor_type: "heartbeat",
    interval_sec: 10,
    timeout_ms: 1000,
    heartbeat_period_sec: o.periodSec ?? 1,
    heartbeat_grace_sec: o.graceSec ?? 1,
    heartbeat_notify_on_late: o.notifyOnLate ?? false,
    heartbeat_payload_policy: o.policy ?? "none",
    heartbeat_payload_status_key: o.statusKey ?? null,
    heartbeat_schedule: o.schedule ?? null,
    heartbeat_timezone: o.timezone ?? null,
    is_paused: o.paused ?? false,
  };
  if (!o.direct && o.accountId === undefined && hasRoute("POST", "/api/v1/monitors")) {
    const body: Record<string, unknown> = { ...attrs };
    if (body.heartbeat_timezone === null) delete body.heartbeat_timezone;
    const res = await server.api("POST", "/api/v1/monitors", body);
    if (res.status !== 201) throw new Error(`POST /api/v1/monitors answered ${res.status}: ${res.text}`);
    return { id: Number(res.json.data.id), token: res.json.data.attributes.heartbeat_token };
  }
  return insertHeartbeat(server.ctx, { ...o, accountId: o.accountId ?? (await defaultAccountId(server.ctx)) });
}

export async function defaultAccountId(ctx: AppContext): Promise<number> {
  return (await findAccountByName(ctx.db, "default"))!.id;
}

/** Inserts a heartbeat monitor row straight into the store (no validation minimums). */
export async function insertHeartbeat(ctx: AppContext, o: HeartbeatOptions & { accountId: number }): Promise<HeartbeatMonitor> {
  const token = randomToken(24);
  const now = Date.now();
  const row = await ctx.db
    .insertInto("monitors")
    .values({
      account_id: o.accountId,
      name: o.name ?? "job",
      monitor_type: "heartbeat",
      target: null,
      interval_sec: 10,
      timeout_ms: 1000,
      group_id: null,
      is_paused: o.paused ? 1 : 0,
      created_at: now,
      updated_at: now,
      heartbeat_token: token,
      heartbeat_period_sec: o.periodSec ?? 1,
      heartbeat_grace_sec: o.graceSec ?? 1,
      heartbeat_notify_on_late: o.notifyOnLate ? 1 : 0,
      heartbeat_payload_policy: o.policy ?? "none",
      heartbeat_payload_status_key: o.statusKey ?? null,
      heartbeat_schedule: o.schedule ?? null,
      heartbeat_timezone: o.timezone ?? null,
    } as never)
    .returning("id")
    .executeTakeFirstOrThrow();
  ctx.events.emit("monitor.changed", { monitorId: row.id, accountId: o.accountId });
  return { id: row.id, token };
}

/** Changes a monitor's row and announces it, as PATCH does; through the API when it exists. */
export async function updateHeartbeat(server: TestServer, id: number, changes: Record<string, unknown>): Promise<void> {
  if (hasRoute("PATCH", "/api/v1/monitors/:id")) {
    const res = await server.api("PATCH", `/api/v1/monitors/${id}`, changes);
    if (res.status !== 200) throw new Error(`PATCH answered ${res.status}: ${res.text}`);
    return;
  }
  const row = await monitorRow(server.ctx, id);
  const { ctx } = server;
  const cols: Record<string, unknown> = { ...changes, updated_at: Date.now() };
  for (const [k, v] of Object.entries(cols)) if (typeof v === "boolean") cols[k] = v ? 1 : 0;
  // resume restarts at unknown (docs/monitors.md "Maintenance and pause"), as the store's updateMonitor does
  if (changes.is_paused === false && row.is_paused === 1) Object.assign(cols, { last_status: "unknown", heartbeat_deadline_at: null });
  if (changes.is_paused === true) cols.heartbeat_deadline_at = null;
  await ctx.db.updateTable("monitors").set(cols as never).where("id", "=", id).execute();
  ctx.events.emit("monitor.changed", { monitorId: id, accountId: row.account_id });
}

/** Rotates the ping token: POST .../heartbeat-token/rotate when it exists, else a row update. */
export async function rotateHeartbeat(server: TestServer, id: number): Promise<string> {
  if (hasRoute("POST", "/api/v1/monitors/:id/heartbeat-token/rotate")) {
    const res = await server.api("POST", `/api/v1/monitors/${id}/heartbeat-token/rotate`);
    if (res.status !== 200) throw new Error(`rotate answered ${res.status}: ${res.text}`);
    return res.json.data.attributes.heartbeat_token;
  }
  const token = randomToken(24);
  const row = await monitorRow(server.ctx, id);
  await server.ctx.db.updateTable("monitors").set({ heartbeat_token: token }).where("id", "=", id).execute();
  server.ctx.events.emit("monitor.changed", { monitorId: id, accountId: row.account_id });
  return token;
}

export interface PingResult {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

/** One ping: `suffix` is "", "/start", "/fail" or "/<exit code>". */
export async function ping(
  url: string,
  token: string,
  o: { suffix?: string; method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<PingResult> {
  const res = await fetch(`${url}/h/${token}${o.suffix ?? ""}`, { method: o.method ?? (o.body !== undefined ? "POST" : "GET"), body: o.body, headers: o.headers });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {}
  return { status: res.status, headers: res.headers, text, json };
}

/** The monitor's row, with every acknowledged ping folded in (as the API reads it). */
export async function monitorRow(ctx: AppContext, id: number): Promise<MonitorRow> {
  const db = await ctx.pings.settled([id]);
  return db.selectFrom("monitors").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

/** The monitor's timeline, oldest first. */
export async function timeline(ctx: AppContext, id: number): Promise<MonitorEventRow[]> {
  const db = await ctx.pings.settled([id]);
  return db.selectFrom("monitor_events").selectAll().where("monitor_id", "=", id).orderBy("id").execute();
}

export async function transitions(ctx: AppContext, id: number): Promise<string[]> {
  return (await timeline(ctx, id)).filter((e) => e.kind === "transition").map((e) => `${e.from_state}->${e.to_state}`);
}

/** The alert log lines (component "alerts") of one monitor, as `event` names. */
export function alertLines(server: TestServer, id: number): string[] {
  return server.logs.filter((l) => l.component === "alerts" && l.monitor_id === id).map((l) => String(l.event));
}

/**
 * A ping intake of the test's own on the server's store and write queue: on SQLite with a journal of
 * its own in `journalDir` (a pass deletes the segments it folded, and the server's journal has its
 * own), so only pings this intake takes are in it; PostgreSQL has no journal.
 */
export function ownIntake(ctx: AppContext, journalDir: string) {
  const log = ctx.log.child("test");
  const pings = openPingStore(ctx.store, { dataDir: journalDir, region: ctx.config.region, writes: ctx.writes, log });
  const committed: Committed[] = [];
  const batches = new PingBatches(ctx, pings, { onCommitted: (r) => committed.push(r), onEvaluateFailed: () => {}, log });
  return {
    batches,
    committed,
    /** the deadline the timers were last given for each monitor */
    deadlines() {
      const out = new Map<number, number | null>();
      for (const c of committed) for (const [id, at] of c.deadlines) out.set(id, at);
      return out;
    },
    /** on SQLite, folds what this intake's own journal holds (the server's reads settle only the server's) */
    settle: () => pings.settleAll(),
    async close() {
      await batches.close();
      await pings.close();
    },
  };
}
