import { alertKind, alertPlainText, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

const PRIORITY = { down: "5", flapping: "4", degraded: "4", expiring: "4", up: "3", test: "3", unknown: "3" } as const;
/** ntfy turns tags that are emoji short codes into emoji in front of the title */
const TAGS = { down: "rotating_light", flapping: "repeat", degraded: "warning", expiring: "hourglass_flowing_sand", up: "white_check_mark", test: "test_tube", unknown: "grey_question" } as const;

/** HTTP header values are bytes; ntfy decodes RFC 2047 for anything beyond ASCII. */
export function headerText(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?UTF-8?B?${Buffer.from(text, "utf8").toString("base64")}?=`;
}

/** The title without the leading emoji: ntfy shows the tag's emoji instead. */
export function ntfyTitle(p: AlertPayload): string {
  return alertTitle(p).replace(/^\S+\s/, "");
}

export function ntfyHeaders(p: AlertPayload): Record<string, string> {
  const kind = alertKind(p);
  return {
    "content-type": "text/plain; charset=utf-8",
    title: headerText(ntfyTitle(p)),
    priority: PRIORITY[kind],
    tags: TAGS[kind],
    click: p.dashboard_url,
  };
}

/** ntfy: POST the text to the topic URL, with Title, Priority, Tags and Click headers. */
export const ntfySender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: ntfyHeaders(alert), body: alertPlainText(alert, { title: false }) }, signal, sc);
  },
};
