import type { Db } from "./database.ts";

/**
 * What an account already has, by name, for `vigil import` (README "Coming from Uptime Kuma",
 * "Running an import twice"): an item whose name is taken is left as it is, and references to it
 * lead to the existing one. Names compare without regard to case; the first (lowest id) wins.
 */
export interface Existing {
  id: number;
  /** a heartbeat monitor's, so a second run can print its ping URL again */
  heartbeatToken?: string | null;
}
export type ExistingByName = Record<"group" | "monitor" | "notification_channel" | "maintenance_window" | "status_page", Map<string, Existing>>;

function byName<T extends { name: string }>(rows: T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const r of rows) if (!map.has(r.name.toLowerCase())) map.set(r.name.toLowerCase(), r);
  return map;
}

export async function existingByName(db: Db, accountId: number): Promise<ExistingByName> {
  const [groups, monitors, channels, windows, pages] = await Promise.all([
    db.selectFrom("monitor_groups").select(["id", "name"]).where("account_id", "=", accountId).orderBy("id").execute(),
    db.selectFrom("monitors").select(["id", "name", "heartbeat_token"]).where("account_id", "=", accountId).orderBy("id").execute(),
    db.selectFrom("notification_channels").select(["id", "name"]).where("account_id", "=", accountId).orderBy("id").execute(),
    db.selectFrom("maintenance_windows").select(["id", "name"]).where("account_id", "=", accountId).orderBy("id").execute(),
    db.selectFrom("status_pages").select(["id", "name"]).where("account_id", "=", accountId).orderBy("id").execute(),
  ]);
  return {
    group: byName(groups),
    monitor: new Map([...byName(monitors)].map(([k, r]) => [k, { id: r.id, heartbeatToken: r.heartbeat_token }])),
    notification_channel: byName(channels),
    maintenance_window: byName(windows),
    status_page: byName(pages),
  };
}
