import type { Db } from "./database.ts";

/**
 * What flap protection reads (docs/notifications.md "Flapping"): a monitor's state changes in a
 * stretch of time, whether a quiet spell came among them, and when it was last reported as flapping.
 * Kept in the database, so the verdict survives restarts; the outbox itself is store/alerts.ts.
 */

/** State changes of a monitor in (from, to]: the flap counter, kept in the store so it survives restarts. */
export async function countTransitions(db: Db, monitorId: number, fromExclusive: number, toInclusive: number): Promise<number> {
  const { n } = await db
    .selectFrom("monitor_events")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("monitor_id", "=", monitorId)
    .where("kind", "=", "transition")
    .where("at", ">", fromExclusive)
    .where("at", "<=", toInclusive)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/** When the monitor was last reported as flapping (created_at of its newest flapping alert). */
export async function lastFlappingAlertAt(db: Db, monitorId: number): Promise<number | null> {
  const row = await db
    .selectFrom("alerts")
    .select((eb) => eb.fn.max("created_at").as("at"))
    .where("monitor_id", "=", monitorId)
    .where("event", "=", "monitor.flapping")
    .executeTakeFirst();
  return row?.at === null || row?.at === undefined ? null : Number(row.at);
}

/**
 * Whether some state change in (since, until] came after at least `quietMs` without one: the
 * monitor was stable for that long since `since`.
 */
export async function hadQuietGap(db: Db, monitorId: number, since: number, until: number, quietMs: number): Promise<boolean> {
  const row = await db
    .selectFrom("monitor_events as e")
    .select("e.id")
    .where("e.monitor_id", "=", monitorId)
    .where("e.kind", "=", "transition")
    .where("e.at", ">", since)
    .where("e.at", "<=", until)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("monitor_events as p")
            .select("p.id")
            .whereRef("p.monitor_id", "=", "e.monitor_id")
            .where("p.kind", "=", "transition")
            .whereRef("p.id", "<", "e.id")
            .where((eb) => eb("p.at", ">", eb(eb.ref("e.at"), "-", quietMs))),
        ),
      ),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
