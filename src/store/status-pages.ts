import { sql } from "kysely";
import { externalIdIs } from "./external-ids.ts";
import type { Db } from "./database.ts";
import { containsText, likePrefix } from "./text-match.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { StatusPageRow, StatusPagesTable } from "./tables.ts";

/** Status page repository; reads and writes are scoped to an account except the instance-wide uniqueness probes. */
export async function listStatusPages(db: Db, accountId: number, f: { q?: string; externalId?: string }, page: PageWindow): Promise<{ rows: StatusPageRow[]; total: number }> {
  let query = db.selectFrom("status_pages").where("account_id", "=", accountId);
  if (f.externalId !== undefined) query = query.where(externalIdIs(f.externalId));
  if (f.q?.includes("\0")) return { rows: [], total: 0 }; // no stored text holds one (docs/api-rules.md "Text")
  if (f.q) query = query.where(containsText(db, sql.ref("name"), f.q));
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy("id", "asc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}

export async function findStatusPage(db: Db, accountId: number, id: number): Promise<StatusPageRow | undefined> {
  return db.selectFrom("status_pages").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

/**
 * Whether another page (of any account: slugs and verified domains are instance-wide) uses this
 * value. A custom domain is taken once another page verified it; asking for one is not taking it.
 */
export async function statusPageValueTaken(db: Db, column: "slug" | "verified_domain", value: string, exceptId?: number): Promise<boolean> {
  let q = db.selectFrom("status_pages").select("id").where(column, "=", value);
  if (exceptId !== undefined) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Slugs equal to `base` or starting with `base-`, for picking the next free suffix. */
export async function slugsLike(db: Db, base: string): Promise<Set<string>> {
  const prefix = base.slice(0, 50); // suffixes may shorten the base, so match on a shorter prefix
  const rows = await db.selectFrom("status_pages").select("slug").where("slug", "like", sql<string>`${likePrefix(prefix)} escape '\\'`).execute();
  return new Set(rows.map((r) => r.slug));
}

export async function ownedMonitorIds(db: Db, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom("monitors").select("id").where("account_id", "=", accountId).where("id", "in", ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** Monitor ids of each page, in display order. */
export async function monitorIdsByPage(db: Db, pageIds: number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(pageIds.map((id) => [id, []]));
  if (pageIds.length === 0) return out;
  const rows = await db.selectFrom("status_page_monitors").select(["status_page_id", "monitor_id"]).where("status_page_id", "in", pageIds).orderBy("status_page_id").orderBy("position").execute();
  for (const r of rows) out.get(r.status_page_id)?.push(r.monitor_id);
  return out;
}

async function setPageMonitors(db: Db, pageId: number, monitorIds: number[]): Promise<void> {
  await db.deleteFrom("status_page_monitors").where("status_page_id", "=", pageId).execute();
  if (monitorIds.length) await db.insertInto("status_page_monitors").values(monitorIds.map((monitor_id, position) => ({ status_page_id: pageId, monitor_id, position }))).execute();
}

export type StatusPageColumns = Partial<Omit<StatusPagesTable, "id" | "account_id" | "created_at" | "updated_at" | "external_id"> & { external_id: string | null }>;

/** Thrown when a UNIQUE column (slug, verified_domain: the API's custom_domain) collides at write time, e.g. in a race. */
export class UniqueValueTaken extends Error {
  constructor(readonly column: "slug" | "custom_domain") {
    super(`${column} is taken`);
  }
}

// SQLite's message names "table.column"; PostgreSQL's names the constraint (status_pages_slug_key).
function uniqueViolation(err: unknown): UniqueValueTaken | null {
  const msg = String((err as Error)?.message ?? err);
  if (!/unique/i.test(msg)) return null;
  if (/slug/.test(msg)) return new UniqueValueTaken("slug");
  if (/verified_domain/.test(msg)) return new UniqueValueTaken("custom_domain");
  return null;
}

export async function insertStatusPage(db: Db, p: { accountId: number; cols: StatusPageColumns & { name: string; slug: string }; monitorIds: number[]; now: number }): Promise<StatusPageRow> {
  try {
    return await db.transaction().execute(async (trx) => {
      const row = await trx
        .insertInto("status_pages")
        .values({
          is_public: 1,
          is_enabled: 1,
          is_token_protected: 0,
          public_theme: "light",
          ...p.cols,
          account_id: p.accountId,
          created_at: p.now,
          updated_at: p.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await setPageMonitors(trx, row.id, p.monitorIds);
      return row;
    });
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}

export async function updateStatusPage(db: Db, u: { accountId: number; id: number; cols: StatusPageColumns; monitorIds?: number[]; now: number }): Promise<StatusPageRow | undefined> {
  try {
    return await db.transaction().execute(async (trx) => {
      const row = await trx
        .updateTable("status_pages")
        .set({ ...u.cols, updated_at: u.now })
        .where("id", "=", u.id)
        .where("account_id", "=", u.accountId)
        .returningAll()
        .executeTakeFirst();
      if (row && u.monitorIds) await setPageMonitors(trx, u.id, u.monitorIds);
      return row;
    });
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}

/**
 * Marks the page's custom domain verified, so it serves there (README "Custom domains"), unless the
 * page asks for another name by now; UniqueValueTaken when another page verified it first.
 */
export async function markDomainVerified(db: Db, v: { accountId: number; id: number; domain: string; now: number }): Promise<StatusPageRow | undefined> {
  try {
    return await db
      .updateTable("status_pages")
      .set({ verified_domain: v.domain, custom_domain_verified_at: v.now })
      .where("id", "=", v.id)
      .where("account_id", "=", v.accountId)
      .where("custom_domain", "=", v.domain)
      .returningAll()
      .executeTakeFirst();
  } catch (err) {
    throw uniqueViolation(err) ?? err;
  }
}

/** Whether a page serves at this host name (its verified custom domain). */
export async function isVerifiedDomain(db: Db, host: string): Promise<boolean> {
  return (await db.selectFrom("status_pages").select("id").where("verified_domain", "=", host).executeTakeFirst()) !== undefined;
}

export async function deleteStatusPage(db: Db, accountId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom("status_pages").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
