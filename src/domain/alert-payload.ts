import type { ExpiryKind } from "./expiry-stage.ts";

export type AlertEvent = "monitor.down" | "monitor.degraded" | "monitor.up";
/** An open incident's reminder and escalation (docs/notifications.md "Dependencies, reminders and escalation") */
export type FollowupEvent = "monitor.still_down" | "monitor.escalated";
/**
 * What a delivered alert announces: a state change, a monitor reported as flapping, a certificate or
 * domain registration close to expiry, an open incident's reminder or escalation, or a test.
 */
export type PayloadEvent = AlertEvent | "monitor.flapping" | "monitor.expiring" | FollowupEvent | "test";

/**
 * What an outbox row carries, format-neutral: the webhook's JSON (docs/notifications.md "Webhook
 * payload") plus what the human-readable channels add. Snapshotted when the alert is raised, so a
 * retry a day later still tells what happened then.
 */
export interface AlertPayload {
  event: PayloadEvent;
  occurred_at: string;
  monitor: { id: string; name: string; monitor_type: string; target: string | null };
  state: string;
  previous_state: string;
  incident: { id: string; started_at: string; resolved_at: string | null; duration_ms: number | null } | null;
  error_code: string | null;
  error_message: string | null;
  regions: { region: string; status: string; last_checked_at: string }[];
  /** the monitor's page in the dashboard */
  dashboard_url: string;
  /** on monitor.flapping: how many state changes in how long triggered it */
  flapping?: { changes: number; window_ms: number };
  /** on monitor.expiring: what expires, when, and how many days are left (docs/notifications.md "Expiry alerts") */
  expiry?: { kind: ExpiryKind; expires_at: string; days_left: number };
}
