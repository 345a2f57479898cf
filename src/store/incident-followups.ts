import type { Db } from "./database.ts";
import type { IncidentFollowupsTable, IncidentRow } from "./tables.ts";

/**
 * What an open incident still has coming (README "Dependencies, reminders and escalation"): its next
 * reminder ('repeat') and its escalation, each a row due at a time. The one writer of
 * incident_followups. A due row is claimed with a conditional update on its due time, so one due
 * time fires once, whatever number of instances look at it; the rows of an incident go when it
 * resolves.
 */
export type FollowupKind = IncidentFollowupsTable["kind"];
export interface Followup {
  incident_id: number;
  kind: FollowupKind;
  due_at: number;
}

/** Plans a follow-up unless the incident has one of that kind already. */
export async function planFollowup(db: Db, incidentId: number, kind: FollowupKind, dueAt: number): Promise<void> {
  await db
    .insertInto("incident_followups")
    .values({ incident_id: incidentId, kind, due_at: dueAt })
    .onConflict((oc) => oc.columns(["incident_id", "kind"]).doNothing())
    .execute();
}

/** An incident resolved: nothing more is due for it. */
export async function cancelFollowups(db: Db, incidentId: number): Promise<void> {
  await db.deleteFrom("incident_followups").where("incident_id", "=", incidentId).execute();
}

/** Follow-ups due at `now`, the most overdue first. */
export async function dueFollowups(db: Db, now: number, limit: number): Promise<Followup[]> {
  return db.selectFrom("incident_followups").select(["incident_id", "kind", "due_at"]).where("due_at", "<=", now).orderBy("due_at").orderBy("incident_id").limit(limit).execute();
}

/**
 * Takes a due follow-up for this caller: moves it to `next` (the next reminder), or deletes it
 * (null), on the condition that it still is due at the time it was read. False: another caller took
 * it, or the incident resolved meanwhile.
 */
export async function claimFollowup(db: Db, f: Followup, next: number | null): Promise<boolean> {
  const r =
    next === null
      ? await db.deleteFrom("incident_followups").where("incident_id", "=", f.incident_id).where("kind", "=", f.kind).where("due_at", "=", f.due_at).executeTakeFirst()
      : await db.updateTable("incident_followups").set({ due_at: next }).where("incident_id", "=", f.incident_id).where("kind", "=", f.kind).where("due_at", "=", f.due_at).executeTakeFirst();
  return Number("numDeletedRows" in r ? r.numDeletedRows : r.numUpdatedRows) > 0;
}

/**
 * Open, alerting incidents whose monitor asks for reminders or an escalation that has no row: the
 * monitor's settings were changed while the incident was open (README "Dependencies, reminders and
 * escalation").
 */
export async function incidentsMissingFollowups(db: Db, limit: number): Promise<IncidentRow[]> {
  return db
    .selectFrom("incidents as i")
    .innerJoin("monitors as m", "m.id", "i.monitor_id")
    .selectAll("i")
    .where("i.status", "=", "open")
    .where("i.held_for_parent", "=", 0)
    .where((eb) =>
      eb.or([
        eb.and([
          eb("m.alert_repeat_minutes", "is not", null),
          eb.not(eb.exists(eb.selectFrom("incident_followups as f").select("f.incident_id").whereRef("f.incident_id", "=", "i.id").where("f.kind", "=", "repeat"))),
        ]),
        eb.and([
          eb("m.escalate_after_minutes", "is not", null),
          eb("i.escalated_at", "is", null),
          eb.exists(eb.selectFrom("monitor_escalation_channels as e").select("e.channel_id").whereRef("e.monitor_id", "=", "m.id")),
          eb.not(eb.exists(eb.selectFrom("incident_followups as f").select("f.incident_id").whereRef("f.incident_id", "=", "i.id").where("f.kind", "=", "escalate"))),
        ]),
      ]),
    )
    .orderBy("i.id")
    .limit(limit)
    .execute();
}
