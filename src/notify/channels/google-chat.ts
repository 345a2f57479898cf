import { alertFields, alertSummary, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** Google Chat incoming webhook: a text message in Chat's own markup (`*bold*`, `<url|label>`), at most 4096 characters. */
export function googleChatBody(p: AlertPayload): Record<string, unknown> {
  const lines = [`*${alertTitle(p)}*`, alertSummary(p), ""];
  for (const f of alertFields(p)) lines.push(`*${f.label}:* ${f.value}`);
  lines.push("", `<${p.dashboard_url}|Open in Vigil>`);
  return { text: lines.join("\n").slice(0, 4096) };
}

export const googleChatSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: { "content-type": "application/json; charset=UTF-8" }, body: JSON.stringify(googleChatBody(alert)) }, signal, sc);
  },
};
