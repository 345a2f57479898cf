import type { Db } from "./database.ts";

/**
 * Probe side: results waiting for the leader. A row is written (group-committed) before a result
 * counts as taken, and deleted only once the leader acknowledged it, so results survive a leader
 * outage and a restart of the probe; the leader ignores a repeat of a result_uid.
 */
export interface SpooledResult {
  id: number;
  result_uid: string;
  payload_json: string;
}

export async function spoolResult(db: Db, r: { resultUid: string; payloadJson: string; now: number }): Promise<void> {
  await db.insertInto("spool").values({ result_uid: r.resultUid, payload_json: r.payloadJson, created_at: r.now }).execute();
}

/** The oldest results, at most `maxRows` and about `maxBytes` of payload (always at least one). */
export async function readSpoolBatch(db: Db, maxRows: number, maxBytes: number): Promise<SpooledResult[]> {
  const rows = await db.selectFrom("spool").select(["id", "result_uid", "payload_json"]).orderBy("id").limit(maxRows).execute();
  let bytes = 0;
  const out: SpooledResult[] = [];
  for (const r of rows) {
    bytes += r.payload_json.length;
    if (out.length > 0 && bytes > maxBytes) break;
    out.push(r);
  }
  return out;
}

export async function deleteSpooled(db: Db, resultUids: readonly string[]): Promise<void> {
  for (let i = 0; i < resultUids.length; i += 500) {
    await db.deleteFrom("spool").where("result_uid", "in", resultUids.slice(i, i + 500)).execute();
  }
}

export async function spoolLength(db: Db): Promise<number> {
  const { n } = await db.selectFrom("spool").select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(n);
}
