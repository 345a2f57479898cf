/**
 * Queries of the heartbeat service outside the ping path: the token cache and the deadline timers
 * are built from these. The ping path's own statements are in ping-statements.ts.
 */
import type { Db } from "./database.ts";

const HEARTBEAT = "heartbeat";

/** token → monitor id of every heartbeat monitor, to warm the intake's cache at start-up. */
export async function listHeartbeatTokens(db: Db): Promise<{ id: number; heartbeat_token: string }[]> {
  const rows = await db
    .selectFrom("monitors")
    .select(["id", "heartbeat_token"])
    .where("monitor_type", "=", HEARTBEAT)
    .where("heartbeat_token", "is not", null)
    .execute();
  return rows as { id: number; heartbeat_token: string }[];
}

export async function findHeartbeatIdByToken(db: Db, token: string): Promise<number | null> {
  const row = await db.selectFrom("monitors").select("id").where("heartbeat_token", "=", token).where("monitor_type", "=", HEARTBEAT).executeTakeFirst();
  return row?.id ?? null;
}

export async function findHeartbeatToken(db: Db, monitorId: number): Promise<string | null> {
  const row = await db.selectFrom("monitors").select("heartbeat_token").where("id", "=", monitorId).where("monitor_type", "=", HEARTBEAT).executeTakeFirst();
  return row?.heartbeat_token ?? null;
}

/**
 * What the deadline timers are rebuilt from at start-up: every active heartbeat monitor with a
 * persisted deadline, plus those that are up or degraded without one (so a row written by an older
 * build, or by hand, still gets a timer).
 */
export async function listHeartbeatDeadlines(db: Db): Promise<{ id: number; heartbeat_deadline_at: number | null }[]> {
  return db
    .selectFrom("monitors")
    .select(["id", "heartbeat_deadline_at"])
    .where("monitor_type", "=", HEARTBEAT)
    .where("is_paused", "=", 0)
    .where((eb) => eb.or([eb("heartbeat_deadline_at", "is not", null), eb("last_status", "in", ["up", "degraded"])]))
    .execute();
}

/**
 * Active heartbeat monitors whose deadline falls at or before `until`: how the leader learns of
 * deadlines that pings taken by other instances set (README "Several instances").
 */
export async function listHeartbeatDeadlinesBefore(db: Db, until: number): Promise<{ id: number; heartbeat_deadline_at: number }[]> {
  const rows = await db
    .selectFrom("monitors")
    .select(["id", "heartbeat_deadline_at"])
    .where("monitor_type", "=", HEARTBEAT)
    .where("is_paused", "=", 0)
    .where("heartbeat_deadline_at", "<=", until)
    .execute();
  return rows as { id: number; heartbeat_deadline_at: number }[];
}
