import type { Db } from "./database.ts";

/**
 * Where a monitor's open incident escalates (README "Dependencies, reminders and escalation"): the
 * one writer of monitor_escalation_channels. Links go with the monitor or the channel.
 */

/** Replaces a monitor's escalation channels. */
export async function setEscalationChannels(db: Db, monitorId: number, channelIds: readonly number[]): Promise<void> {
  await db.deleteFrom("monitor_escalation_channels").where("monitor_id", "=", monitorId).execute();
  if (channelIds.length) await db.insertInto("monitor_escalation_channels").values(channelIds.map((channel_id) => ({ monitor_id: monitorId, channel_id }))).execute();
}

/** Each monitor's escalation channel ids, ascending. */
export async function escalationChannelIdsByMonitor(db: Db, monitorIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(monitorIds.map((id) => [id, []]));
  if (monitorIds.length === 0) return out;
  const rows = await db.selectFrom("monitor_escalation_channels").select(["monitor_id", "channel_id"]).where("monitor_id", "in", monitorIds).orderBy("channel_id").execute();
  for (const r of rows) out.get(r.monitor_id)?.push(r.channel_id);
  return out;
}

/** The escalation channels an alert goes to: enabled, and the monitor's account's own. */
export async function enabledEscalationChannelIds(db: Db, accountId: number, monitorId: number): Promise<number[]> {
  const rows = await db
    .selectFrom("monitor_escalation_channels as e")
    .innerJoin("notification_channels as c", "c.id", "e.channel_id")
    .select("c.id")
    .where("e.monitor_id", "=", monitorId)
    .where("c.account_id", "=", accountId)
    .where("c.is_enabled", "=", 1)
    .orderBy("c.id")
    .execute();
  return rows.map((r) => r.id);
}
