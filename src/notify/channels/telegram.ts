import { alertFields, alertSummary, alertTitle, escapeHtml } from "../format.ts";
import { postHttp } from "../http-post.ts";
import { misconfigured, type AlertPayload, type ChannelSender } from "../types.ts";

export const TELEGRAM_API = "https://api.telegram.org";

/** The message in Telegram's HTML subset (b, i, a, code): title, summary, details, link. */
export function telegramText(p: AlertPayload): string {
  const lines = [`<b>${escapeHtml(alertTitle(p))}</b>`, escapeHtml(alertSummary(p)), ""];
  for (const f of alertFields(p)) lines.push(`<b>${escapeHtml(f.label)}:</b> ${escapeHtml(f.value)}`);
  lines.push("", `<a href="${escapeHtml(p.dashboard_url)}">Open in Vigil</a>`);
  return lines.join("\n").slice(0, 4096);
}

/**
 * Telegram Bot API sendMessage. The channel's optional `url` replaces https://api.telegram.org, for
 * a self-hosted Bot API server (and for tests). The token is in the path, so errors are scrubbed
 * of it by the dispatcher.
 */
export const telegramSender: ChannelSender = {
  async send(alert, channel, signal, sc) {
    const token = channel.settings.telegram_bot_token as string | undefined;
    const chatId = channel.settings.telegram_chat_id as string | undefined;
    if (!token || !chatId) return misconfigured("the channel needs telegram_bot_token and telegram_chat_id");
    const base = ((channel.settings.url as string | null | undefined) || TELEGRAM_API).replace(/\/+$/, "");
    const body = JSON.stringify({ chat_id: chatId, text: telegramText(alert), parse_mode: "HTML", disable_web_page_preview: true });
    return postHttp(`${base}/bot${token}/sendMessage`, { headers: { "content-type": "application/json" }, body }, signal, sc);
  },
};
