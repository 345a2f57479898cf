import { alertTitle } from "./format.ts";
import type { AlertPayload, DeliveryOutcome } from "./types.ts";

/**
 * What a pager service (PagerDuty, Opsgenie) is told about an alert: open an alert under `key`, or
 * close the one open under it (docs/notifications.md "Pager services"). An alert with an incident
 * uses the incident id, so the recovery closes exactly what the outage opened; a degraded alert
 * without an outage and its recovery share one key per monitor; any other event without an
 * incident opens its own per monitor and event, left for a person to close.
 */
export interface PagerAction {
  action: "open" | "close";
  key: string;
}

export function pagerAction(p: AlertPayload): PagerAction {
  if (p.incident) return { action: p.incident.resolved_at ? "close" : "open", key: p.incident.id };
  const degraded = `monitor-${p.monitor.id}-degraded`;
  if (p.event === "monitor.up") return { action: "close", key: degraded };
  if (p.event === "monitor.degraded") return { action: "open", key: degraded };
  return { action: "open", key: `monitor-${p.monitor.id}-${p.event.replace(/^monitor\./, "")}` };
}

/**
 * A test send opens an alert and closes it at once, under a key of its own, so nothing stays open
 * and both halves (an API key may create without being allowed to close) are tried.
 */
export async function openThenClose(deliveryId: string, open: (key: string) => Promise<DeliveryOutcome>, close: (key: string) => Promise<DeliveryOutcome>): Promise<DeliveryOutcome> {
  const key = `vigil-test-${deliveryId}`;
  const opened = await open(key);
  if (!opened.ok) return opened;
  const closed = await close(key);
  return closed.ok ? closed : { ...closed, error: `the test alert was opened, but closing it failed: ${closed.error}` };
}

/** "DOWN: Checkout API": pager services show their own severity, so no emoji. */
export function pagerTitle(p: AlertPayload): string {
  return alertTitle(p).replace(/^\S+\s/, "");
}
