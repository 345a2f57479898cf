import type { AppContext } from "../context.ts";
import { spanHolds, windowSpanAt, type Span } from "../domain/maintenance-schedule.ts";
import type { WindowAttributes } from "../domain/maintenance-window-schema.ts";
import { validateWindowWrite, type WindowChanges, type WindowWriteResult } from "../domain/maintenance-window-validation.ts";
import { notFound, validationError } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import { externalIdTaken, isExternalIdConflict } from "../store/external-ids.ts";
import * as store from "../store/maintenance-windows.ts";
import { ownedMonitorIds } from "../store/status-pages.ts";
import type { MaintenanceWindowRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Maintenance windows, for the API and the dashboard alike (README "Maintenance windows"): the
 * validation, the monitors' ownership, the span each write stores (the current or next stretch of
 * maintenance, which is what every instance reads), `maintenance_window.changed` after the commit,
 * and the log lines. Every lookup is scoped to the actor's account.
 */
export type WindowItem = Item<WindowAttributes>;

const logOf = (ctx: AppContext) => ctx.log.child("api.maintenance-windows");

const storedSpan = (row: MaintenanceWindowRow) => ({ from: row.active_from, until: row.active_until });

/** Whether the window puts its monitors in maintenance at `now`: as the engine decides it, from the stored span. */
function activeAt(row: MaintenanceWindowRow, now: number): boolean {
  return row.is_enabled === 1 && spanHolds(storedSpan(row), now);
}

/** The span in effect now or next: the stored one until it ends, then the schedule's next (before the leader stores it). */
function nextSpan(row: MaintenanceWindowRow, now: number): Span | null {
  if (row.is_enabled !== 1) return null;
  if (row.active_from !== null && row.active_until !== null && row.active_until > now) return { from: row.active_from, until: row.active_until };
  return windowSpanAt(store.windowPlanOf(row), now);
}

function attributes(row: MaintenanceWindowRow, monitorIds: number[], now: number): WindowAttributes {
  const next = nextSpan(row, now);
  return {
    name: row.name,
    description: row.description,
    external_id: row.external_id,
    monitor_ids: monitorIds,
    is_enabled: row.is_enabled === 1,
    timezone: row.timezone,
    starts_at: toIso(row.starts_at),
    ends_at: toIso(row.ends_at),
    schedule: row.schedule,
    duration_sec: row.duration_sec,
    is_active: activeAt(row, now),
    next_starts_at: toIso(next?.from),
    next_ends_at: toIso(next?.until),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

async function present(ctx: AppContext, rows: MaintenanceWindowRow[]): Promise<WindowItem[]> {
  const monitors = await store.monitorIdsByWindow(ctx.db, rows.map((r) => r.id));
  const now = ctx.clock.now();
  return rows.map((r) => ({ id: r.id, attributes: attributes(r, monitors.get(r.id) ?? [], now) }));
}

async function owned(ctx: AppContext, actor: Actor, id: number): Promise<MaintenanceWindowRow> {
  const row = await store.findWindow(ctx.db, actor.accountId, id);
  if (!row) throw notFound("maintenance window");
  return row;
}

/** monitor_ids must name this account's monitors; another account's id reads as missing. */
async function checkMonitors(ctx: AppContext, accountId: number, v: WindowWriteResult): Promise<void> {
  const ids = v.changes.monitor_ids;
  if (!ids?.length) return;
  const mine = await ownedMonitorIds(ctx.db, accountId, ids);
  const missing = ids.filter((id) => !mine.has(id));
  if (missing.length) (v.details.monitor_ids ??= []).push(`monitor ${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist in this account`);
}

/** external_id is unique among the account's windows (README "Configuration as code"). */
async function checkExternalId(ctx: AppContext, accountId: number, v: WindowWriteResult, exceptId?: number): Promise<void> {
  const x = v.changes.external_id;
  if (typeof x === "string" && !v.details.external_id && (await externalIdTaken(ctx.db, "maintenance_windows", accountId, x, exceptId))) v.details.external_id = ["has already been taken"];
}

/** Another write took the external_id after the check: the same 422. */
function externalIdRace(err: unknown): never {
  if (isExternalIdConflict(err)) throw validationError({ external_id: ["has already been taken"] });
  throw err;
}

/** The stored columns of a window: its settings merged over `before`, and the span they give at `now`. */
function columnsOf(changes: WindowChanges, before: MaintenanceWindowRow | null, now: number): store.WindowColumns {
  const pick = <K extends keyof WindowChanges & keyof MaintenanceWindowRow>(k: K, fallback: MaintenanceWindowRow[K]) => (k in changes ? (changes[k] as MaintenanceWindowRow[K]) : (before?.[k] ?? fallback));
  const cols = {
    name: pick("name", ""),
    description: pick("description", null),
    external_id: pick("external_id", null),
    is_enabled: "is_enabled" in changes ? (changes.is_enabled ? 1 : 0) : (before?.is_enabled ?? 1),
    timezone: pick("timezone", "UTC"),
    starts_at: pick("starts_at", null),
    ends_at: pick("ends_at", null),
    schedule: pick("schedule", null),
    duration_sec: pick("duration_sec", null),
  };
  // a span that is over when written was never in effect while Vigil knew it: nothing to act on
  const span = cols.is_enabled === 1 ? windowSpanAt(store.windowPlanOf(cols), now) : null;
  return { ...cols, active_from: span?.from ?? null, active_until: span?.until ?? null, settled_until: before?.settled_until ?? null };
}

function changed(ctx: AppContext, windowId: number, accountId: number, left: number[]): void {
  ctx.events.emit("maintenance_window.changed", { windowId, accountId, left });
}

/** A page of the account's windows, id ascending. */
export async function listMaintenanceWindows(ctx: AppContext, actor: Actor, window: PageWindow, filter: { externalId?: string } = {}): Promise<Listed<WindowAttributes>> {
  const { rows, total } = await store.listWindows(ctx.db, actor.accountId, window, filter);
  return { items: await present(ctx, rows), total };
}

export async function getMaintenanceWindow(ctx: AppContext, actor: Actor, id: number): Promise<WindowItem> {
  return (await present(ctx, [await owned(ctx, actor, id)]))[0]!;
}

export async function createMaintenanceWindow(ctx: AppContext, actor: Actor, input: WriteInput | undefined): Promise<WindowItem> {
  const { accountId } = actor;
  const v = validateWindowWrite(attributesOf(input, "maintenance_window"));
  await checkMonitors(ctx, accountId, v);
  await checkExternalId(ctx, accountId, v);
  if (Object.keys(v.details).length) throw validationError(v.details);
  const now = ctx.clock.now();
  const row = await store.insertWindow(ctx.db, { accountId, cols: columnsOf(v.changes, null, now), monitorIds: v.changes.monitor_ids!, now }).catch(externalIdRace);
  logOf(ctx).info("maintenance window created", { request_id: actor.requestId, account_id: accountId, window_id: row.id, active_from: toIso(row.active_from), active_until: toIso(row.active_until) });
  changed(ctx, row.id, accountId, []);
  return (await present(ctx, [row]))[0]!;
}

/**
 * Changes only the attributes given. Monitors the change takes out of maintenance (the window ends
 * now, is disabled, or lets them go) and that are still down open their incidents right after.
 */
export async function updateMaintenanceWindow(ctx: AppContext, actor: Actor, id: number, input: WriteInput | undefined): Promise<WindowItem> {
  const { accountId } = actor;
  const row = await owned(ctx, actor, id);
  const v = validateWindowWrite(attributesOf(input, "maintenance_window", id), row);
  await checkMonitors(ctx, accountId, v);
  await checkExternalId(ctx, accountId, v, id);
  if (Object.keys(v.details).length) throw validationError(v.details);
  const now = ctx.clock.now();
  const done = await store.updateWindow(ctx.db, { accountId, id, cols: (before) => columnsOf(v.changes, before, now), monitorIds: v.changes.monitor_ids, now }).catch(externalIdRace);
  if (!done) throw notFound("maintenance window"); // deleted between the read and the write
  const { before, beforeMonitorIds, after } = done;
  const stillHeld = activeAt(after, now) ? new Set(v.changes.monitor_ids ?? beforeMonitorIds) : new Set<number>();
  const left = activeAt(before, now) ? beforeMonitorIds.filter((m) => !stillHeld.has(m)) : [];
  changed(ctx, id, accountId, left);
  return (await present(ctx, [after]))[0]!;
}

/** Deletes the window; its monitors leave its maintenance at once. */
export async function deleteMaintenanceWindow(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  const { accountId } = actor;
  const gone = await store.deleteWindow(ctx.db, accountId, id);
  if (!gone) throw notFound("maintenance window");
  logOf(ctx).info("maintenance window deleted", { request_id: actor.requestId, account_id: accountId, window_id: id });
  changed(ctx, id, accountId, activeAt(gone.row, ctx.clock.now()) ? gone.monitorIds : []);
}
