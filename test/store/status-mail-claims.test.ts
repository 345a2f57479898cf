/**
 * What status page subscribers are owed becomes mail once (README "Email subscriptions"), on the
 * suite's engine: a page's incident notes and an update's flag are claimed in the transaction that
 * queues the mail, so mail passes running at once (two instances, or a pass and a restart's) queue
 * each notice one time, and notes newer than the period wait for the next pass.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { changesNotice, updateNotice } from "../../src/domain/status-mail.ts";
import type { Store } from "../../src/store/database.ts";
import { insertUpdate, updateUpdate } from "../../src/store/status-page-updates.ts";
import { noteMonitorChange, queueChangeMail, queueUpdateMail } from "../../src/store/status-subscriptions.ts";
import { openTestStore } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-status-mail-");
let store: Store;
let pageId = 0;
let monitorId = 0;
const base = "https://status.example.com";

beforeAll(async () => {
  store = await openTestStore(dir);
  const db = store.db;
  const account = Number((await db.insertInto("accounts").values({ name: "a", plan: "pro", created_at: 1 } as never).returning("id").executeTakeFirstOrThrow()).id);
  monitorId = Number((await db.insertInto("monitors").values({ account_id: account, name: "Backups", monitor_type: "http", target: "https://example.com/", interval_sec: 60, timeout_ms: 5000, created_at: 1, updated_at: 1 } as never).returning("id").executeTakeFirstOrThrow()).id);
  pageId = Number((await db.insertInto("status_pages").values({ account_id: account, name: "Acme", slug: "acme", created_at: 1, updated_at: 1 } as never).returning("id").executeTakeFirstOrThrow()).id);
  await db.insertInto("status_page_monitors").values({ status_page_id: pageId, monitor_id: monitorId, position: 0 }).execute();
  for (const [email, confirmed] of [["a@example.com", 1], ["b@example.com", 1], ["pending@example.com", null]] as const) {
    await db.insertInto("status_page_subscribers").values({ status_page_id: pageId, email, token: `t-${email}`, confirmed_at: confirmed, confirm_expires_at: 9e12, created_at: 1 }).execute();
  }
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const queued = async () => (await store.db.selectFrom("status_mail_queue").select(["subject", "body"]).where("kind", "=", "notice").orderBy("id").execute()).map((r) => ({ subject: r.subject, body: r.body }));
const notes = async () => Number((await store.db.selectFrom("status_mail_changes").select((eb) => eb.fn.countAll().as("n")).executeTakeFirstOrThrow()).n);

test("a page's notes wait out the period, then passes racing each other queue one mail per confirmed subscriber", async () => {
  for (let i = 0; i < 5; i++) await noteMonitorChange(store.db, { monitorId, down: i % 2 === 0, at: 60_000 + i * 1000 });
  expect(await notes()).toBe(5);
  const pass = (dueBy: number) => queueChangeMail(store.db, { dueBy, now: 70_000, base, words: changesNotice });
  // the oldest note is at 60 000: a period ending before it mails nothing
  expect(await pass(59_999)).toBe(0);
  expect(await notes()).toBe(5);
  const counts = await Promise.all([pass(60_000), pass(60_000), pass(60_000), pass(60_000)]);
  expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
  expect(await notes()).toBe(0);
  const mail = await queued();
  expect(mail.map((m) => m.subject)).toEqual(["[Acme] Backups is down", "[Acme] Backups is down"]);
  expect(mail[0]!.body).toContain("It went down 3 times since");
});

test("an update is mailed once when published, once per new status, and not when its status went back to what the last mail said", async () => {
  await store.db.deleteFrom("status_mail_queue").execute();
  const row = await insertUpdate(store.db, { pageId, changes: { title: "Slow backups", kind: "incident", status: "investigating", body: "Looking.", published_at: 100_000 }, now: 90_000, mail: true });
  const pass = (now: number) => queueUpdateMail(store.db, { now, base, limit: 20, words: (u, previous) => updateNotice(u.page_name, u, `${base}/s/${u.page_slug}`, previous) });
  expect(await pass(99_999)).toBe(0); // not published yet
  expect((await Promise.all([pass(100_000), pass(100_000), pass(100_000)])).reduce((a, b) => a + b, 0)).toBe(2);
  expect(await pass(100_001)).toBe(0);

  await updateUpdate(store.db, { pageId, id: row.id, changes: { body: "Found it." }, now: 101_000, mail: false });
  expect(await pass(101_001)).toBe(0);
  await updateUpdate(store.db, { pageId, id: row.id, changes: { status: "identified" }, now: 102_000, mail: true });
  expect(await pass(102_001)).toBe(2);
  // identified and back to identified before a pass: the last mail said identified already
  await updateUpdate(store.db, { pageId, id: row.id, changes: { status: "monitoring" }, now: 103_000, mail: true });
  await updateUpdate(store.db, { pageId, id: row.id, changes: { status: "identified" }, now: 103_001, mail: true });
  expect(await pass(104_000)).toBe(0);
  expect(Number((await store.db.selectFrom("status_page_updates").select("mail_pending").where("id", "=", row.id).executeTakeFirstOrThrow()).mail_pending)).toBe(0);

  const mail = await queued();
  expect(mail.map((m) => m.subject)).toEqual(["[Acme] Incident (investigating): Slow backups", "[Acme] Incident (investigating): Slow backups", "[Acme] Incident (identified): Slow backups", "[Acme] Incident (identified): Slow backups"]);
  expect(mail[2]!.body).toStartWith("Status: identified (was investigating)\n\nSlow backups (identified)\n\nFound it.");
});
