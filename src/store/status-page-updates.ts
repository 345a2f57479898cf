import type { UpdateChanges } from "../domain/status-page-update-schema.ts";
import type { Db } from "./database.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { StatusPageUpdateRow } from "./tables.ts";

/**
 * Status page updates written by people, with the monitors each is about. Every function is scoped
 * to one status page; the service has checked the page belongs to the caller's account. Newest
 * first: by published_at, then id.
 */
export async function listUpdates(db: Db, pageId: number, page: PageWindow): Promise<{ rows: StatusPageUpdateRow[]; total: number }> {
  const query = db.selectFrom("status_page_updates").where("status_page_id", "=", pageId);
  const [{ n }, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    query.selectAll().orderBy("published_at", "desc").orderBy("id", "desc").limit(page.limit).offset(page.offset).execute(),
  ]);
  return { rows, total: Number(n) };
}

export async function findUpdate(db: Db, pageId: number, id: number): Promise<StatusPageUpdateRow | undefined> {
  return db.selectFrom("status_page_updates").selectAll().where("id", "=", id).where("status_page_id", "=", pageId).executeTakeFirst();
}

/** Affected monitor ids of each update, ascending. */
export async function monitorIdsByUpdate(db: Db, updateIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(updateIds.map((id) => [id, []]));
  if (updateIds.length === 0) return out;
  const rows = await db.selectFrom("status_page_update_monitors").select(["update_id", "monitor_id"]).where("update_id", "in", updateIds).orderBy("monitor_id").execute();
  for (const r of rows) out.get(r.update_id)?.push(r.monitor_id);
  return out;
}

async function setMonitors(db: Db, updateId: number, monitorIds: number[]): Promise<void> {
  await db.deleteFrom("status_page_update_monitors").where("update_id", "=", updateId).execute();
  if (monitorIds.length) await db.insertInto("status_page_update_monitors").values(monitorIds.map((monitor_id) => ({ update_id: updateId, monitor_id }))).execute();
}

function columns(c: UpdateChanges) {
  const { affected_monitor_ids: _, ...cols } = c;
  return cols;
}

/** `mail`: the page's subscribers are owed a mail of it, sent once it is published (README "Email subscriptions"). */
export async function insertUpdate(db: Db, u: { pageId: number; changes: UpdateChanges & { title: string; kind: string; published_at: number }; now: number; mail: boolean }): Promise<StatusPageUpdateRow> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto("status_page_updates")
      .values({ ...columns(u.changes), title: u.changes.title, kind: u.changes.kind, published_at: u.changes.published_at, status: u.changes.status ?? null, status_page_id: u.pageId, created_at: u.now, updated_at: u.now, mail_pending: u.mail ? 1 : 0 })
      .returningAll()
      .executeTakeFirstOrThrow();
    await setMonitors(trx, row.id, u.changes.affected_monitor_ids ?? []);
    return row;
  });
}

/** `mail`: a mail of it is owed again (its incident status changed); otherwise whatever was owed stays so. */
export async function updateUpdate(db: Db, u: { pageId: number; id: number; changes: UpdateChanges; now: number; mail: boolean }): Promise<StatusPageUpdateRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable("status_page_updates")
      .set({ ...columns(u.changes), updated_at: u.now, ...(u.mail ? { mail_pending: 1 } : {}) })
      .where("id", "=", u.id)
      .where("status_page_id", "=", u.pageId)
      .returningAll()
      .executeTakeFirst();
    if (row && u.changes.affected_monitor_ids) await setMonitors(trx, u.id, u.changes.affected_monitor_ids);
    return row;
  });
}

/** An update owed a mail, with what the mail needs of its page. */
export interface OwedUpdateMail {
  id: number;
  status_page_id: number;
  title: string;
  body: string;
  kind: string;
  status: string | null;
  mailed_status: string | null;
  updated_at: number;
  page_name: string;
  page_slug: string;
}

/** Updates owed a mail and published by `now`, oldest published first. */
export async function owedUpdateMail(db: Db, now: number, limit: number): Promise<OwedUpdateMail[]> {
  const rows = await db
    .selectFrom("status_page_updates as u")
    .innerJoin("status_pages as p", "p.id", "u.status_page_id")
    .select(["u.id", "u.status_page_id", "u.title", "u.body", "u.kind", "u.status", "u.mailed_status", "u.updated_at", "p.name as page_name", "p.slug as page_slug"])
    .where("u.mail_pending", "=", 1)
    .where("u.published_at", "<=", now)
    .orderBy("u.published_at")
    .orderBy("u.id")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), status_page_id: Number(r.status_page_id), updated_at: Number(r.updated_at) }));
}

/**
 * Takes the mail of `u` as read: true when it was still owed and unchanged since (a write in
 * between leaves it owed, for the next pass to read afresh), and then it is owed no more and
 * mailed_status is the status read.
 */
export async function claimUpdateMail(db: Db, u: OwedUpdateMail): Promise<boolean> {
  const r = await db
    .updateTable("status_page_updates")
    .set({ mail_pending: 0, mailed_status: u.status })
    .where("id", "=", u.id)
    .where("mail_pending", "=", 1)
    .where("updated_at", "=", u.updated_at)
    .where("status", u.status === null ? "is" : "=", u.status)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function deleteUpdate(db: Db, pageId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom("status_page_updates").where("id", "=", id).where("status_page_id", "=", pageId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * What the public page shows (README "Groups, tags and status page updates"): updates published by
 * `now` that are open incidents, or were published since `since`; newest first, at most `limit`.
 */
export async function shownUpdates(db: Db, pageId: number, since: number, now: number, limit: number): Promise<StatusPageUpdateRow[]> {
  return db
    .selectFrom("status_page_updates")
    .selectAll()
    .where("status_page_id", "=", pageId)
    .where("published_at", "<=", now)
    .where((eb) => eb.or([eb("published_at", ">=", since), eb.and([eb("kind", "=", "incident"), eb("status", "!=", "resolved")])]))
    .orderBy("published_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}

/** The newest updates published by `now`, for the page's feed. */
export async function publishedUpdates(db: Db, pageId: number, now: number, limit: number): Promise<StatusPageUpdateRow[]> {
  return db
    .selectFrom("status_page_updates")
    .selectAll()
    .where("status_page_id", "=", pageId)
    .where("published_at", "<=", now)
    .orderBy("published_at", "desc")
    .orderBy("id", "desc")
    .limit(limit)
    .execute();
}
