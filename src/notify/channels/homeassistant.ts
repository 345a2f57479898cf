import { alertPlainText, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** The service data: `title` and `message`, which notify.* services and persistent_notification.create both take. */
export function homeassistantData(p: AlertPayload): Record<string, unknown> {
  return { title: alertTitle(p), message: alertPlainText(p, { title: false }) };
}

/**
 * Home Assistant REST API: `POST {url}/api/services/{domain}/{service}` with a long-lived access
 * token, so `notify.mobile_app_pixel` becomes `/api/services/notify/mobile_app_pixel`.
 */
export const homeassistantSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    const token = channel.settings.homeassistant_token as string | undefined;
    const service = channel.settings.homeassistant_service as string | undefined;
    const [domain, name] = (service ?? "").split(".");
    if (!url || !token || !domain || !name) return misconfigured("the channel needs url, homeassistant_token and homeassistant_service (domain.service)");
    const target = `${url.replace(/\/+$/, "")}/api/services/${encodeURIComponent(domain)}/${encodeURIComponent(name)}`;
    return postHttp(target, { headers: { "content-type": "application/json", authorization: `Bearer ${token}` }, body: JSON.stringify(homeassistantData(alert)) }, signal, sc);
  },
};
