import type { AppContext } from "../context.ts";
import type { IncidentAttributes } from "../domain/incident-schema.ts";
import { notFound } from "../http/errors.ts";
import { toIso } from "../lib/dates.ts";
import * as store from "../store/incident-queries.ts";
import type { IncidentRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import type { Item, Listed, PageWindow } from "./items.ts";

/** Incidents, read-only: the engine opens and resolves them (engine/state-change.ts). */
export type IncidentItem = Item<IncidentAttributes>;

function incidentAttributes(r: IncidentRow): IncidentAttributes {
  return {
    monitor_id: r.monitor_id,
    status: r.status as IncidentAttributes["status"],
    started_at: toIso(r.started_at),
    resolved_at: toIso(r.resolved_at),
    duration_ms: r.duration_ms,
    failure_count: r.failure_count,
    last_error_code: r.last_error_code,
    last_error_message: r.last_error_message,
    last_http_code: r.last_http_code,
    root_check_id: r.root_check_id,
    resolved_check_id: r.resolved_check_id,
    parent_incident_id: r.parent_incident_id,
    created_at: toIso(r.created_at),
    updated_at: toIso(r.updated_at),
  };
}

const present = (r: IncidentRow): IncidentItem => ({ id: r.id, attributes: incidentAttributes(r) });

/** A page of the account's incidents, started_at descending, then id descending. */
export async function listIncidents(ctx: AppContext, actor: Actor, filter: store.IncidentFilter, window: PageWindow): Promise<Listed<IncidentAttributes>> {
  const { rows, total } = await store.listIncidents(ctx.db, actor.accountId, filter, window);
  return { items: rows.map(present), total };
}

export async function getIncident(ctx: AppContext, actor: Actor, id: number): Promise<IncidentItem> {
  const row = await store.findIncident(ctx.db, actor.accountId, id);
  if (!row) throw notFound("incident");
  return present(row);
}
