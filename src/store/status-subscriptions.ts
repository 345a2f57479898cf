import { sql } from "kysely";
import type { Db } from "./database.ts";

/**
 * Email subscriptions to status pages and the mail they are owed (README "Status pages"): this
 * module owns status_page_subscribers and status_mail_queue. Mail rows are written with what caused
 * them (an incident's in its state change's transaction) and deleted once the SMTP server took them.
 */

export interface ConfirmMail {
  subject: string;
  body: string;
  /** the confirmation link for a token */
  link: (token: string) => string;
}

/**
 * A new address becomes a pending subscriber with a confirmation mail; a pending one gets a new
 * token, a new deadline and the mail again; a confirmed one is left alone. Says which, for the log
 * only: the visitor is told the same in each case.
 */
export async function subscribe(db: Db, s: { pageId: number; email: string; token: string; now: number; expiresAt: number; mail: ConfirmMail }): Promise<"new" | "pending" | "confirmed"> {
  return db.transaction().execute(async (trx) => {
    const known = await trx.selectFrom("status_page_subscribers").select(["id", "confirmed_at"]).where("status_page_id", "=", s.pageId).where("email", "=", s.email).executeTakeFirst();
    if (known && known.confirmed_at !== null) return "confirmed";
    let id: number;
    if (known) {
      await trx.updateTable("status_page_subscribers").set({ token: s.token, confirm_expires_at: s.expiresAt }).where("id", "=", known.id).execute();
      // one confirmation mail waiting at a time: an older one's link no longer works
      await trx.deleteFrom("status_mail_queue").where("subscriber_id", "=", known.id).where("kind", "=", "confirm").execute();
      id = known.id;
    } else {
      const row = await trx
        .insertInto("status_page_subscribers")
        .values({ status_page_id: s.pageId, email: s.email, token: s.token, confirmed_at: null, confirm_expires_at: s.expiresAt, created_at: s.now })
        .returning("id")
        .executeTakeFirstOrThrow();
      id = Number(row.id);
    }
    await trx.insertInto("status_mail_queue").values({ subscriber_id: id, subject: s.mail.subject, body: s.mail.body, link: s.mail.link(s.token), kind: "confirm", next_attempt_at: s.now, created_at: s.now }).execute();
    return known ? "pending" : "new";
  });
}

/** Confirms the pending subscriber of `token` before its deadline; true when it is (or already was) confirmed. */
export async function confirmSubscriber(db: Db, pageId: number, token: string, now: number): Promise<boolean> {
  await db.updateTable("status_page_subscribers").set({ confirmed_at: now }).where("status_page_id", "=", pageId).where("token", "=", token).where("confirmed_at", "is", null).where("confirm_expires_at", ">", now).execute();
  const row = await db.selectFrom("status_page_subscribers").select("confirmed_at").where("status_page_id", "=", pageId).where("token", "=", token).executeTakeFirst();
  return row !== undefined && row.confirmed_at !== null;
}

/** Ends the subscription of `token` (its waiting mail with it); false when there is none. */
export async function unsubscribe(db: Db, pageId: number, token: string): Promise<boolean> {
  const r = await db.deleteFrom("status_page_subscribers").where("status_page_id", "=", pageId).where("token", "=", token).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/**
 * One notice to every confirmed subscriber of the pages given (by id, or those showing a monitor),
 * when the page still offers subscriptions (enabled, public, no access token). `base` is the public
 * address the unsubscribe links start with.
 */
export async function queueNotices(db: Db, n: { pageId?: number; monitorId?: number; subject: string; body: string; base: string; now: number }): Promise<number> {
  const text = (v: string) => sql<string>`cast(${v} as text)`;
  const when = sql<number>`cast(${n.now} as bigint)`;
  let select = db
    .selectFrom("status_page_subscribers as s")
    .innerJoin("status_pages as p", "p.id", "s.status_page_id")
    .where("s.confirmed_at", "is not", null)
    .where("p.is_enabled", "=", 1)
    .where("p.is_public", "=", 1)
    .where("p.is_token_protected", "=", 0)
    .select([
      "s.id",
      // "{page}" in the words stands for each page's name
      sql<string>`replace(${text(n.subject)}, '{page}', p.name)`.as("subject"),
      sql<string>`replace(${text(n.body)}, '{page}', p.name)`.as("body"),
      sql<string>`${text(n.base)} || '/s/' || p.slug || '/unsubscribe?token=' || s.token`.as("link"),
      text("notice").as("kind"),
      when.as("next_attempt_at"),
      when.as("created_at"),
    ]);
  if (n.pageId !== undefined) select = select.where("p.id", "=", n.pageId);
  if (n.monitorId !== undefined) select = select.where("p.id", "in", (eb) => eb.selectFrom("status_page_monitors").select("status_page_id").where("monitor_id", "=", n.monitorId!));
  const r = await db.insertInto("status_mail_queue").columns(["subscriber_id", "subject", "body", "link", "kind", "next_attempt_at", "created_at"]).expression(select).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0);
}

export interface DueMail {
  id: number;
  email: string;
  subject: string;
  body: string;
  link: string;
  kind: string;
  attempts: number;
  page_slug: string;
  page_name: string;
}

/** Mail whose time has come, oldest first. */
export async function dueMail(db: Db, now: number, limit: number): Promise<DueMail[]> {
  const rows = await db
    .selectFrom("status_mail_queue as q")
    .innerJoin("status_page_subscribers as s", "s.id", "q.subscriber_id")
    .innerJoin("status_pages as p", "p.id", "s.status_page_id")
    .select(["q.id", "s.email", "q.subject", "q.body", "q.link", "q.kind", "q.attempts", "p.slug as page_slug", "p.name as page_name"])
    .where("q.next_attempt_at", "<=", now)
    .orderBy("q.id")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ ...r, id: Number(r.id), attempts: Number(r.attempts) }));
}

export async function mailSent(db: Db, id: number): Promise<void> {
  await db.deleteFrom("status_mail_queue").where("id", "=", id).execute();
}

/** Tried again at `next`, or given up (deleted) when `next` is null. */
export async function mailFailed(db: Db, id: number, next: number | null): Promise<void> {
  if (next === null) await db.deleteFrom("status_mail_queue").where("id", "=", id).execute();
  else await db.updateTable("status_mail_queue").set((eb) => ({ attempts: eb("attempts", "+", 1), next_attempt_at: next })).where("id", "=", id).execute();
}
