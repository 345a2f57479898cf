/**
 * The instances and leases tables, on PostgreSQL (README "Several instances"): which `vigil serve`
 * processes share the database, and which one holds a once-only role. Every time written or
 * compared here is the database's clock (clock_timestamp(), epoch ms), never the caller's, so
 * instances whose clocks disagree still agree on who is alive and who leads. The one writer of both
 * tables.
 */
import { sql } from "kysely";
import type { Db } from "./database.ts";

/** The database's time now, in epoch ms (clock_timestamp(), not the transaction's start). */
const DB_NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface InstanceIdentity {
  id: string;
  region: string;
  host: string;
  pid: number;
  version: string;
}

export interface LiveInstance {
  id: string;
  region: string;
  host: string;
  startedAt: number;
  expiresAt: number;
}

/**
 * Renews an instance's row for `ttlMs` from the database's now, creating it when it is missing
 * (first start, or pruned after the instance could not reach the database for a while).
 */
export async function renewInstance(db: Db, me: InstanceIdentity, ttlMs: number): Promise<void> {
  const expires = sql<number>`${DB_NOW} + ${ttlMs}::bigint`;
  await db
    .insertInto("instances")
    .values({ ...me, started_at: DB_NOW, renewed_at: DB_NOW, expires_at: expires })
    .onConflict((oc) => oc.column("id").doUpdateSet({ renewed_at: DB_NOW, expires_at: expires }))
    .execute();
}

/** Every instance whose row has not expired, by id, with the database's time of the reading. */
export async function listLiveInstances(db: Db): Promise<{ now: number; instances: LiveInstance[] }> {
  const { rows } = await sql<{ id: string; region: string; host: string; started_at: number; expires_at: number; now: number }>`
    WITH t AS (SELECT ${DB_NOW} AS now)
    SELECT i.id, i.region, i.host, i.started_at, i.expires_at, t.now FROM t LEFT JOIN instances i ON i.expires_at > t.now ORDER BY i.id`.execute(db);
  const now = Number(rows[0]!.now);
  const instances = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id, region: r.region, host: r.host, startedAt: Number(r.started_at), expiresAt: Number(r.expires_at) }));
  return { now, instances };
}

/** A stopping instance leaves at once instead of when its row expires. */
export async function removeInstance(db: Db, id: string): Promise<void> {
  await db.deleteFrom("instances").where("id", "=", id).execute();
}

/** Forgets instances dead for longer than `deadForMs` (each start adds a row under a new id). */
export async function pruneInstances(db: Db, deadForMs: number): Promise<number> {
  const r = await db.deleteFrom("instances").where("expires_at", "<", sql<number>`${DB_NOW} - ${deadForMs}::bigint`).executeTakeFirst();
  return Number(r.numDeletedRows);
}

export interface LeaseState {
  /** the instance holding the lease now, or null when nobody does */
  holder: string | null;
  /** since when the holder has held it without a break (database clock) */
  acquiredAt: number | null;
}

/**
 * Takes the lease `name` for `holder` until `ttlMs` from the database's now when it is free or
 * expired, or renews it when `holder` has it; otherwise leaves it alone. One statement, so two
 * instances claiming at once cannot both win. Returns who holds it afterwards.
 */
export async function claimLease(db: Db, name: string, holder: string, ttlMs: number): Promise<LeaseState> {
  const expires = sql<number>`${DB_NOW} + ${ttlMs}::bigint`;
  const won = await db
    .insertInto("leases")
    .values({ name, holder, acquired_at: DB_NOW, expires_at: expires })
    .onConflict((oc) =>
      oc
        .column("name")
        .doUpdateSet({
          holder: (eb) => eb.ref("excluded.holder"),
          acquired_at: sql<number>`CASE WHEN leases.holder = excluded.holder THEN leases.acquired_at ELSE excluded.acquired_at END`,
          expires_at: (eb) => eb.ref("excluded.expires_at"),
        })
        .where((eb) => eb.or([eb("leases.holder", "=", eb.ref("excluded.holder")), eb("leases.expires_at", "<=", eb.ref("excluded.acquired_at"))])),
    )
    .returning(["holder", "acquired_at"])
    .executeTakeFirst();
  if (won) return { holder: won.holder, acquiredAt: Number(won.acquired_at) };
  const { rows } = await sql<{ holder: string; acquired_at: number }>`SELECT holder, acquired_at FROM leases WHERE name = ${name} AND expires_at > ${DB_NOW}`.execute(db);
  const row = rows[0];
  return row ? { holder: row.holder, acquiredAt: Number(row.acquired_at) } : { holder: null, acquiredAt: null };
}

/** Gives the lease up (a stopping holder), so another instance takes it at its next claim. */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await db.deleteFrom("leases").where("name", "=", name).where("holder", "=", holder).execute();
}
