import { alertFields, alertKind, alertSummary } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { openThenClose, pagerAction } from "../pager-events.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** The public Events API v2 endpoint, used when the channel has no `url`. */
export const PAGERDUTY_EVENTS_URL = "https://events.pagerduty.com/v2/enqueue";

type Severity = "critical" | "error" | "warning" | "info";

function severity(p: AlertPayload): Severity {
  switch (alertKind(p)) {
    case "down":
      return "critical";
    case "degraded":
    case "flapping":
      return "warning";
    default:
      return "info";
  }
}

/** One Events API v2 event: `trigger` opens (or updates) the alert under `dedup_key`, `resolve` closes it. */
export function pagerdutyEvent(p: AlertPayload, routingKey: string, action: "trigger" | "resolve", dedupKey: string): Record<string, unknown> {
  const error = [p.error_code, p.error_message].filter(Boolean).join(": ");
  return {
    routing_key: routingKey,
    event_action: action,
    dedup_key: dedupKey,
    payload: {
      summary: (error ? `${alertSummary(p)} ${error}` : alertSummary(p)).slice(0, 1024),
      source: p.monitor.target ?? `Vigil monitor ${p.monitor.id}`,
      severity: severity(p),
      timestamp: p.occurred_at,
      component: p.monitor.name,
      group: p.monitor.monitor_type,
      ...(p.error_code ? { class: p.error_code } : {}),
      custom_details: Object.fromEntries(alertFields(p).map((f) => [f.label, f.value])),
    },
    client: "Vigil",
    client_url: p.dashboard_url,
    links: [{ href: p.dashboard_url, text: "Open in Vigil" }],
  };
}

/**
 * PagerDuty Events API v2: trigger on down, resolve on recovery, the incident id as dedup_key. The
 * channel's optional `url` replaces the public endpoint. A test triggers and resolves at once.
 */
export const pagerdutySender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const routingKey = channel.settings.pagerduty_routing_key as string | undefined;
    if (!routingKey) return misconfigured("the channel needs pagerduty_routing_key");
    const url = (channel.settings.url as string | null | undefined) || PAGERDUTY_EVENTS_URL;
    const post = (action: "trigger" | "resolve", key: string) =>
      postHttp(url, { headers: { "content-type": "application/json" }, body: JSON.stringify(pagerdutyEvent(alert, routingKey, action, key)) }, signal, sc);
    if (alert.event === "test") return openThenClose(sc.deliveryId, (key) => post("trigger", key), (key) => post("resolve", key));
    const { action, key } = pagerAction(alert);
    return post(action === "open" ? "trigger" : "resolve", key);
  },
};
