import type { Expression, ExpressionBuilder, SqlBool } from "kysely";
import type { Db } from "./database.ts";
import type { DB } from "./tables.ts";

/**
 * Ids of the monitors meeting `cond` (an EXISTS on their data, as maintenance asks), in id order:
 * one statement with an index probe per monitor inside SQLite, instead of a query per monitor.
 */
export async function monitorIdsWhere(db: Db, cond: (eb: ExpressionBuilder<DB, "monitors">) => Expression<SqlBool>): Promise<number[]> {
  const rows = await db.selectFrom("monitors").select("id").where(cond).orderBy("id").execute();
  return rows.map((r) => r.id);
}
