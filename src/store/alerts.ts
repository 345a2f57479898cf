import { createHash, randomBytes } from "node:crypto";
import type { Db } from "./database.ts";
import { putKvOnce } from "./kv.ts";
import { inCodePointOrder } from "./text-match.ts";
import type { AlertRow } from "./tables.ts";

/**
 * The alert outbox (Healthchecks' "flips and notifications"): rows are written in the transaction
 * of the state change that caused them and claimed by the dispatcher with a conditional UPDATE, so
 * two dispatchers never take the same row. Statuses: pending → sending → delivered | failed, and
 * sending → pending again for a retry or after a crash.
 */
export interface NewAlert {
  accountId: number;
  monitorId: number | null;
  channelId: number;
  event: string;
  deliveryId: string;
  payloadJson: string;
  createdAt: number;
  nextAttemptAt: number;
}

/** Inserts outbox rows; a row whose delivery_id exists already is skipped (one per state change and channel). */
export async function insertAlerts(db: Db, alerts: NewAlert[]): Promise<void> {
  if (alerts.length === 0) return;
  await db
    .insertInto("alerts")
    .values(
      alerts.map((a) => ({
        account_id: a.accountId,
        monitor_id: a.monitorId,
        channel_id: a.channelId,
        event: a.event,
        delivery_id: a.deliveryId,
        payload_json: a.payloadJson,
        status: "pending",
        attempts: 0,
        next_attempt_at: a.nextAttemptAt,
        created_at: a.createdAt,
      })),
    )
    .onConflict((oc) => oc.column("delivery_id").doNothing())
    .execute();
}

const SALT_KEY = "alert_delivery_salt";

/**
 * A random value per data directory, so delivery ids derived from (state change, channel) are
 * stable across retries and restarts but do not collide with another instance's.
 */
export async function deliverySalt(db: Db): Promise<string> {
  return putKvOnce(db, SALT_KEY, randomBytes(16).toString("hex"));
}

/**
 * A UUID-shaped id determined by the salt, what caused the alert (a transition's id, or a text key
 * such as an incident's follow-up and its due time) and the channel.
 */
export function deliveryIdFor(salt: string, cause: number | string, channelId: number): string {
  const h = createHash("sha256").update(`${salt}:${cause}:${channelId}`).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The newest transition of a monitor: inside the state change's transaction, the one just written. */
export async function latestTransition(db: Db, monitorId: number): Promise<{ id: number; at: number; from_state: string | null } | undefined> {
  return db
    .selectFrom("monitor_events")
    .select(["id", "at", "from_state"])
    .where("monitor_id", "=", monitorId)
    .where("kind", "=", "transition")
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** Every region's latest view of a monitor, for the alert's region summary. */
export async function regionSummary(db: Db, monitorId: number): Promise<{ region: string; status: string; last_checked_at: number }[]> {
  return db.selectFrom("monitor_region_states").select(["region", "last_status as status", "last_checked_at"]).where("monitor_id", "=", monitorId).orderBy(inCodePointOrder(db, "region")).execute();
}

/** Enabled channels linked to the monitor and owned by its account. */
export async function alertChannelIds(db: Db, accountId: number, monitorId: number): Promise<number[]> {
  const rows = await db
    .selectFrom("monitor_channels")
    .innerJoin("notification_channels", "notification_channels.id", "monitor_channels.channel_id")
    .select("notification_channels.id")
    .where("monitor_channels.monitor_id", "=", monitorId)
    .where("notification_channels.account_id", "=", accountId)
    .where("notification_channels.is_enabled", "=", 1)
    .orderBy("notification_channels.id")
    .execute();
  return rows.map((r) => r.id);
}

// ---- dispatcher side ----

/** Rows left in 'sending' by a process that stopped mid-delivery go back to the queue, due now. */
export async function requeueInterrupted(db: Db, now: number): Promise<number> {
  const r = await db.updateTable("alerts").set({ status: "pending", next_attempt_at: now }).where("status", "=", "sending").executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * Claims up to `limit` due rows: each is taken with a conditional UPDATE (pending → sending), so a
 * row another dispatcher took in between is skipped instead of sent twice.
 */
export async function claimDueAlerts(db: Db, now: number, limit: number): Promise<AlertRow[]> {
  // An alert waits while an older one for the same monitor and channel is still on its way, so a
  // receiver hears "down" before "up" even when "down" needs retries.
  const due = await db
    .selectFrom("alerts as a")
    .select("a.id")
    .where("a.status", "=", "pending")
    .where("a.next_attempt_at", "<=", now)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("alerts as b")
            .select("b.id")
            .whereRef("b.channel_id", "=", "a.channel_id")
            .whereRef("b.monitor_id", "=", "a.monitor_id")
            .whereRef("b.id", "<", "a.id")
            .where("b.status", "in", ["pending", "sending"]),
        ),
      ),
    )
    .orderBy("a.next_attempt_at")
    .orderBy("a.id")
    .limit(limit)
    .execute();
  const claimed: AlertRow[] = [];
  for (const { id } of due) {
    const row = await db.updateTable("alerts").set({ status: "sending" }).where("id", "=", id).where("status", "=", "pending").returningAll().executeTakeFirst();
    if (row) claimed.push(row);
  }
  return claimed;
}

/** The earliest next_attempt_at among pending rows, to know when to wake next. */
export async function nextDueAt(db: Db): Promise<number | null> {
  const row = await db.selectFrom("alerts").select((eb) => eb.fn.min("next_attempt_at").as("at")).where("status", "=", "pending").executeTakeFirst();
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

export interface AttemptRecord {
  at: number;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
}

/** Records an attempt and moves the row on: delivered, failed, or pending again at `retryAt`. */
export async function finishAttempt(db: Db, alertId: number, attempt: AttemptRecord, next: { status: "delivered" | "failed" } | { status: "pending"; retryAt: number }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.insertInto("alert_attempts").values({ alert_id: alertId, at: attempt.at, ok: attempt.ok ? 1 : 0, status_code: attempt.statusCode, error: attempt.error }).execute();
    await trx
      .updateTable("alerts")
      .set((eb) => ({
        status: next.status,
        attempts: eb("attempts", "+", 1),
        last_error: attempt.ok ? null : attempt.error,
        delivered_at: next.status === "delivered" ? attempt.at : null,
        next_attempt_at: next.status === "pending" ? next.retryAt : attempt.at,
      }))
      .where("id", "=", alertId)
      .where("status", "=", "sending")
      .execute();
  });
}

/** Gives up on a row without an attempt (its channel was disabled or deleted meanwhile). */
export async function abandonAlert(db: Db, alertId: number, reason: string): Promise<void> {
  await db.updateTable("alerts").set({ status: "failed", last_error: reason }).where("id", "=", alertId).where("status", "=", "sending").execute();
}

export async function listAttempts(db: Db, alertId: number) {
  return db.selectFrom("alert_attempts").selectAll().where("alert_id", "=", alertId).orderBy("id").execute();
}

export async function alertsForMonitor(db: Db, monitorId: number): Promise<AlertRow[]> {
  return db.selectFrom("alerts").selectAll().where("monitor_id", "=", monitorId).orderBy("id").execute();
}
