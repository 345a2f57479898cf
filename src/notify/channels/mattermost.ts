import { alertFields, alertSummary, alertTitle, colourHex } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** Mattermost incoming webhook: Markdown `text`, and a Slack-style attachment coloured by state with the details. */
export function mattermostBody(p: AlertPayload): Record<string, unknown> {
  const title = alertTitle(p);
  return {
    text: `#### ${title}\n${alertSummary(p)}`,
    attachments: [
      {
        fallback: `${title}: ${alertSummary(p)}`,
        color: colourHex(p),
        fields: alertFields(p).map((f) => ({ short: f.value.length <= 40, title: f.label, value: f.value })),
        title: "Open in Vigil",
        title_link: p.dashboard_url,
      },
    ],
  };
}

export const mattermostSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: { "content-type": "application/json" }, body: JSON.stringify(mattermostBody(alert)) }, signal, sc);
  },
};
