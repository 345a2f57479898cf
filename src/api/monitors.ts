import { Type } from "@sinclair/typebox";
import type { AppContext } from "../context.ts";
import { MONITOR_STATES, MONITOR_TYPES, type MonitorType } from "../domain/monitor.ts";
import { MonitorAttributesSchema, MonitorWriteBodySchema } from "../domain/monitor-schema.ts";
import { validateMonitorWrite, type MonitorWriteResult } from "../domain/monitor-validation.ts";
import { randomToken } from "../lib/tokens.ts";
import { channelIdsByMonitor, deleteMonitor, findMonitor, insertMonitor, listMonitors, ownedChannelIds, rotateHeartbeatToken, updateMonitor } from "../store/monitors.ts";
import type { MonitorRow } from "../store/tables.ts";
import { list, resource, single } from "./envelope.ts";
import { notFound, validationError } from "../http/errors.ts";
import { pathId, writeAttributes } from "./json-api.ts";
import { privateTargetDetails } from "./private-targets.ts";
import { existingMonitor, monitorAttributes } from "./monitor-mapper.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { deletedResponse, listResponse, PageQuery, singleResponse } from "./schemas.ts";
import { enumOf } from "../domain/schema-parts.ts";

const BASE = "/api/v1/monitors";
const TAG = "Monitors";

export const MonitorListQuery = Type.Object({
  ...PageQuery,
  status: enumOf(MONITOR_STATES, { description: "only monitors in this aggregate state" }),
  type: enumOf(MONITOR_TYPES, { description: "only monitors of this type" }),
  q: Type.String({ maxLength: 200, description: "case-insensitive substring of the name or the target" }),
});

/** Heartbeat ping tokens: 24 random bytes, base64url (192 bits, URL-safe; decisions.md asks ≥ 128). */
export const newHeartbeatToken = () => randomToken(24);

async function present(ctx: AppContext, row: MonitorRow, status = 200) {
  const channels = await channelIdsByMonitor(ctx.db, [row.id]);
  return single("monitor", row.id, monitorAttributes(withJournaled(ctx, row), channels.get(row.id) ?? []), status);
}

/** The row as the pings acknowledged but still in the heartbeat journal will leave it. */
function withJournaled(ctx: AppContext, row: MonitorRow): MonitorRow {
  const at = row.monitor_type === "heartbeat" ? ctx.pings?.lastPingAt(row.id) : undefined;
  if (at === undefined || (row.heartbeat_last_ping_at !== null && row.heartbeat_last_ping_at >= at)) return row;
  return { ...row, heartbeat_last_ping_at: at, last_checked_at: Math.max(row.last_checked_at ?? 0, at) };
}

/** notification_channel_ids must name this account's channels; another account's id reads as missing. */
async function checkChannels(ctx: AppContext, accountId: number, v: MonitorWriteResult): Promise<void> {
  const ids = v.changes.notification_channel_ids as number[] | undefined;
  if (!ids?.length) return;
  const owned = await ownedChannelIds(ctx.db, accountId, ids);
  const missing = ids.filter((id) => !owned.has(id));
  if (missing.length) (v.details.notification_channel_ids ??= []).push(`channel ${missing.join(", ")} ${missing.length === 1 ? "does" : "do"} not exist in this account`);
}

/** The account's private-target rule: hosts that resolve to private addresses are refused on write (private-targets.ts). */
async function checkPrivateTargets(ctx: AppContext, accountId: number, v: MonitorWriteResult, type: MonitorType | null, before: Record<string, unknown> = {}): Promise<void> {
  // an invalid write is refused anyway; no name is resolved for it
  if (!type || Object.keys(v.details).length || !(await ctx.privateTargets.blocksNow(accountId))) return;
  const found = await privateTargetDetails(type, { ...before, ...v.changes }, new Set(Object.keys(v.changes)));
  for (const [attr, messages] of Object.entries(found)) (v.details[attr] ??= []).push(...messages);
}

function changed(ctx: AppContext, monitorId: number, accountId: number, deleted?: boolean): void {
  // emitted after the write committed, so listeners (scheduler, heartbeat timers, peers) read the new row
  ctx.events.emit("monitor.changed", deleted ? { monitorId, accountId, deleted } : { monitorId, accountId });
}

export const monitorRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "monitors:read",
    summary: "List monitors (id ascending)",
    tag: TAG,
    query: MonitorListQuery,
    response: listResponse("monitor", MonitorAttributesSchema),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const filter = { status: q.oneOf("status", MONITOR_STATES), type: q.oneOf("type", MONITOR_TYPES), q: q.string("q") };
      q.done();
      const { rows, total } = await listMonitors(ctx.db, req.caller.accountId, filter, { limit: perPage, offset });
      const channels = await channelIdsByMonitor(ctx.db, rows.map((r) => r.id));
      return list(rows.map((r) => resource("monitor", r.id, monitorAttributes(withJournaled(ctx, r), channels.get(r.id) ?? []))), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "monitors:write",
    summary: "Create a monitor",
    tag: TAG,
    body: MonitorWriteBodySchema,
    response: singleResponse("monitor", MonitorAttributesSchema),
    successStatus: 201,
    example: { name: "API health", monitor_type: "http", target: "https://api.example.com/health", interval_sec: 60, timeout_ms: 5000, expected_http_codes: "200-299" },
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const v = validateMonitorWrite(writeAttributes(req.body, "monitor"));
      await checkChannels(ctx, accountId, v);
      await checkPrivateTargets(ctx, accountId, v, v.type);
      if (Object.keys(v.details).length) throw validationError(v.details);
      // monitor writes are write-queue jobs: concurrent writes share a commit (and the search
      // index's per-transaction cost), ~27% of a write's cost with 100,000 monitors (api bench)
      const heartbeatToken = v.type === "heartbeat" ? newHeartbeatToken() : null;
      const row = await ctx.writes.run((trx) => insertMonitor(trx, ctx.secrets, { accountId, changes: v.changes, now: ctx.clock.now(), heartbeatToken }));
      ctx.log.child("api.monitors").info("monitor created", { request_id: req.requestId, account_id: accountId, monitor_id: row.id, monitor_type: row.monitor_type });
      changed(ctx, row.id, accountId);
      return present(ctx, row, 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    scope: "monitors:read",
    summary: "Get a monitor",
    tag: TAG,
    response: singleResponse("monitor", MonitorAttributesSchema),
    async handler(req, ctx) {
      const row = await findMonitor(ctx.db, req.caller.accountId, pathId(req.params, "monitor"));
      if (!row) throw notFound("monitor");
      return present(ctx, row);
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Update a monitor (only the attributes sent change)",
    tag: TAG,
    body: MonitorWriteBodySchema,
    response: singleResponse("monitor", MonitorAttributesSchema),
    example: { is_paused: true },
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const id = pathId(req.params, "monitor");
      const row = await findMonitor(ctx.db, accountId, id);
      if (!row) throw notFound("monitor");
      const attrs = writeAttributes(req.body, "monitor", id);
      const channels = await channelIdsByMonitor(ctx.db, [id]);
      const existing = existingMonitor(row, channels.get(id) ?? []);
      const v = validateMonitorWrite(attrs, existing);
      await checkChannels(ctx, accountId, v);
      await checkPrivateTargets(ctx, accountId, v, v.type ?? existing.type, existing.values);
      if (Object.keys(v.details).length) throw validationError(v.details);
      const after = await ctx.writes.run((trx) => updateMonitor(trx, ctx.secrets, { accountId, id, changes: v.changes, now: ctx.clock.now() }));
      if (!after) throw notFound("monitor"); // deleted between the read and the write
      if (Object.keys(v.changes).length) changed(ctx, id, accountId);
      return present(ctx, after);
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Delete a monitor with its checks, incidents and events",
    tag: TAG,
    response: deletedResponse("monitor"),
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const id = pathId(req.params, "monitor");
      if (!(await ctx.writes.run((trx) => deleteMonitor(trx, accountId, id)))) throw notFound("monitor");
      ctx.log.child("api.monitors").info("monitor deleted", { request_id: req.requestId, account_id: accountId, monitor_id: id });
      changed(ctx, id, accountId, true);
      return single("monitor", id, { deleted: true });
    },
  },
  {
    method: "POST",
    path: `${BASE}/:id/heartbeat-token/rotate`,
    scope: "monitors:write",
    summary: "Rotate a heartbeat monitor's ping token (the old one answers 404 at once; history is kept)",
    tag: TAG,
    response: singleResponse("monitor", MonitorAttributesSchema),
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const id = pathId(req.params, "heartbeat monitor");
      const row = await rotateHeartbeatToken(ctx.db, accountId, id, newHeartbeatToken(), ctx.clock.now());
      if (!row) throw notFound("heartbeat monitor");
      ctx.log.child("api.monitors").info("heartbeat token rotated", { request_id: req.requestId, account_id: accountId, monitor_id: id });
      changed(ctx, id, accountId);
      return present(ctx, row);
    },
  },
];
