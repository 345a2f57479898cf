import { sql, type RawBuilder } from "kysely";
import type { Db } from "./database.ts";

/**
 * Lookups by external_id (README "Configuration as code"). The tables' writers own the column; this
 * reads it, for the services' "has already been taken" check and the lists' ?external_id= filter.
 */
export type ExternalIdTable = "monitors" | "monitor_groups" | "notification_channels" | "maintenance_windows" | "status_pages";

/** Whether another row of `table` in the account (not `exceptId`) has this external_id. */
export async function externalIdTaken(db: Db, table: ExternalIdTable, accountId: number, externalId: string, exceptId?: number): Promise<boolean> {
  if (externalId.includes("\0")) return false;
  let q = db.selectFrom(table).select("id").where("account_id", "=", accountId).where("external_id", "=", externalId);
  if (exceptId !== undefined) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/**
 * Whether a write failed on a *_account_external_id index: two writes of one external_id that both
 * passed the service's check (SQLite names "table.external_id", PostgreSQL the index).
 */
export function isExternalIdConflict(err: unknown): boolean {
  const msg = String((err as Error)?.message ?? err);
  return /unique|duplicate key/i.test(msg) && /external_id/.test(msg);
}

/**
 * The lists' ?external_id= condition. No stored text holds a NUL (docs/api-rules.md "Text"), so a
 * value with one names nothing, and is never sent to PostgreSQL, whose text refuses it.
 */
export function externalIdIs(value: string): RawBuilder<boolean> {
  return value.includes("\0") ? sql<boolean>`1 = 0` : sql<boolean>`${sql.ref("external_id")} = ${value}`;
}
