import { alertFields, alertSummary, alertTitle, stateColour } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** Discord webhook: a one-line `content` for the notification and an embed with the details. */
export function discordBody(p: AlertPayload): Record<string, unknown> {
  const title = alertTitle(p);
  return {
    content: title.slice(0, 2000),
    embeds: [
      {
        title: title.slice(0, 256),
        description: alertSummary(p).slice(0, 4096),
        color: stateColour(p),
        url: p.dashboard_url,
        // Discord allows 25 fields, 1024 characters per value
        fields: alertFields(p).slice(0, 25).map((f) => ({ name: f.label, value: f.value.slice(0, 1024), inline: f.value.length <= 40 })),
        timestamp: p.occurred_at,
        footer: { text: "Vigil" },
      },
    ],
  };
}

export const discordSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: { "content-type": "application/json" }, body: JSON.stringify(discordBody(alert)) }, signal, sc);
  },
};
