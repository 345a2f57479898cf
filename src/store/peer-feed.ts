import type { Db } from "./database.ts";
import type { MonitorRow } from "./tables.ts";

/** Leader side of the peer feed: the current rows of the monitors a probe asked about (missing = deleted). */
export async function findMonitorRows(db: Db, ids: readonly number[]): Promise<MonitorRow[]> {
  if (ids.length === 0) return [];
  const out: MonitorRow[] = [];
  // in chunks, so a long change list never exceeds the database's bound-parameter limit
  for (let i = 0; i < ids.length; i += 500) {
    out.push(...(await db.selectFrom("monitors").selectAll().where("id", "in", ids.slice(i, i + 500)).execute()));
  }
  return out;
}

/** Every monitor of these accounts: re-sent to probes when an account's rules change. */
export async function monitorsOfAccounts(db: Db, accountIds: readonly number[]): Promise<{ id: number; account_id: number }[]> {
  if (accountIds.length === 0) return [];
  return db.selectFrom("monitors").select(["id", "account_id"]).where("account_id", "in", [...accountIds]).execute();
}

export type MonitorOwner = Pick<MonitorRow, "id" | "account_id" | "created_at">;

/** Leader side of result ingest: who owns each monitor a batch names, and since when it exists (missing = deleted). */
export async function findMonitorOwners(db: Db, ids: readonly number[]): Promise<MonitorOwner[]> {
  const out: MonitorOwner[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    out.push(...(await db.selectFrom("monitors").select(["id", "account_id", "created_at"]).where("id", "in", ids.slice(i, i + 500)).execute()));
  }
  return out;
}

export type MonitorCadence = Pick<MonitorRow, "account_id" | "interval_sec" | "regions">;

/** Account, interval and regions of every monitor a probe may run (active, not heartbeat): what a peer's quota is sized from. */
export async function listPeerMonitorCadences(db: Db): Promise<MonitorCadence[]> {
  return db.selectFrom("monitors").select(["account_id", "interval_sec", "regions"]).where("is_paused", "=", 0).where("monitor_type", "!=", "heartbeat").execute();
}
