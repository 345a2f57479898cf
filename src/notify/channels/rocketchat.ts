import { alertFields, alertSummary, alertTitle, colourHex } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** Rocket.Chat incoming webhook: `text` with the title in bold, and an attachment coloured by state with the details. */
export function rocketchatBody(p: AlertPayload): Record<string, unknown> {
  return {
    text: `*${alertTitle(p)}*\n${alertSummary(p)}`,
    attachments: [
      {
        title: "Open in Vigil",
        title_link: p.dashboard_url,
        color: colourHex(p),
        fields: alertFields(p).map((f) => ({ short: f.value.length <= 40, title: f.label, value: f.value })),
      },
    ],
  };
}

export const rocketchatSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: { "content-type": "application/json" }, body: JSON.stringify(rocketchatBody(alert)) }, signal, sc);
  },
};
