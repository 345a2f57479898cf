import type { Db } from "./database.ts";
import { deleteKv, deleteKvPrefix, getKv, listKv, putKv } from "./kv.ts";

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
  const rows = await listKv(db, DEF_PREFIX);
  return {
    cursor: await getKv(db, CURSOR_KEY),
    definitions: rows.map((r) => ({ id: Number(r.key.slice(DEF_PREFIX.length)), sealed: r.value })).filter((d) => Number.isInteger(d.id)),
  };
}

/** Applies one feed answer to the cache in one transaction: `replaceAll` drops everything first. */
export async function saveFeedChanges(db: Db, c: { replaceAll: boolean; put: CachedDefinition[]; remove: number[]; cursor: string }): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (c.replaceAll) await deleteKvPrefix(trx, DEF_PREFIX);
    await deleteKv(trx, c.remove.map((id) => DEF_PREFIX + id));
    for (const d of [...c.put.map((p) => ({ key: DEF_PREFIX + p.id, value: p.sealed })), { key: CURSOR_KEY, value: c.cursor }]) await putKv(trx, d.key, d.value);
  });
}
