import { openStore, type Store } from "./database.ts";
import { openPostgresStore } from "./postgres.ts";

/** The store a configuration names: PostgreSQL when it has a database URL, else SQLite under the data directory. */
export async function openStoreAt(where: { dataDir: string; databaseUrl: string | null }): Promise<Store> {
  return where.databaseUrl ? openPostgresStore(where.databaseUrl) : openStore(where.dataDir);
}
