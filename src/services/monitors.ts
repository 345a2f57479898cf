import type { AppContext } from "../context.ts";
import type { MonitorType } from "../domain/monitor.ts";
import { DAY_MS, uptimeOf } from "../domain/uptime.ts";
import type { MonitorAttributes, SecretAttribute } from "../domain/monitor-schema.ts";
import { validateMonitorWrite, type MonitorWriteResult } from "../domain/monitor-validation.ts";
import type { AccountLimitSettings } from "../domain/plan-limits.ts";
import { notFound, validationError } from "../http/errors.ts";
import { accountLimitSettings } from "../store/accounts.ts";
import { randomToken } from "../lib/tokens.ts";
import { monitorsInActiveWindows } from "../store/maintenance-windows.ts";
import { externalIdTaken, isExternalIdConflict } from "../store/external-ids.ts";
import { GroupMissing, ownedGroupIds } from "../store/groups.ts";
import * as store from "../store/monitors.ts";
import { recentChecks, uptimeCountsOf, type RecentCheck } from "../store/recent-checks.ts";
import { uptimeFromRollups } from "../store/rollups.ts";
import type { MonitorRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { existingMonitor, monitorAttributes } from "./monitor-attributes.ts";
import { checkAlertingReferences, dependencyCycleProblem, monitorLinks } from "./monitor-dependencies.ts";
import { checkMinInterval, monitorCountProblem } from "./account-limits.ts";
import { privateTargetDetails } from "./private-targets.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Monitors, for the API and the dashboard alike: validation (domain/monitor-validation.ts), the
 * channel ownership and private-target checks, writes through the write queue, `monitor.changed`
 * after the commit, and the log lines. Every lookup is scoped to the actor's account.
 */
export type MonitorItem = Item<MonitorAttributes>;

/** Heartbeat ping tokens: 24 random bytes, base64url (192 bits, URL-safe). */
const newHeartbeatToken = () => randomToken(24);

const logOf = (ctx: AppContext) => ctx.log.child("api.monitors");

async function present(ctx: AppContext, row: MonitorRow): Promise<MonitorItem> {
  const [channels, links, tags] = await Promise.all([store.channelIdsByMonitor(ctx.db, [row.id]), monitorLinks(ctx.db, [row.id]), store.tagsByMonitor(ctx.db, [row.id])]);
  return (await withWindows(ctx, [{ id: row.id, attributes: monitorAttributes(withJournaled(ctx, row), channels.get(row.id) ?? [], links.get(row.id), tags.get(row.id)) }]))[0]!;
}

/**
 * is_in_maintenance reads true while the manual switch is on or an active maintenance window holds
 * the monitor (docs/maintenance-windows.md "What maintenance does"); the switch alone is stored.
 */
async function withWindows(ctx: AppContext, items: MonitorItem[]): Promise<MonitorItem[]> {
  const held = await monitorsInActiveWindows(ctx.db, items.filter((i) => !i.attributes.is_in_maintenance).map((i) => i.id), ctx.clock.now());
  for (const i of items) if (held.has(i.id)) i.attributes.is_in_maintenance = true;
  return items;
}

/** The row as the pings acknowledged but still in the heartbeat journal will leave it. */
function withJournaled(ctx: AppContext, row: MonitorRow): MonitorRow {
  const at = row.monitor_type === "heartbeat" ? ctx.pings.lastPingAt(row.id) : undefined;
  if (at === undefined || (row.heartbeat_last_ping_at !== null && row.heartbeat_last_ping_at >= at)) return row;
  return { ...row, heartbeat_last_ping_at: at, last_checked_at: Math.max(row.last_checked_at ?? 0, at) };
}

async function owned(ctx: AppContext, actor: Actor, id: number, what = "monitor"): Promise<MonitorRow> {
  const row = await store.findMonitor(ctx.db, actor.accountId, id);
  if (!row) throw notFound(what);
  return row;
}

/** notification_channel_ids must name this account's channels; another account's id reads as missing. */
async function checkChannels(ctx: AppContext, accountId: number, v: MonitorWriteResult): Promise<void> {
  const ids = v.changes.notification_channel_ids as number[] | undefined;
  if (!ids?.length) return;
  const owned = await store.ownedChannelIds(ctx.db, accountId, ids);
  const missing = ids.filter((id) => !owned.has(id));
  if (missing.length) (v.details.notification_channel_ids ??= []).push(`channel ${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist in this account`);
}

/** group_id must name one of this account's groups (README "Groups, tags and status page updates"). */
async function checkGroup(ctx: AppContext, accountId: number, v: MonitorWriteResult): Promise<void> {
  const id = v.changes.group_id;
  if (typeof id !== "number" || (await ownedGroupIds(ctx.db, accountId, [id])).has(id)) return;
  (v.details.group_id ??= []).push(groupMissing(id));
}

/** external_id is unique among the account's monitors (README "Configuration as code"). */
async function checkExternalId(ctx: AppContext, accountId: number, v: MonitorWriteResult, exceptId?: number): Promise<void> {
  const x = v.changes.external_id;
  if (typeof x === "string" && !v.details.external_id && (await externalIdTaken(ctx.db, "monitors", accountId, x, exceptId))) v.details.external_id = ["has already been taken"];
}

const groupMissing = (id: number) => `group ${id} does not exist in this account`;

/**
 * The group was deleted between the check above and the write, or another write took the
 * external_id meanwhile: the same 422 as the checks give.
 */
function groupGone(err: unknown): never {
  if (err instanceof GroupMissing) throw validationError({ group_id: [groupMissing(err.groupId)] });
  if (isExternalIdConflict(err)) throw validationError({ external_id: ["has already been taken"] });
  throw err;
}

/** The account's private-target rule: hosts that resolve to private addresses are refused on write (private-targets.ts). */
async function checkPrivateTargets(ctx: AppContext, accountId: number, v: MonitorWriteResult, type: MonitorType | null, before: Record<string, unknown> = {}): Promise<void> {
  // an invalid write is refused anyway; no name is resolved for it
  if (!type || Object.keys(v.details).length || !(await ctx.privateTargets.blocksNow(accountId))) return;
  const found = await privateTargetDetails(type, { ...before, ...v.changes }, new Set(Object.keys(v.changes)));
  for (const [attr, messages] of Object.entries(found)) (v.details[attr] ??= []).push(...messages);
}

async function accountLimits(ctx: AppContext, accountId: number): Promise<AccountLimitSettings> {
  const limits = await accountLimitSettings(ctx.db, accountId);
  if (!limits) throw notFound("account");
  return limits;
}

function changed(ctx: AppContext, monitorId: number, accountId: number, deleted?: boolean): void {
  // emitted after the write committed, so listeners (scheduler, heartbeat timers, peers) read the new row
  ctx.events.emit("monitor.changed", deleted ? { monitorId, accountId, deleted } : { monitorId, accountId });
}

/** A page of the account's monitors, id ascending. */
export type { MonitorFilter, MonitorOrder } from "../store/monitors.ts";

export async function listMonitors(ctx: AppContext, actor: Actor, filter: store.MonitorFilter, window: PageWindow, order?: store.MonitorOrder): Promise<Listed<MonitorAttributes>> {
  const { rows, total } = await store.listMonitors(ctx.db, actor.accountId, filter, window, order ?? "id", ctx.clock.now());
  return { items: await presentAll(ctx, rows), total };
}

async function presentAll(ctx: AppContext, rows: MonitorRow[]): Promise<MonitorItem[]> {
  const ids = rows.map((r) => r.id);
  const [channels, links, tags] = await Promise.all([store.channelIdsByMonitor(ctx.db, ids), monitorLinks(ctx.db, ids), store.tagsByMonitor(ctx.db, ids)]);
  const items = rows.map((r) => ({ id: r.id, attributes: monitorAttributes(withJournaled(ctx, r), channels.get(r.id) ?? [], links.get(r.id), tags.get(r.id)) }));
  return withWindows(ctx, items);
}

/**
 * A page of the monitors passing `filter`, the lowest uptime over the last 24 h first (no checks
 * last, id breaking ties): the figure is computed for every monitor passing the filter, so this
 * order costs more than the others as the account grows (BENCHMARKS.md).
 */
export async function monitorsByUptime(ctx: AppContext, actor: Actor, filter: store.MonitorFilter, window: PageWindow): Promise<Listed<MonitorAttributes>> {
  const ids = await store.listMonitorIds(ctx.db, actor.accountId, filter);
  const now = ctx.clock.now();
  const counts = await uptimeCountsOf(ctx.pings, ids, now - DAY_MS, now);
  const ratio = (id: number) => uptimeOf(counts.get(id)!).uptime ?? 2;
  const order = ids.map((id) => ({ id, r: ratio(id) })).sort((a, b) => a.r - b.r || a.id - b.id);
  const pageIds = order.slice(window.offset, window.offset + window.limit).map((o) => o.id);
  const { rows } = await store.listMonitors(ctx.db, actor.accountId, { ids: pageIds }, { limit: pageIds.length || 1, offset: 0 }, "id", now);
  const at = new Map(pageIds.map((id, i) => [id, i]));
  rows.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
  return { items: await presentAll(ctx, rows), total: ids.length };
}

export async function getMonitor(ctx: AppContext, actor: Actor, id: number): Promise<MonitorItem> {
  return present(ctx, await owned(ctx, actor, id));
}

export async function createMonitor(ctx: AppContext, actor: Actor, input: WriteInput | undefined): Promise<MonitorItem> {
  const { accountId } = actor;
  const v = validateMonitorWrite(attributesOf(input, "monitor"));
  const limits = await accountLimits(ctx, accountId);
  checkMinInterval(limits, v, v.type);
  await checkChannels(ctx, accountId, v);
  await checkAlertingReferences(ctx, accountId, v, null);
  await checkGroup(ctx, accountId, v);
  await checkExternalId(ctx, accountId, v);
  await checkPrivateTargets(ctx, accountId, v, v.type);
  if (Object.keys(v.details).length) throw validationError(v.details);
  // monitor writes are write-queue jobs: concurrent writes share a commit (and the search index's
  // per-transaction cost); BENCHMARKS.md has the figures
  const heartbeatToken = v.type === "heartbeat" ? newHeartbeatToken() : null;
  const written = await ctx.writes
    .run(async (trx) => {
      const full = await monitorCountProblem(trx, accountId, limits);
      return full ? { full } : { row: await store.insertMonitor(trx, ctx.secrets, { accountId, changes: v.changes, now: ctx.clock.now(), heartbeatToken }) };
    })
    .catch(groupGone);
  if (written.full) throw written.full;
  const row = written.row!;
  logOf(ctx).info("monitor created", { request_id: actor.requestId, account_id: accountId, monitor_id: row.id, monitor_type: row.monitor_type });
  changed(ctx, row.id, accountId);
  return present(ctx, row);
}

/** Changes only the attributes given; the others keep their values. */
export async function updateMonitor(ctx: AppContext, actor: Actor, id: number, input: WriteInput | undefined): Promise<MonitorItem> {
  const { accountId } = actor;
  const row = await owned(ctx, actor, id);
  const attrs = attributesOf(input, "monitor", id);
  const [channels, links, tags] = await Promise.all([store.channelIdsByMonitor(ctx.db, [id]), monitorLinks(ctx.db, [id]), store.tagsByMonitor(ctx.db, [id])]);
  const existing = existingMonitor(row, channels.get(id) ?? [], links.get(id), tags.get(id));
  const v = validateMonitorWrite(attrs, existing);
  if (v.changes.interval_sec !== undefined) checkMinInterval(await accountLimits(ctx, accountId), v, v.type ?? existing.type, existing.values.interval_sec);
  await checkChannels(ctx, accountId, v);
  await checkAlertingReferences(ctx, accountId, v, id);
  await checkGroup(ctx, accountId, v);
  await checkExternalId(ctx, accountId, v, id);
  await checkPrivateTargets(ctx, accountId, v, v.type ?? existing.type, existing.values);
  if (Object.keys(v.details).length) throw validationError(v.details);
  const written = await ctx.writes
    .run(async (trx) => {
      // judged in the write's transaction: nothing is written when the new parents close a cycle
      const cycle = await dependencyCycleProblem(trx, accountId, id, v.changes.depends_on_ids as number[] | undefined);
      return cycle ? { cycle } : { row: await store.updateMonitor(trx, ctx.secrets, { accountId, id, changes: v.changes, now: ctx.clock.now() }) };
    })
    .catch(groupGone);
  if (written.cycle) throw validationError({ depends_on_ids: [written.cycle] });
  const after = written.row;
  if (!after) throw notFound("monitor"); // deleted between the read and the write
  if (Object.keys(v.changes).length) changed(ctx, id, accountId);
  return present(ctx, after);
}

/** Deletes the monitor with its checks, incidents and events. */
export async function deleteMonitor(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  const { accountId } = actor;
  if (!(await ctx.writes.run((trx) => store.deleteMonitor(trx, accountId, id)))) throw notFound("monitor");
  logOf(ctx).info("monitor deleted", { request_id: actor.requestId, account_id: accountId, monitor_id: id });
  changed(ctx, id, accountId, true);
}

/** A new ping token for a heartbeat monitor: the old one answers 404 at once; history is kept. */
export async function rotateHeartbeatToken(ctx: AppContext, actor: Actor, id: number): Promise<MonitorItem> {
  const { accountId } = actor;
  const row = await store.rotateHeartbeatToken(ctx.db, accountId, id, newHeartbeatToken(), ctx.clock.now());
  if (!row) throw notFound("heartbeat monitor");
  logOf(ctx).info("heartbeat token rotated", { request_id: actor.requestId, account_id: accountId, monitor_id: id });
  changed(ctx, id, accountId);
  return present(ctx, row);
}

/** Which write-only secrets the monitor holds (never their values): the edit form says "stored". */
export async function storedMonitorSecrets(ctx: AppContext, actor: Actor, id: number): Promise<Record<SecretAttribute, boolean>> {
  return existingMonitor(await owned(ctx, actor, id), []).secrets;
}

/** The manual maintenance switch alone, without the windows: what the edit form shows and sends back. */
export async function manualMaintenanceSwitch(ctx: AppContext, actor: Actor, id: number): Promise<boolean> {
  return (await owned(ctx, actor, id)).is_in_maintenance === 1;
}

/** The monitor's uptime over each of the last `spansMs` up to now (null: no checks in the span). */
export async function monitorUptime(ctx: AppContext, actor: Actor, id: number, spansMs: readonly number[]): Promise<(number | null)[]> {
  await owned(ctx, actor, id);
  const now = ctx.clock.now();
  const found = await Promise.all(spansMs.map((span) => uptimeFromRollups(ctx.pings, id, now - span, now)));
  return found.map((u) => u.uptime);
}

/** How many of the account's monitors passing `filter` show each state (paused and maintenance apart), for the list's summary. */
export async function monitorStateCounts(ctx: AppContext, actor: Actor, filter: store.MonitorFilter) {
  return store.stateCounts(ctx.db, actor.accountId, filter, ctx.clock.now());
}

/** What the dashboard's list shows beside each monitor: uptime over the last 24 h and its last results. */
export interface ListFigures {
  uptime24h: number | null;
  recent: RecentCheck[];
}

/**
 * The list's figures for monitors already read for `actor` (their ids come from listMonitors), all
 * at once: a few statements for the page, not one per row.
 */
export async function listFigures(ctx: AppContext, ids: number[], recent: number): Promise<Map<number, ListFigures>> {
  const now = ctx.clock.now();
  const [counts, last] = await Promise.all([uptimeCountsOf(ctx.pings, ids, now - DAY_MS, now), recentChecks(ctx.pings, ids, recent, now)]);
  return new Map(ids.map((id) => [id, { uptime24h: uptimeOf(counts.get(id)!).uptime, recent: last.get(id) ?? [] }]));
}
