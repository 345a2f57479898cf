/**
 * The state a person is shown for a monitor: its aggregate state, except that a paused monitor
 * shows paused and one in maintenance shows maintenance unless it is down. The dashboard and the
 * status pages both show this.
 */
const DISPLAY_STATES = ["up", "degraded", "down", "unknown", "paused", "maintenance"] as const;
export type DisplayState = (typeof DISPLAY_STATES)[number];

export function displayState(m: { last_status: string; is_paused: boolean | number; is_in_maintenance?: boolean | number }): DisplayState {
  if (m.is_paused === true || m.is_paused === 1) return "paused";
  if ((m.is_in_maintenance === true || m.is_in_maintenance === 1) && m.last_status !== "down") return "maintenance";
  return (DISPLAY_STATES as readonly string[]).includes(m.last_status) ? (m.last_status as DisplayState) : "unknown";
}
