import type { AppContext } from "../context.ts";
import { validateGroupWrite, type GroupAttributes } from "../domain/group-schema.ts";
import { notFound, validationError } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import { externalIdTaken, isExternalIdConflict } from "../store/external-ids.ts";
import * as store from "../store/groups.ts";
import type { MonitorGroupRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Groups of monitors, for the API and the dashboard alike (README "Groups, tags and status page
 * updates"): names unique within the account, and a deleted group's monitors left ungrouped. Which
 * group a monitor is in is the monitor's `group_id` (services/monitors.ts checks it names one of
 * these).
 */
export type GroupItem = Item<GroupAttributes>;

const TAKEN = "has already been taken";
const logOf = (ctx: AppContext) => ctx.log.child("api.groups");

function groupAttributes(r: MonitorGroupRow, monitorCount: number): GroupAttributes {
  return { name: r.name, description: r.description, sort_order: Number(r.sort_order), external_id: r.external_id, monitor_count: monitorCount, created_at: toIso(r.created_at), updated_at: toIso(r.updated_at) };
}

async function present(ctx: AppContext, row: MonitorGroupRow): Promise<GroupItem> {
  const counts = await store.monitorCounts(ctx.db, row.account_id, [row.id]);
  return { id: row.id, attributes: groupAttributes(row, counts.get(row.id) ?? 0) };
}

async function owned(ctx: AppContext, actor: Actor, id: number): Promise<MonitorGroupRow> {
  const row = await store.findGroup(ctx.db, actor.accountId, id);
  if (!row) throw notFound("group");
  return row;
}

async function validated(ctx: AppContext, actor: Actor, attrs: Record<string, unknown>, exceptId?: number) {
  const { changes, details } = validateGroupWrite(attrs, exceptId === undefined);
  if (typeof changes.name === "string" && !details.name && (await store.groupNameTaken(ctx.db, actor.accountId, changes.name, exceptId))) details.name = [TAKEN];
  if (typeof changes.external_id === "string" && !details.external_id && (await externalIdTaken(ctx.db, "monitor_groups", actor.accountId, changes.external_id, exceptId))) details.external_id = [TAKEN];
  if (Object.keys(details).length) throw validationError(details);
  return changes as store.GroupColumns;
}

function takenError(err: unknown): never {
  if (err instanceof store.GroupNameTaken) throw validationError({ name: [TAKEN] });
  if (isExternalIdConflict(err)) throw validationError({ external_id: [TAKEN] });
  throw err;
}

/** A page of the account's groups, by sort_order, then name. */
export async function listGroups(ctx: AppContext, actor: Actor, window: PageWindow, filter: { externalId?: string } = {}): Promise<Listed<GroupAttributes>> {
  const { rows, total } = await store.listGroups(ctx.db, actor.accountId, window, filter);
  const counts = await store.monitorCounts(ctx.db, actor.accountId, rows.map((r) => r.id));
  return { items: rows.map((r) => ({ id: r.id, attributes: groupAttributes(r, counts.get(r.id) ?? 0) })), total };
}

export async function getGroup(ctx: AppContext, actor: Actor, id: number): Promise<GroupItem> {
  return present(ctx, await owned(ctx, actor, id));
}

export async function createGroup(ctx: AppContext, actor: Actor, input: WriteInput | undefined): Promise<GroupItem> {
  const cols = await validated(ctx, actor, attributesOf(input, "group"));
  try {
    const row = await store.insertGroup(ctx.db, { accountId: actor.accountId, cols: cols as store.GroupColumns & { name: string }, now: ctx.clock.now() });
    logOf(ctx).info("group created", { request_id: actor.requestId, account_id: actor.accountId, group_id: row.id });
    return present(ctx, row);
  } catch (err) {
    takenError(err);
  }
}

/** Changes only the attributes given. */
export async function updateGroup(ctx: AppContext, actor: Actor, id: number, input: WriteInput | undefined): Promise<GroupItem> {
  const row = await owned(ctx, actor, id);
  const cols = await validated(ctx, actor, attributesOf(input, "group", id), id);
  if (Object.keys(cols).length === 0) return present(ctx, row);
  try {
    const after = await store.updateGroup(ctx.db, { accountId: actor.accountId, id, cols, now: ctx.clock.now() });
    if (!after) throw notFound("group");
    return present(ctx, after);
  } catch (err) {
    takenError(err);
  }
}

/** Deletes the group; its monitors stay, ungrouped. */
export async function deleteGroup(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  const { accountId } = actor;
  const moved = await store.deleteGroup(ctx.db, accountId, id, ctx.clock.now());
  if (moved === null) throw notFound("group");
  // no monitor.changed per monitor: nothing that listens (scheduler, heartbeat timers, probe peers)
  // reads group_id, and a big group would send every open dashboard one reload per monitor
  logOf(ctx).info("group deleted", { request_id: actor.requestId, account_id: accountId, group_id: id, monitors_ungrouped: moved });
}

/** The account's groups as the dashboard and status pages show them: id → name, in display order. */
export async function groupNames(ctx: AppContext, accountId: number): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (let offset = 0; ; offset += 100) {
    const { rows, total } = await store.listGroups(ctx.db, accountId, { limit: 100, offset });
    for (const r of rows) out.set(r.id, r.name);
    if (rows.length === 0 || out.size >= total) return out;
  }
}
