import { alertFields, alertSummary, alertTitle, escapeSlack } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

/** Slack incoming webhook: `text` is the notification fallback, `blocks` the message (Block Kit). */
export function slackBody(p: AlertPayload): Record<string, unknown> {
  const title = alertTitle(p);
  return {
    text: `${title}: ${alertSummary(p)}`,
    blocks: [
      { type: "header", text: { type: "plain_text", text: title.slice(0, 150), emoji: true } },
      { type: "section", text: { type: "mrkdwn", text: escapeSlack(alertSummary(p)) } },
      // Slack allows at most 10 fields per section
      { type: "section", fields: alertFields(p).slice(0, 10).map((f) => ({ type: "mrkdwn", text: `*${f.label}*\n${escapeSlack(f.value).slice(0, 1900)}` })) },
      { type: "actions", elements: [{ type: "button", text: { type: "plain_text", text: "Open in Vigil" }, url: p.dashboard_url }] },
    ],
  };
}

export const slackSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const url = channel.settings.url as string | undefined;
    if (!url) return misconfigured("the channel has no url");
    return postHttp(url, { headers: { "content-type": "application/json" }, body: JSON.stringify(slackBody(alert)) }, signal, sc);
  },
};
