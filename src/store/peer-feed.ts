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

/** Ids of every monitor of these accounts: re-sent to probes when an account's rules change. */
export async function monitorIdsOfAccounts(db: Db, accountIds: readonly number[]): Promise<number[]> {
  if (accountIds.length === 0) return [];
  const rows = await db.selectFrom("monitors").select("id").where("account_id", "in", [...accountIds]).execute();
  return rows.map((r) => r.id);
}
