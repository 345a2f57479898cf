import { alertKind, alertPlainText, alertSummary } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { openThenClose, pagerAction, pagerTitle } from "../pager-events.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** The public API base, used when the channel has no `url` (EU accounts use https://api.eu.opsgenie.com). */
export const OPSGENIE_API = "https://api.opsgenie.com";

function priority(p: AlertPayload): string {
  switch (alertKind(p)) {
    case "down":
      return "P1";
    case "degraded":
    case "flapping":
      return "P3";
    case "test":
      return "P5";
    default:
      return "P3";
  }
}

/** The body of `POST /v2/alerts`, within Opsgenie's limits (message 130, alias 512, description 15000 characters). */
export function opsgenieAlert(p: AlertPayload, alias: string): Record<string, unknown> {
  const details: Record<string, string> = { monitor_id: p.monitor.id, monitor_type: p.monitor.monitor_type, state: p.state, previous_state: p.previous_state, dashboard_url: p.dashboard_url };
  if (p.monitor.target) details.target = p.monitor.target;
  if (p.incident) details.incident_id = p.incident.id;
  if (p.error_code) details.error_code = p.error_code;
  return {
    message: pagerTitle(p).slice(0, 130),
    alias: alias.slice(0, 512),
    description: alertPlainText(p, { title: false }).slice(0, 15_000),
    priority: priority(p),
    source: "Vigil",
    entity: p.monitor.name.slice(0, 512),
    tags: ["vigil", p.monitor.monitor_type],
    details,
  };
}

/**
 * Opsgenie Alert API: create on down with the incident id as alias, close by alias on recovery,
 * authenticated by `GenieKey`. The channel's optional `url` replaces the public API base. A test
 * creates and closes at once.
 */
export const opsgenieSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const apiKey = channel.settings.opsgenie_api_key as string | undefined;
    if (!apiKey) return misconfigured("the channel needs opsgenie_api_key");
    const base = ((channel.settings.url as string | null | undefined) || OPSGENIE_API).replace(/\/+$/, "");
    const headers = { "content-type": "application/json", authorization: `GenieKey ${apiKey}` };
    const create = (alias: string) => postHttp(`${base}/v2/alerts`, { headers, body: JSON.stringify(opsgenieAlert(alert, alias)) }, signal, sc);
    const close = (alias: string) =>
      postHttp(`${base}/v2/alerts/${encodeURIComponent(alias)}/close?identifierType=alias`, { headers, body: JSON.stringify({ source: "Vigil", note: alertSummary(alert) }) }, signal, sc);
    if (alert.event === "test") return openThenClose(sc.deliveryId, create, close);
    const { action, key } = pagerAction(alert);
    return action === "open" ? create(key) : close(key);
  },
};
