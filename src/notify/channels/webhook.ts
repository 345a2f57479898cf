import { createHmac } from "node:crypto";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/**
 * The exact body of docs/notifications.md "Webhook payload": nothing more, nothing renamed; a
 * monitor.expiring alert adds its `expiry` ("Expiry alerts").
 */
export function webhookBody(p: AlertPayload): string {
  return JSON.stringify({
    event: p.event,
    occurred_at: p.occurred_at,
    monitor: { id: p.monitor.id, name: p.monitor.name, monitor_type: p.monitor.monitor_type, target: p.monitor.target },
    state: p.state,
    previous_state: p.previous_state,
    incident: p.incident,
    error_code: p.error_code,
    error_message: p.error_message,
    regions: p.regions,
    ...(p.event === "monitor.expiring" && p.expiry ? { expiry: p.expiry } : {}),
  });
}

/** `sha256=<hex HMAC-SHA256 of the raw body keyed by the secret>` */
export function webhookSignature(secret: string, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(body).digest("hex");
}

/**
 * Generic webhook: JSON with X-Vigil-Event, X-Vigil-Delivery (the same on every retry, so a
 * receiver can drop repeats) and, when the channel has a secret, X-Vigil-Signature.
 */
export const webhookSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    const body = webhookBody(alert);
    const headers: Record<string, string> = { "content-type": "application/json", "x-vigil-event": alert.event, "x-vigil-delivery": sc.deliveryId };
    const secret = channel.settings.secret as string | undefined;
    if (secret) headers["x-vigil-signature"] = webhookSignature(secret, body);
    return postHttp(url, { headers, body }, signal, sc);
  },
};
