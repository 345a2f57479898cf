import { sql } from "kysely";
import type { Db } from "./database.ts";
import { engineOf } from "./engine-of.ts";
import type { IncidentRow } from "./tables.ts";

/**
 * Which monitors a monitor depends on (README "Dependencies, reminders and escalation"): the one
 * writer of monitor_dependencies, and the reads the engine, the API and the dashboard make of it.
 * Links go with either monitor (ON DELETE CASCADE).
 */

/** Replaces a monitor's parents. */
export async function setParents(db: Db, monitorId: number, parentIds: readonly number[]): Promise<void> {
  await db.deleteFrom("monitor_dependencies").where("monitor_id", "=", monitorId).execute();
  if (parentIds.length) await db.insertInto("monitor_dependencies").values(parentIds.map((parent_id) => ({ monitor_id: monitorId, parent_id }))).execute();
}

/** Each monitor's parent ids, ascending. */
export async function parentIdsByMonitor(db: Db, monitorIds: readonly number[]): Promise<Map<number, number[]>> {
  const out = new Map<number, number[]>(monitorIds.map((id) => [id, []]));
  if (monitorIds.length === 0) return out;
  const rows = await db.selectFrom("monitor_dependencies").select(["monitor_id", "parent_id"]).where("monitor_id", "in", monitorIds).orderBy("parent_id").execute();
  for (const r of rows) out.get(r.monitor_id)?.push(r.parent_id);
  return out;
}

/** Which of `ids` are monitors of this account. */
export async function ownedMonitorIds(db: Db, accountId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom("monitors").select("id").where("account_id", "=", accountId).where("id", "in", ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** Every dependency among the account's monitors, child → its parents: what a cycle is looked for in. */
export async function accountDependencies(db: Db, accountId: number): Promise<Map<number, number[]>> {
  const rows = await db
    .selectFrom("monitor_dependencies as d")
    .innerJoin("monitors as m", "m.id", "d.monitor_id")
    .select(["d.monitor_id", "d.parent_id"])
    .where("m.account_id", "=", accountId)
    .execute();
  const out = new Map<number, number[]>();
  for (const r of rows) {
    const list = out.get(r.monitor_id);
    if (list) list.push(r.parent_id);
    else out.set(r.monitor_id, [r.parent_id]);
  }
  return out;
}

/**
 * Makes concurrent changes of one account's dependencies take turns until the end of the
 * transaction, so two writes cannot each pass the cycle check and together close a cycle. SQLite
 * has one writer at a time already; PostgreSQL takes a transaction-scoped advisory lock.
 */
export async function lockAccountDependencies(db: Db, accountId: number): Promise<void> {
  if (engineOf(db) === "postgres") await sql`SELECT pg_advisory_xact_lock(${DEPENDENCY_LOCK}, ${accountId}::int)`.execute(db);
}
/** the first key of the advisory lock: Vigil's dependency changes, whatever the account */
const DEPENDENCY_LOCK = 0x7669_6764;

export interface Neighbour {
  id: number;
  name: string;
  last_status: string;
}

/** A monitor's parents and the monitors that depend on it, by name, for its page. */
export async function dependencyNeighbours(db: Db, accountId: number, monitorId: number): Promise<{ parents: Neighbour[]; children: Neighbour[] }> {
  const from = db.selectFrom("monitor_dependencies as d");
  const [parents, children] = await Promise.all([
    from.innerJoin("monitors as m", "m.id", "d.parent_id").select(["m.id", "m.name", "m.last_status"]).where("d.monitor_id", "=", monitorId).where("m.account_id", "=", accountId).orderBy("m.id").execute(),
    from.innerJoin("monitors as m", "m.id", "d.monitor_id").select(["m.id", "m.name", "m.last_status"]).where("d.parent_id", "=", monitorId).where("m.account_id", "=", accountId).orderBy("m.id").execute(),
  ]);
  return { parents, children };
}

// ---- the engine's questions (engine/dependencies.ts), answered through the open-incidents index ----

/** The open incident of one of the monitor's parents (the oldest), or null when every parent is up. */
export async function downParentIncidentId(db: Db, monitorId: number): Promise<number | null> {
  const row = await db
    .selectFrom("monitor_dependencies as d")
    .innerJoin("incidents as i", "i.monitor_id", "d.parent_id")
    .select("i.id")
    .where("d.monitor_id", "=", monitorId)
    .where("i.status", "=", "open")
    .orderBy("i.id")
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

/** Open incidents held for a parent, of the monitors that depend on `parentId`. */
export async function heldChildIncidents(db: Db, parentId: number): Promise<IncidentRow[]> {
  return db
    .selectFrom("monitor_dependencies as d")
    .innerJoin("incidents as i", "i.monitor_id", "d.monitor_id")
    .selectAll("i")
    .where("d.parent_id", "=", parentId)
    .where("i.status", "=", "open")
    .where("i.held_for_parent", "=", 1)
    .orderBy("i.id")
    .execute();
}

/**
 * Open incidents still held though no parent of their monitor is down: their parents' recovery was
 * committed beside their opening and neither saw the other, or a parent was deleted or unlinked.
 */
export async function strandedHeldIncidents(db: Db, limit: number): Promise<IncidentRow[]> {
  return db
    .selectFrom("incidents as i")
    .selectAll("i")
    .where("i.status", "=", "open")
    .where("i.held_for_parent", "=", 1)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("monitor_dependencies as d")
            .innerJoin("incidents as p", "p.monitor_id", "d.parent_id")
            .select("p.id")
            .whereRef("d.monitor_id", "=", "i.monitor_id")
            .where("p.status", "=", "open"),
        ),
      ),
    )
    .orderBy("i.id")
    .limit(limit)
    .execute();
}
