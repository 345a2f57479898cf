import { alertFields, alertKind, alertSummary, alertTitle } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

const TEXT_COLOUR = { down: "Attention", up: "Good", degraded: "Warning", flapping: "Warning", expiring: "Warning", test: "Accent", unknown: "Default" } as const;

/** Microsoft Teams workflow webhook ("Post to a channel when a webhook request is received"): an Adaptive Card. */
export function teamsBody(p: AlertPayload): Record<string, unknown> {
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", text: alertTitle(p), weight: "Bolder", size: "Medium", color: TEXT_COLOUR[alertKind(p)], wrap: true },
            { type: "TextBlock", text: alertSummary(p), wrap: true },
            { type: "FactSet", facts: alertFields(p).map((f) => ({ title: f.label, value: f.value })) },
          ],
          actions: [{ type: "Action.OpenUrl", title: "Open in Vigil", url: p.dashboard_url }],
        },
      },
    ],
  };
}

export const teamsSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: { "content-type": "application/json" }, body: JSON.stringify(teamsBody(alert)) }, signal, sc);
  },
};
