import type { Db } from "./database.ts";

/**
 * Probe side: the monitor definitions last pulled from the leader, kept in the probe's own `kv`
 * table (one row per monitor, value sealed by the caller with the probe's secret key, as they hold
 * plaintext secrets) with the feed cursor, so a restarted probe runs its checks before it reaches
 * the leader again.
 */
const DEF_PREFIX = "peer.def.";
const CURSOR_KEY = "peer.cursor";

export interface CachedDefinition {
  id: number;
  sealed: string;
}

export async function loadCachedDefinitions(db: Db): Promise<{ cursor: string | null; definitions: CachedDefinition[] }> {
  const rows = await db.selectFrom("kv").selectAll().where("key", "like", `${DEF_PREFIX}%`).execute();
  const cursor = await db.selectFrom("kv").select("value").where("key", "=", CURSOR_KEY).executeTakeFirst();
  return {
    cursor: cursor?.value ?? null,
    definitions: rows.map((r) => ({ id: Number(r.key.slice(DEF_PREFIX.length)), sealed: r.value })).filter((d) => Number.isInteger(d.id)),
  };
}

/** Applies one feed answer to the cache in one transaction: `replaceAll` drops everything first. */
export async function saveFeedChanges(db: Db, c: { replaceAll: boolean; put: CachedDefinition[]; remove: number[]; cursor: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (c.replaceAll) await trx.deleteFrom("kv").where("key", "like", `${DEF_PREFIX}%`).execute();
    const removeKeys = c.remove.map((id) => DEF_PREFIX + id);
    for (let i = 0; i < removeKeys.length; i += 500) await trx.deleteFrom("kv").where("key", "in", removeKeys.slice(i, i + 500)).execute();
    for (const d of [...c.put.map((p) => ({ key: DEF_PREFIX + p.id, value: p.sealed })), { key: CURSOR_KEY, value: c.cursor }]) {
      await trx.insertInto("kv").values(d).onConflict((oc) => oc.column("key").doUpdateSet({ value: d.value })).execute();
    }
  });
}
