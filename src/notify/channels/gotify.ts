import { alertKind, alertPlainText, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** Gotify priorities: 8 and above notify loudly on Android. */
const PRIORITY = { down: 8, flapping: 6, degraded: 6, expiring: 6, up: 5, test: 4, unknown: 4 } as const;

export function gotifyBody(p: AlertPayload): Record<string, unknown> {
  return { title: alertTitle(p), message: alertPlainText(p, { title: false }), priority: PRIORITY[alertKind(p)] };
}

/** Gotify: POST {url}/message?token=<application token>. */
export const gotifySender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    const token = channel.settings.gotify_token as string | undefined;
    if (!url || !token) return misconfigured("the channel needs url and gotify_token");
    const target = `${url.replace(/\/+$/, "")}/message?token=${encodeURIComponent(token)}`;
    return postHttp(target, { headers: { "content-type": "application/json" }, body: JSON.stringify(gotifyBody(alert)) }, signal, sc);
  },
};
