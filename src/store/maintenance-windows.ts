import { sql, type ExpressionBuilder } from "kysely";
import { externalIdIs } from "./external-ids.ts";
import type { WindowPlan } from "../domain/maintenance-schedule.ts";
import type { Db } from "./database.ts";
import { engineOf } from "./engine-of.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { DB, MaintenanceWindowRow, MaintenanceWindowsTable } from "./tables.ts";

/**
 * Maintenance window repository (README "Maintenance windows"), the one writer of
 * maintenance_windows and maintenance_window_monitors. The API's functions are scoped to an
 * account; the engine's (spans to settle, the next boundary, who is in maintenance) work across
 * accounts. "In a window's maintenance at t" is always `active_from <= t < active_until` on an
 * enabled window: every instance reads it from the row, so all of them agree.
 */
export type WindowColumns = Omit<MaintenanceWindowsTable, "id" | "account_id" | "created_at" | "updated_at" | "external_id"> & { external_id?: string | null };

/** A stored window's plan, for the span rules of domain/maintenance-schedule.ts. */
export function windowPlanOf(w: Pick<MaintenanceWindowRow, "starts_at" | "ends_at" | "schedule" | "duration_sec" | "timezone">): WindowPlan {
  return { startsAt: w.starts_at, endsAt: w.ends_at, schedule: w.schedule, durationSec: w.duration_sec, timezone: w.timezone };
}

export async function listWindows(db: Db, accountId: number, page: PageWindow, f: { externalId?: string } = {}): Promise<{ rows: MaintenanceWindowRow[]; total: number }> {
  let query = db.selectFrom("maintenance_windows").where("account_id", "=", accountId);
  if (f.externalId !== undefined) query = query.where(externalIdIs(f.externalId));
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy("id", "asc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}

export async function findWindow(db: Db, accountId: number, id: number): Promise<MaintenanceWindowRow | undefined> {
  return db.selectFrom("maintenance_windows").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

/** Monitor ids of each window, ascending. */
export async function monitorIdsByWindow(db: Db, windowIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(windowIds.map((id) => [id, []]));
  if (windowIds.length === 0) return out;
  const rows = await db.selectFrom("maintenance_window_monitors").select(["window_id", "monitor_id"]).where("window_id", "in", windowIds).orderBy("window_id").orderBy("monitor_id").execute();
  for (const r of rows) out.get(r.window_id)?.push(r.monitor_id);
  return out;
}

async function setWindowMonitors(db: Db, windowId: number, monitorIds: number[]): Promise<void> {
  await db.deleteFrom("maintenance_window_monitors").where("window_id", "=", windowId).execute();
  if (monitorIds.length) await db.insertInto("maintenance_window_monitors").values(monitorIds.map((monitor_id) => ({ window_id: windowId, monitor_id }))).execute();
}

export async function insertWindow(db: Db, w: { accountId: number; cols: WindowColumns; monitorIds: number[]; now: number }): Promise<MaintenanceWindowRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("maintenance_windows")
      .values({ ...w.cols, account_id: w.accountId, created_at: w.now, updated_at: w.now })
      .returningAll()
      .executeTakeFirstOrThrow();
    await setWindowMonitors(trx, row.id, w.monitorIds);
    return row;
  });
}

/** The window as it was, and as it is after the change (undefined: not this account's). */
export async function updateWindow(
  db: Db,
  u: { accountId: number; id: number; cols: (before: MaintenanceWindowRow) => Partial<WindowColumns>; monitorIds?: number[]; now: number },
): Promise<{ before: MaintenanceWindowRow; beforeMonitorIds: number[]; after: MaintenanceWindowRow } | undefined> {
  return db.transaction().execute(async (trx) => {
    const before = await findWindow(trx, u.accountId, u.id);
    if (!before) return undefined;
    const beforeMonitorIds = (await monitorIdsByWindow(trx, [u.id])).get(u.id) ?? [];
    const after = await trx
      .updateTable("maintenance_windows")
      .set({ ...u.cols(before), updated_at: u.now })
      .where("id", "=", u.id)
      .where("account_id", "=", u.accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
    if (u.monitorIds) await setWindowMonitors(trx, u.id, u.monitorIds);
    return { before, beforeMonitorIds, after };
  });
}

/** Deletes a window and its links; returns what it was, with its monitors, or undefined. */
export async function deleteWindow(db: Db, accountId: number, id: number): Promise<{ row: MaintenanceWindowRow; monitorIds: number[] } | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await findWindow(trx, accountId, id);
    if (!row) return undefined;
    const monitorIds = (await monitorIdsByWindow(trx, [id])).get(id) ?? [];
    await trx.deleteFrom("maintenance_windows").where("id", "=", id).where("account_id", "=", accountId).execute();
    return { row, monitorIds };
  });
}

/** Windows that hold at `now`: enabled, and inside their span. */
function activeAt(eb: ExpressionBuilder<DB, "maintenance_windows">, now: number) {
  return eb.and([eb("maintenance_windows.is_enabled", "=", 1), eb("maintenance_windows.active_from", "<=", now), eb("maintenance_windows.active_until", ">", now)]);
}

/** Which of `monitorIds` an active window puts in maintenance at `now`. */
export async function monitorsInActiveWindows(db: Db, monitorIds: number[], now: number): Promise<Set<number>> {
  if (monitorIds.length === 0) return new Set();
  const rows = await db
    .selectFrom("maintenance_window_monitors")
    .innerJoin("maintenance_windows", "maintenance_windows.id", "maintenance_window_monitors.window_id")
    .select("maintenance_window_monitors.monitor_id")
    .distinct()
    .where("maintenance_window_monitors.monitor_id", "in", monitorIds)
    .where((eb) => activeAt(eb, now))
    .execute();
  return new Set(rows.map((r) => r.monitor_id));
}

/**
 * The ids of `accountId`'s monitors that an active window holds at `now`, as a subquery for the
 * monitor list's filter, counts and order: one read of the account's windows, not one per monitor.
 */
export function heldByActiveWindows(db: Db, accountId: number, now: number) {
  return db
    .selectFrom("maintenance_window_monitors")
    .innerJoin("maintenance_windows", "maintenance_windows.id", "maintenance_window_monitors.window_id")
    .select("maintenance_window_monitors.monitor_id")
    .where("maintenance_windows.account_id", "=", accountId)
    .where((eb) => activeAt(eb, now));
}

export async function inActiveWindow(db: Db, monitorId: number, now: number): Promise<boolean> {
  return (await monitorsInActiveWindows(db, [monitorId], now)).has(monitorId);
}

/**
 * Enabled windows of `monitorIds` whose span is in effect at `from` or starts before `to`, soonest
 * first, each with the ones of `monitorIds` it holds.
 */
export async function windowsAround(db: Db, monitorIds: number[], from: number, to: number): Promise<{ row: MaintenanceWindowRow; monitorIds: number[] }[]> {
  if (monitorIds.length === 0) return [];
  const links = await db
    .selectFrom("maintenance_window_monitors")
    .innerJoin("maintenance_windows", "maintenance_windows.id", "maintenance_window_monitors.window_id")
    .select(["maintenance_window_monitors.window_id", "maintenance_window_monitors.monitor_id"])
    .where("maintenance_window_monitors.monitor_id", "in", monitorIds)
    .where("maintenance_windows.is_enabled", "=", 1)
    .where("maintenance_windows.active_until", ">", from)
    .where("maintenance_windows.active_from", "<", to)
    .execute();
  const byWindow = new Map<number, number[]>();
  for (const l of links) byWindow.set(l.window_id, [...(byWindow.get(l.window_id) ?? []), l.monitor_id]);
  if (byWindow.size === 0) return [];
  const rows = await db.selectFrom("maintenance_windows").selectAll().where("id", "in", [...byWindow.keys()]).orderBy("active_from").orderBy("id").execute();
  return rows.map((row) => ({ row, monitorIds: byWindow.get(row.id)! }));
}

/** Spans that ended at or before `now` and that the leader has not acted on yet, every account. */
export async function spansToSettle(db: Db, now: number): Promise<MaintenanceWindowRow[]> {
  return db
    .selectFrom("maintenance_windows")
    .selectAll()
    .where("active_until", "<=", now)
    .where((eb) => eb.or([eb("settled_until", "is", null), eb("settled_until", "<", eb.ref("active_until"))]))
    .orderBy("active_until")
    .orderBy("id")
    .execute();
}

/** Enabled windows whose span started in (after, upTo], every account. */
export async function windowsStartedBetween(db: Db, after: number, upTo: number): Promise<MaintenanceWindowRow[]> {
  return db.selectFrom("maintenance_windows").selectAll().where("is_enabled", "=", 1).where("active_from", ">", after).where("active_from", "<=", upTo).orderBy("id").execute();
}

/** The next time after `now` a window of any account starts or ends, or null. */
export async function nextBoundary(db: Db, now: number): Promise<number | null> {
  const r = await db
    .selectFrom("maintenance_windows")
    .select((eb) => [
      eb.fn.min(eb.case().when("active_from", ">", now).then(eb.ref("active_from")).end()).as("start"),
      eb.fn.min(eb.case().when("active_until", ">", now).then(eb.ref("active_until")).end()).as("end"),
    ])
    .where("is_enabled", "=", 1)
    .executeTakeFirst();
  const times = [r?.start, r?.end].filter((t): t is number => t !== null && t !== undefined).map(Number);
  return times.length ? Math.min(...times) : null;
}

/**
 * Records that the span ending at `until` was acted on, and stores the window's next span. False
 * when the window changed meanwhile (a write moved its span): then nothing is written.
 */
export async function settleSpan(db: Db, id: number, until: number, next: { from: number; until: number } | null): Promise<boolean> {
  const r = await db
    .updateTable("maintenance_windows")
    .set({ settled_until: until, active_from: next?.from ?? null, active_until: next?.until ?? null })
    .where("id", "=", id)
    .where("active_until", "=", until)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/**
 * Holds the monitor's row until the transaction ends, so that opening an incident for it cannot
 * race a state change on another instance (PostgreSQL; SQLite has one writer at a time anyway).
 */
export async function holdMonitorRow(db: Db, monitorId: number): Promise<void> {
  if (engineOf(db) === "postgres") await sql`SELECT id FROM monitors WHERE id = ${monitorId} FOR UPDATE`.execute(db);
}

/** The newest down check still stored one by one, for the incident a window's end opens. */
export async function latestDownCheck(db: Db, monitorId: number): Promise<{ id: number; error_code: string | null; error_message: string | null; http_code: number | null } | undefined> {
  return db
    .selectFrom("checks")
    .select(["id", "error_code", "error_message", "http_code"])
    .where("monitor_id", "=", monitorId)
    .where("status", "=", "down")
    .orderBy("checked_at", "desc")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** The state the monitor was in before its latest transition to down. */
export async function stateBeforeDown(db: Db, monitorId: number): Promise<string | null> {
  const r = await db
    .selectFrom("monitor_events")
    .select("from_state")
    .where("monitor_id", "=", monitorId)
    .where("kind", "=", "transition")
    .where("to_state", "=", "down")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return r?.from_state ?? null;
}
