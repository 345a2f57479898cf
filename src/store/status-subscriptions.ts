import { sql } from "kysely";
import type { NotedChange } from "../domain/status-mail.ts";
import type { Db } from "./database.ts";
import { claimUpdateMail, owedUpdateMail, type OwedUpdateMail } from "./status-page-updates.ts";

/**
 * Email subscriptions to status pages and the mail they are owed (README "Email subscriptions"):
 * this module owns status_page_subscribers, status_mail_changes and status_mail_queue. What causes
 * mail is written in its own transaction (an incident's note in its state change's, an update's
 * flag with the update); it becomes mail rows in the transaction that claims it, and those are
 * deleted once the SMTP server took them.
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
 * One notice to every confirmed subscriber of the page, when it still offers subscriptions
 * (enabled, public, no access token). `base` is the public address the unsubscribe links start with.
 */
async function queueNotices(db: Db, n: { pageId: number; subject: string; body: string; base: string; now: number }): Promise<number> {
  const text = (v: string) => sql<string>`cast(${v} as text)`;
  const when = sql<number>`cast(${n.now} as bigint)`;
  const select = db
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
    ])
    .where("p.id", "=", n.pageId);
  const r = await db.insertInto("status_mail_queue").columns(["subscriber_id", "subject", "body", "link", "kind", "next_attempt_at", "created_at"]).expression(select).executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0);
}

/**
 * Notes an incident opening (`down`) or resolving on the monitor for every page that shows it,
 * offers subscriptions and has a confirmed subscriber; queueChangeMail mails a page's notes
 * together. Only inserts: a state change never waits on the rows a mail pass holds.
 */
export async function noteMonitorChange(db: Db, c: { monitorId: number; down: boolean; at: number }): Promise<void> {
  const pages = db
    .selectFrom("status_pages as p")
    .where("p.id", "in", (eb) => eb.selectFrom("status_page_monitors").select("status_page_id").where("monitor_id", "=", c.monitorId))
    .where("p.is_enabled", "=", 1)
    .where("p.is_public", "=", 1)
    .where("p.is_token_protected", "=", 0)
    .where((eb) => eb.exists(eb.selectFrom("status_page_subscribers as s").select("s.id").whereRef("s.status_page_id", "=", "p.id").where("s.confirmed_at", "is not", null)))
    .select([
      "p.id as status_page_id",
      sql<number>`cast(${c.monitorId} as bigint)`.as("monitor_id"),
      sql<number>`cast(${c.at} as bigint)`.as("at"),
      sql<number>`cast(${c.down ? 1 : 0} as smallint)`.as("is_down"),
    ]);
  await db.insertInto("status_mail_changes").columns(["status_page_id", "monitor_id", "at", "is_down"]).expression(pages).execute();
}

/**
 * Pages whose oldest note is at `dueBy` or earlier get one notice per confirmed subscriber, worded
 * by `words` from all of the page's notes. Each page's notes are claimed by deleting them in the
 * transaction that queues the mail, so a note is mailed once whatever restarts, and a second pass
 * (or instance) finds nothing left to claim.
 */
export async function queueChangeMail(db: Db, o: { dueBy: number; now: number; base: string; words: (changes: NotedChange[]) => { subject: string; body: string } }): Promise<number> {
  const due = await db
    .selectFrom("status_mail_changes")
    .select("status_page_id")
    .groupBy("status_page_id")
    .having((eb) => eb(eb.fn.min("at"), "<=", o.dueBy))
    .execute();
  let queued = 0;
  for (const row of due) {
    const pageId = Number(row.status_page_id);
    queued += await db.transaction().execute(async (trx) => {
      const claimed = await trx.deleteFrom("status_mail_changes").where("status_page_id", "=", pageId).returning(["id", "monitor_id", "at", "is_down"]).execute();
      if (claimed.length === 0) return 0;
      const ids = [...new Set(claimed.map((c) => Number(c.monitor_id)))];
      const names = new Map((await trx.selectFrom("monitors").select(["id", "name"]).where("id", "in", ids).execute()).map((m) => [Number(m.id), m.name]));
      const changes = claimed
        .sort((a, b) => Number(a.id) - Number(b.id))
        .map((c) => ({ monitorId: Number(c.monitor_id), name: names.get(Number(c.monitor_id)) ?? `Monitor ${c.monitor_id}`, at: Number(c.at), isDown: Number(c.is_down) === 1 }));
      return queueNotices(trx, { pageId, ...o.words(changes), base: o.base, now: o.now });
    });
  }
  return queued;
}

/**
 * Updates owed a mail and published by `now` get one notice per confirmed subscriber of their page,
 * worded by `words` (`previous`: the status the last mail of it said, null for its first). Each is
 * claimed in the transaction that queues its mail; an incident whose status went back to what its
 * last mail said is claimed without one.
 */
export async function queueUpdateMail(db: Db, o: { now: number; base: string; limit: number; words: (u: OwedUpdateMail, previous: string | null) => { subject: string; body: string } }): Promise<number> {
  let queued = 0;
  for (const u of await owedUpdateMail(db, o.now, o.limit)) {
    queued += await db.transaction().execute(async (trx) => {
      if (!(await claimUpdateMail(trx, u))) return 0;
      if (u.mailed_status !== null && u.status === u.mailed_status) return 0;
      return queueNotices(trx, { pageId: u.status_page_id, ...o.words(u, u.mailed_status), base: o.base, now: o.now });
    });
  }
  return queued;
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
