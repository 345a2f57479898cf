import type { AppContext } from "../context.ts";
import type { AlertEvent, AlertPayload, FollowupEvent, PayloadEvent } from "../domain/alert-payload.ts";
import { daysLeft, type ExpiryKind } from "../domain/expiry-stage.ts";
import { toIso } from "../lib/dates.ts";
import { alertChannelIds, deliveryIdFor, deliverySalt, insertAlerts, latestTransition, regionSummary } from "../store/alerts.ts";
import { countTransitions, hadQuietGap, lastFlappingAlertAt } from "../store/flap-history.ts";
import type { Db } from "../store/database.ts";
import type { IncidentRow, MonitorRow } from "../store/tables.ts";

export interface AlertRequest {
  monitor: MonitorRow;
  event: AlertEvent;
  state: string;
  previousState: string;
  at: number;
  incident: IncidentRow | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** channels alerted besides the monitor's own: an escalated incident's escalation channels hear its recovery */
  alsoChannelIds?: readonly number[];
}

/**
 * Flap protection: more than FLAP_MAX_CHANGES state changes within FLAP_WINDOW_MS make the monitor
 * "flapping": it is reported once, and its alerts are suppressed until it has gone FLAP_WINDOW_MS
 * without a state change; the change after that quiet spell alerts normally.
 */
export const FLAP_MAX_CHANGES = 5;
export const FLAP_WINDOW_MS = 10 * 60_000;

type FlapVerdict = { kind: "normal" } | { kind: "flapping"; changes: number } | { kind: "suppressed" };

/** Decides from the monitor's transition rows and flapping alerts, so the verdict survives restarts. */
async function flapVerdict(db: Db, monitorId: number, at: number): Promise<FlapVerdict> {
  const lastFlap = await lastFlappingAlertAt(db, monitorId);
  if (lastFlap !== null && lastFlap <= at && !(await hadQuietGap(db, monitorId, lastFlap, at, FLAP_WINDOW_MS))) return { kind: "suppressed" };
  const changes = await countTransitions(db, monitorId, at - FLAP_WINDOW_MS, at);
  return changes > FLAP_MAX_CHANGES ? { kind: "flapping", changes } : { kind: "normal" };
}

export function dashboardUrl(baseUrl: string, monitorId: number | string): string {
  return `${baseUrl.replace(/\/+$/, "")}/monitors/${monitorId}`;
}

/**
 * Hands an alert to delivery: one outbox row per enabled channel linked to the monitor, written
 * inside the caller's transaction (`db`), so an alert exists exactly when the state change that
 * caused it does. The dispatcher (src/notify/dispatcher.ts) sends them after the commit.
 */
export async function raiseAlert(db: Db, ctx: AppContext, a: AlertRequest): Promise<void> {
  const log = ctx.log.child("alerts");
  const channelIds = [...new Set([...(await alertChannelIds(db, a.monitor.account_id, a.monitor.id)), ...(a.alsoChannelIds ?? [])])];
  const verdict = await flapVerdict(db, a.monitor.id, a.at);
  const fields = { monitor_id: a.monitor.id, event: a.event, state: a.state, previous_state: a.previousState, channels: channelIds.length };
  if (verdict.kind === "suppressed") {
    log.info("alert suppressed: the monitor is flapping", fields);
    return;
  }
  const event: PayloadEvent = verdict.kind === "flapping" ? "monitor.flapping" : a.event;
  log.info(event === "monitor.flapping" ? "monitor flapping: reported once, then quiet until stable" : "alert queued", { ...fields, event });
  if (channelIds.length === 0) return;

  const payload = await buildPayload(db, ctx, a, event);
  if (verdict.kind === "flapping") payload.flapping = { changes: verdict.changes, window_ms: FLAP_WINDOW_MS };
  const transition = await latestTransition(db, a.monitor.id);
  // Without a transition row (a caller outside applyStateChange) the time stands in for it.
  await queueAlert(db, a.monitor, channelIds, payload, transition?.id ?? -a.at, a.at, ctx.clock.now());
}

export interface ExpiryAlertRequest {
  monitor: MonitorRow;
  /** the monitor's state as the check that saw the expiry left it */
  state: string;
  at: number;
  /** the monitor_events row of kind `expiring` written for it: the alert's key */
  eventId: number;
  kind: ExpiryKind;
  notAfter: number;
}

/**
 * Hands a `monitor.expiring` alert to delivery, inside the caller's transaction, which claimed its
 * stage (src/engine/expiry-alerts.ts). Not a state change: flap protection does not hold it back.
 */
export async function raiseExpiryAlert(db: Db, ctx: AppContext, a: ExpiryAlertRequest): Promise<void> {
  const channelIds = await alertChannelIds(db, a.monitor.account_id, a.monitor.id);
  const days = daysLeft(a.notAfter, a.at);
  ctx.log.child("alerts").info("alert queued", { monitor_id: a.monitor.id, event: "monitor.expiring", expires_at: toIso(a.notAfter), days_left: days, channels: channelIds.length });
  if (channelIds.length === 0) return;
  // no state changed: the state is the one it stays in
  const payload = await buildPayload(db, ctx, { monitor: a.monitor, state: a.state, previousState: a.state, at: a.at, incident: null, errorCode: null, errorMessage: null }, "monitor.expiring");
  payload.expiry = { kind: a.kind, expires_at: toIso(a.notAfter), days_left: days };
  await queueAlert(db, a.monitor, channelIds, payload, a.eventId, a.at, ctx.clock.now());
}

export interface FollowupAlertRequest {
  monitor: MonitorRow;
  incident: IncidentRow;
  event: FollowupEvent;
  /** the channels told: the monitor's own, or the escalation channels, or both */
  channelIds: readonly number[];
  /** the due row and its due time, which cause it */
  key: string;
  at: number;
}

/**
 * Hands an open incident's reminder or escalation to delivery (engine/followups.ts), inside the
 * caller's transaction, which claimed its due row: the down alert again, as it read when the
 * incident opened, but for the event and the time. Not a state change: flap protection does not
 * hold it back.
 */
export async function raiseFollowupAlert(db: Db, ctx: AppContext, a: FollowupAlertRequest): Promise<void> {
  const opening = await latestTransition(db, a.monitor.id);
  const payload = await buildPayload(db, ctx, {
    monitor: a.monitor,
    state: "down",
    previousState: opening?.from_state ?? "unknown",
    at: a.at,
    incident: a.incident,
    errorCode: a.incident.last_error_code,
    errorMessage: a.incident.last_error_message,
  }, a.event);
  await queueAlert(db, a.monitor, a.channelIds, payload, a.key, a.at, a.at);
}

/**
 * One outbox row per channel: the one writer of the outbox. The delivery id is derived from what
 * caused the alert (a transition, an expiry, a follow-up's due time) and the channel, so one cause
 * can never queue two alerts for the same channel.
 */
async function queueAlert(db: Db, monitor: MonitorRow, channelIds: readonly number[], payload: AlertPayload, key: number | string, at: number, nextAttemptAt: number): Promise<void> {
  const salt = await deliverySalt(db);
  const payloadJson = JSON.stringify(payload);
  await insertAlerts(
    db,
    channelIds.map((channelId) => ({
      accountId: monitor.account_id,
      monitorId: monitor.id,
      channelId,
      event: payload.event,
      deliveryId: deliveryIdFor(salt, key, channelId),
      payloadJson,
      createdAt: at,
      nextAttemptAt,
    })),
  );
}

async function buildPayload(db: Db, ctx: AppContext, a: Omit<AlertRequest, "event">, event: PayloadEvent): Promise<AlertPayload> {
  const regions = await regionSummary(db, a.monitor.id);
  const i = a.incident;
  return {
    event,
    occurred_at: toIso(a.at),
    monitor: { id: String(a.monitor.id), name: a.monitor.name, monitor_type: a.monitor.monitor_type, target: a.monitor.target },
    state: a.state,
    previous_state: a.previousState,
    incident: i ? { id: String(i.id), started_at: toIso(i.started_at), resolved_at: toIso(i.resolved_at), duration_ms: i.duration_ms } : null,
    error_code: a.errorCode,
    error_message: a.errorMessage,
    regions: regions.map((r) => ({ region: r.region, status: r.status, last_checked_at: toIso(r.last_checked_at) })),
    dashboard_url: dashboardUrl(ctx.config.baseUrl, a.monitor.id),
  };
}

