import { PostgresAdapter } from "kysely";
import type { Db } from "./database.ts";

/**
 * Which engine a query builder (or a transaction of it) runs on, for the few statements that must
 * be written differently on each; everything else is the same Kysely query on both.
 */
export function engineOf(db: Db): "sqlite" | "postgres" {
  return db.getExecutor().adapter instanceof PostgresAdapter ? "postgres" : "sqlite";
}
