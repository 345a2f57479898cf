import { alertKind, alertPlainText, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

export const PUSHOVER_API = "https://api.pushover.net";

/** Pushover priorities: 1 bypasses quiet hours, which is what an outage deserves. */
const PRIORITY = { down: "1", flapping: "0", degraded: "0", expiring: "0", up: "0", test: "0", unknown: "0" } as const;

export function pushoverForm(p: AlertPayload, token: string, user: string): URLSearchParams {
  return new URLSearchParams({
    token,
    user,
    title: alertTitle(p).slice(0, 250),
    message: alertPlainText(p, { title: false }).slice(0, 1024),
    url: p.dashboard_url,
    url_title: "Open in Vigil",
    priority: PRIORITY[alertKind(p)],
  });
}

/** Pushover messages API (form-encoded). The channel's optional `url` replaces https://api.pushover.net. */
export const pushoverSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const token = channel.settings.pushover_token as string | undefined;
    const user = channel.settings.pushover_user as string | undefined;
    if (!token || !user) return misconfigured("the channel needs pushover_token and pushover_user");
    const base = ((channel.settings.url as string | null | undefined) || PUSHOVER_API).replace(/\/+$/, "");
    return postHttp(`${base}/1/messages.json`, { headers: { "content-type": "application/x-www-form-urlencoded" }, body: pushoverForm(alert, token, user) }, signal, sc);
  },
};
