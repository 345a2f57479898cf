/**
 * The state a person or a scraper is shown for a monitor, the same on every surface: the dashboard's
 * list (with its counts, filter and order) and monitor page, status pages with their JSON and Atom
 * feed, badges and /metrics (docs/monitors.md "Maintenance and pause"). A paused monitor shows
 * paused; one in maintenance, by its own switch or by an active maintenance window, shows
 * maintenance whatever its checks say; any other shows its aggregate state.
 */
const DISPLAY_STATES = ["up", "degraded", "down", "unknown", "paused", "maintenance"] as const;
export type DisplayState = (typeof DISPLAY_STATES)[number];

export interface ShownMonitor {
  last_status: string;
  is_paused: boolean | number;
  /** the monitor's maintenance switch (a stored row), or already switch-or-window (the API's attributes) */
  is_in_maintenance: boolean | number;
}

/** `heldByWindow`: whether an active maintenance window holds the monitor now. */
export function displayState(m: ShownMonitor, heldByWindow: boolean): DisplayState {
  if (m.is_paused === true || m.is_paused === 1) return "paused";
  if (heldByWindow || m.is_in_maintenance === true || m.is_in_maintenance === 1) return "maintenance";
  return (DISPLAY_STATES as readonly string[]).includes(m.last_status) ? (m.last_status as DisplayState) : "unknown";
}
