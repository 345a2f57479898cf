import type { AppContext } from "../context.ts";
import { validateUpdateWrite, type IncidentStatus, type UpdateAttributes, type UpdateKind } from "../domain/status-page-update-schema.ts";
import { notFound, validationError } from "../http/errors.ts";
import { parseDateParam, toIso } from "../lib/dates.ts";
import * as store from "../store/status-page-updates.ts";
import { pageMonitors } from "../store/status-history.ts";
import { findStatusPage, monitorIdsByPage } from "../store/status-pages.ts";
import type { StatusPageUpdateRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Updates people write on a status page, for the API and the dashboard alike (README "Groups, tags
 * and status page updates"): scoped to one page of the actor's account; the monitors an update
 * names must be on that page when it is written.
 */
export type UpdateItem = Item<UpdateAttributes>;

const logOf = (ctx: AppContext) => ctx.log.child("api.status-page-updates");

/** An ISO 8601 date-time with Z or an offset; not a bare date or epoch seconds, which read as something else. */
const parseTime = (text: string) => (/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}/.test(text.trim()) ? parseDateParam(text) : null);

function updateAttributes(r: StatusPageUpdateRow, monitorIds: number[]): UpdateAttributes {
  return {
    status_page_id: r.status_page_id,
    title: r.title,
    body: r.body,
    kind: r.kind as UpdateKind,
    status: r.status as IncidentStatus | null,
    affected_monitor_ids: monitorIds,
    published_at: toIso(r.published_at),
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

async function present(ctx: AppContext, row: StatusPageUpdateRow): Promise<UpdateItem> {
  const ids = await store.monitorIdsByUpdate(ctx.db, [row.id]);
  return { id: row.id, attributes: updateAttributes(row, ids.get(row.id) ?? []) };
}

/** The page, when it is the actor's; another account's reads as missing. */
async function ownedPage(ctx: AppContext, actor: Actor, pageId: number): Promise<number> {
  if (!(await findStatusPage(ctx.db, actor.accountId, pageId))) throw notFound("status page");
  return pageId;
}

async function owned(ctx: AppContext, actor: Actor, pageId: number, id: number): Promise<StatusPageUpdateRow> {
  await ownedPage(ctx, actor, pageId);
  const row = await store.findUpdate(ctx.db, pageId, id);
  if (!row) throw notFound("status page update");
  return row;
}

async function validated(ctx: AppContext, pageId: number, input: Record<string, unknown>, existing?: StatusPageUpdateRow) {
  const v = validateUpdateWrite(input, { existing: existing && { kind: existing.kind as UpdateKind, status: existing.status as IncidentStatus | null }, now: ctx.clock.now(), parseTime });
  const ids = v.changes.affected_monitor_ids;
  if (ids?.length) {
    const onPage = new Set((await monitorIdsByPage(ctx.db, [pageId])).get(pageId));
    const missing = ids.filter((id) => !onPage.has(id));
    if (missing.length) (v.details.affected_monitor_ids ??= []).push(`monitor ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} not on this status page`);
  }
  if (Object.keys(v.details).length) throw validationError(v.details);
  return v.changes;
}

/** The monitors an update on the page may name: the page's, in page order, with their names. */
export async function affectableMonitors(ctx: AppContext, actor: Actor, pageId: number): Promise<{ id: number; name: string }[]> {
  await ownedPage(ctx, actor, pageId);
  return (await pageMonitors(ctx.db, pageId)).map((m) => ({ id: m.id, name: m.name }));
}

/** A page of the status page's updates, newest first. */
export async function listUpdates(ctx: AppContext, actor: Actor, pageId: number, window: PageWindow): Promise<Listed<UpdateAttributes>> {
  await ownedPage(ctx, actor, pageId);
  const { rows, total } = await store.listUpdates(ctx.db, pageId, window);
  const ids = await store.monitorIdsByUpdate(ctx.db, rows.map((r) => r.id));
  return { items: rows.map((r) => ({ id: r.id, attributes: updateAttributes(r, ids.get(r.id) ?? []) })), total };
}

export async function getUpdate(ctx: AppContext, actor: Actor, pageId: number, id: number): Promise<UpdateItem> {
  return present(ctx, await owned(ctx, actor, pageId, id));
}

export async function createUpdate(ctx: AppContext, actor: Actor, pageId: number, input: WriteInput | undefined): Promise<UpdateItem> {
  await ownedPage(ctx, actor, pageId);
  const changes = await validated(ctx, pageId, attributesOf(input, "status_page_update"));
  // its subscribers get it once it is published (README "Email subscriptions")
  const row = await store.insertUpdate(ctx.db, { pageId, changes: changes as Parameters<typeof store.insertUpdate>[1]["changes"], now: ctx.clock.now(), mail: ctx.config.smtpUrl !== null });
  logOf(ctx).info("status page update created", { request_id: actor.requestId, account_id: actor.accountId, status_page_id: pageId, update_id: row.id, kind: row.kind });
  return present(ctx, row);
}

/**
 * Changes only the attributes given. A new incident status is a step subscribers are mailed
 * (README "Email subscriptions"); an edit of the words, the services or the time is not: the next
 * mail of it, if any, carries them.
 */
export async function updateUpdate(ctx: AppContext, actor: Actor, pageId: number, id: number, input: WriteInput | undefined): Promise<UpdateItem> {
  const row = await owned(ctx, actor, pageId, id);
  const changes = await validated(ctx, pageId, attributesOf(input, "status_page_update", id), row);
  if (Object.keys(changes).length === 0) return present(ctx, row);
  const step = changes.status !== undefined && changes.status !== null && changes.status !== row.status;
  const after = await store.updateUpdate(ctx.db, { pageId, id, changes, now: ctx.clock.now(), mail: step && ctx.config.smtpUrl !== null });
  if (!after) throw notFound("status page update");
  return present(ctx, after);
}

export async function deleteUpdate(ctx: AppContext, actor: Actor, pageId: number, id: number): Promise<void> {
  await ownedPage(ctx, actor, pageId);
  if (!(await store.deleteUpdate(ctx.db, pageId, id))) throw notFound("status page update");
  logOf(ctx).info("status page update deleted", { request_id: actor.requestId, account_id: actor.accountId, status_page_id: pageId, update_id: id });
}
