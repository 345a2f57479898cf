import { toIso } from "../lib/dates.ts";
import type { AlertPayload } from "./types.ts";

/** The payload of `POST /notification-channels/{id}/test`: event "test", a made-up monitor, no incident. */
export function sampleAlert(baseUrl: string, now: number): AlertPayload {
  return {
    event: "test",
    occurred_at: toIso(now),
    monitor: { id: "0", name: "Vigil test notification", monitor_type: "http", target: "https://example.com/" },
    state: "up",
    previous_state: "unknown",
    incident: null,
    error_code: null,
    error_message: null,
    regions: [],
    dashboard_url: baseUrl.replace(/\/+$/, "") + "/",
  };
}
