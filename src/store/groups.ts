import type { Db } from "./database.ts";
import { externalIdIs } from "./external-ids.ts";
import { engineOf } from "./engine-of.ts";
import type { PageWindow } from "../domain/page-window.ts";
import { inCodePointOrder } from "./text-match.ts";
import type { MonitorGroupRow } from "./tables.ts";

/**
 * Groups of monitors (README "Groups, tags and status page updates"). Every function is scoped to an
 * account. Listed by sort_order, then name, then id: the order the dashboard and status pages show.
 */
export interface GroupColumns {
  name?: string;
  description?: string | null;
  sort_order?: number;
  external_id?: string | null;
}

/** Thrown when a monitor write names a group that is gone (deleted since the write was validated). */
export class GroupMissing extends Error {
  constructor(readonly groupId: number) {
    super(`group ${groupId} does not exist`);
  }
}

/**
 * Inside a monitor write's transaction: the group it names exists, and stays until the write
 * commits (PostgreSQL: a share lock its deletion waits for; SQLite runs one write transaction at a
 * time). So a monitor never ends up in a group deleted meanwhile.
 */
export async function holdGroup(trx: Db, accountId: number, id: number): Promise<void> {
  let q = trx.selectFrom("monitor_groups").select("id").where("id", "=", id).where("account_id", "=", accountId);
  if (engineOf(trx) === "postgres") q = q.forShare();
  if (!(await q.executeTakeFirst())) throw new GroupMissing(id);
}

/** Thrown when the account already has a group of that name (the unique index, e.g. in a race). */
export class GroupNameTaken extends Error {
  constructor() {
    super("group name is taken");
  }
}

// SQLite's message names the columns (monitor_groups.account_id, monitor_groups.name); PostgreSQL's the index.
function nameTaken(err: unknown): GroupNameTaken | null {
  const msg = String((err as Error)?.message ?? err);
  return /unique/i.test(msg) && /monitor_groups/.test(msg) && !/external_id/.test(msg) ? new GroupNameTaken() : null;
}

function ordered(db: Db, accountId: number) {
  return db.selectFrom("monitor_groups").where("account_id", "=", accountId);
}

export async function listGroups(db: Db, accountId: number, page: PageWindow, f: { externalId?: string } = {}): Promise<{ rows: MonitorGroupRow[]; total: number }> {
  let query = ordered(db, accountId);
  if (f.externalId !== undefined) query = query.where(externalIdIs(f.externalId));
  const [{ n }, rows] = await Promise.all([
    query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow(),
    query.selectAll().orderBy("sort_order").orderBy(inCodePointOrder(db, "name")).orderBy("id").limit(page.limit).offset(page.offset).execute(),
  ]);
  return { rows, total: Number(n) };
}

export async function findGroup(db: Db, accountId: number, id: number): Promise<MonitorGroupRow | undefined> {
  return db.selectFrom("monitor_groups").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

/** Whether another group of the account has this name. */
export async function groupNameTaken(db: Db, accountId: number, name: string, exceptId?: number): Promise<boolean> {
  let q = db.selectFrom("monitor_groups").select("id").where("account_id", "=", accountId).where("name", "=", name);
  if (exceptId !== undefined) q = q.where("id", "!=", exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Which of `ids` are groups of this account. */
export async function ownedGroupIds(db: Db, accountId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom("monitor_groups").select("id").where("account_id", "=", accountId).where("id", "in", ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** The account's groups among `ids`, in display order (sort_order, then name, then id). */
export async function groupsAmong(db: Db, accountId: number, ids: number[]): Promise<MonitorGroupRow[]> {
  if (ids.length === 0) return [];
  return ordered(db, accountId).selectAll().where("id", "in", ids).orderBy("sort_order").orderBy(inCodePointOrder(db, "name")).orderBy("id").execute();
}

/** How many monitors each group holds. */
export async function monitorCounts(db: Db, accountId: number, groupIds: number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>(groupIds.map((id) => [id, 0]));
  if (groupIds.length === 0) return out;
  const rows = await db
    .selectFrom("monitors")
    .select(["group_id", (eb) => eb.fn.countAll<number>().as("n")])
    .where("account_id", "=", accountId)
    .where("group_id", "in", groupIds)
    .groupBy("group_id")
    .execute();
  for (const r of rows) if (r.group_id !== null) out.set(r.group_id, Number(r.n));
  return out;
}

export async function insertGroup(db: Db, g: { accountId: number; cols: GroupColumns & { name: string }; now: number }): Promise<MonitorGroupRow> {
  try {
    return await db
      .insertInto("monitor_groups")
      .values({ ...g.cols, account_id: g.accountId, created_at: g.now, updated_at: g.now })
      .returningAll()
      .executeTakeFirstOrThrow();
  } catch (err) {
    throw nameTaken(err) ?? err;
  }
}

export async function updateGroup(db: Db, u: { accountId: number; id: number; cols: GroupColumns; now: number }): Promise<MonitorGroupRow | undefined> {
  try {
    return await db
      .updateTable("monitor_groups")
      .set({ ...u.cols, updated_at: u.now })
      .where("id", "=", u.id)
      .where("account_id", "=", u.accountId)
      .returningAll()
      .executeTakeFirst();
  } catch (err) {
    throw nameTaken(err) ?? err;
  }
}

/**
 * Deletes a group; its monitors become ungrouped in the same transaction (their updated_at moves, as
 * for any change of an attribute). The group row goes first: on PostgreSQL that waits for monitor
 * writes holding it (holdGroup), so the monitors read next include theirs. Returns how many
 * monitors were ungrouped, or null when there was no such group.
 */
export async function deleteGroup(db: Db, accountId: number, id: number, now: number): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    const r = await trx.deleteFrom("monitor_groups").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
    if (Number(r.numDeletedRows) === 0) return null;
    const moved = await trx.updateTable("monitors").set({ group_id: null, updated_at: now }).where("account_id", "=", accountId).where("group_id", "=", id).executeTakeFirst();
    return Number(moved.numUpdatedRows);
  });
}
