import type { Db } from "./database.ts";

/**
 * The kv table: small named values a module keeps beside its tables (rollup watermarks, the
 * delivery salt, a probe's cached definitions, the readiness probe's write). The one writer of kv;
 * each caller owns its own keys.
 */
export async function getKv(db: Db, key: string): Promise<string | null> {
  return (await db.selectFrom("kv").select("value").where("key", "=", key).executeTakeFirst())?.value ?? null;
}

export async function putKv(db: Db, key: string, value: string): Promise<void> {
  await db.insertInto("kv").values({ key, value }).onConflict((oc) => oc.column("key").doUpdateSet({ value })).execute();
}

/** Writes `value` unless the key exists; returns the value stored either way. */
export async function putKvOnce(db: Db, key: string, value: string): Promise<string> {
  await db.insertInto("kv").values({ key, value }).onConflict((oc) => oc.column("key").doNothing()).execute();
  return (await getKv(db, key))!;
}

/** Every entry whose key starts with `prefix` (a constant of ours: no `%` or `_` in it). */
export async function listKv(db: Db, prefix: string): Promise<{ key: string; value: string }[]> {
  return db.selectFrom("kv").select(["key", "value"]).where("key", "like", `${prefix}%`).execute();
}

export async function deleteKv(db: Db, keys: readonly string[]): Promise<void> {
  // in chunks, so a long list never exceeds the database's bound-parameter limit
  for (let i = 0; i < keys.length; i += 500) await db.deleteFrom("kv").where("key", "in", keys.slice(i, i + 500)).execute();
}

export async function deleteKvPrefix(db: Db, prefix: string): Promise<void> {
  await db.deleteFrom("kv").where("key", "like", `${prefix}%`).execute();
}

/** Deletes the entry and returns its value (null: there was none); two takers never both get it. */
export async function takeKv(db: Db, key: string): Promise<string | null> {
  return (await db.deleteFrom("kv").where("key", "=", key).returning("value").executeTakeFirst())?.value ?? null;
}
