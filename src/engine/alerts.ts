import type { AppContext } from "../context.ts";
import type { Db } from "../store/database.ts";
import type { IncidentRow, MonitorRow } from "../store/tables.ts";

export type AlertEvent = "monitor.down" | "monitor.degraded" | "monitor.up";

export interface AlertRequest {
  monitor: MonitorRow;
  event: AlertEvent;
  state: string;
  previousState: string;
  at: number;
  incident: IncidentRow | null;
  errorCode: string | null;
  errorMessage: string | null;
}

/**
 * Hands an alert to delivery, inside the caller's transaction so an alert exists exactly when the
 * state change that caused it does. Until notification channels exist this is a log line.
 */
export async function raiseAlert(db: Db, ctx: AppContext, a: AlertRequest): Promise<void> {
  void db;
  ctx.log.child("alerts").info("alert", {
    event: a.event,
    monitor_id: a.monitor.id,
    state: a.state,
    previous_state: a.previousState,
    incident_id: a.incident?.id ?? null,
    error_code: a.errorCode,
  });
}
