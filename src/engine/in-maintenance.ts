import type { Db } from "../store/database.ts";
import { inActiveWindow } from "../store/maintenance-windows.ts";
import type { MonitorRow } from "../store/tables.ts";

/**
 * Whether a monitor is in maintenance now (docs/maintenance-windows.md "What maintenance does"):
 * its manual switch, or an active maintenance window. Read at the moment a state change is decided,
 * after its monitor row is held, so a decision and the end of a window cannot pass each other.
 */
export async function inMaintenance(db: Db, monitor: MonitorRow, now: number): Promise<boolean> {
  return monitor.is_in_maintenance === 1 || (await inActiveWindow(db, monitor.id, now));
}
