/**
 * Uptime Kuma's notifications as Vigil notification channels (README "Coming from Uptime Kuma"):
 * Kuma keeps each one as a JSON `config` whose `type` names the provider and whose other keys are
 * the provider's form fields. One lookup table, provider → the channel attributes, or the reason it
 * cannot be one.
 */
import type { KumaRow } from "../store/uptime-kuma-file.ts";

type Config = Record<string, unknown>;
type Mapped = { attributes: Record<string, unknown>; notes: string[] } | { skip: string };

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : typeof v === "number" ? String(v) : null);
const trimSlash = (u: string) => u.replace(/\/+$/, "");

function needs(c: Config, keys: string[], build: () => Mapped): Mapped {
  const missing = keys.filter((k) => str(c[k]) === null);
  return missing.length ? { skip: `its ${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} empty` } : build();
}

const ok = (attributes: Record<string, unknown>, notes: string[] = []): Mapped => ({ attributes, notes });
const url = (type: string, key: string) => (c: Config) => needs(c, [key], () => ok({ channel_type: type, url: str(c[key]) }));

/** Kuma provider name (config.type) → how it becomes a channel. */
const PROVIDERS: Record<string, (c: Config) => Mapped> = {
  discord: url("discord", "discordWebhookUrl"),
  slack: url("slack", "slackwebhookURL"),
  teams: url("teams", "webhookUrl"),
  mattermost: url("mattermost", "mattermostWebhookUrl"),
  "rocket.chat": url("rocketchat", "rocketwebhookURL"),
  GoogleChat: url("google_chat", "googleChatWebhookURL"),
  telegram: (c) =>
    needs(c, ["telegramBotToken", "telegramChatID"], () => {
      const server = str(c.telegramServerUrl);
      return ok({
        channel_type: "telegram",
        telegram_bot_token: str(c.telegramBotToken),
        telegram_chat_id: /^-?\d+$/.test(str(c.telegramChatID)!) ? Number(c.telegramChatID) : str(c.telegramChatID),
        ...(server && trimSlash(server) !== "https://api.telegram.org" ? { url: trimSlash(server) } : {}),
      }, str(c.telegramMessageThreadID) ? ["message thread id not kept: Vigil posts to the chat itself"] : []);
    }),
  webhook: (c) =>
    needs(c, ["webhookURL"], () => {
      const notes = ["Vigil sends its own JSON payload (README \"Alerts and notification channels\"), not Kuma's"];
      if (str(c.webhookCustomBody)) notes.push("custom body not kept");
      if (str(c.webhookAdditionalHeaders)) notes.push("additional headers not kept");
      return ok({ channel_type: "webhook", url: str(c.webhookURL) }, notes);
    }),
  ntfy: (c) =>
    needs(c, ["ntfyserverurl", "ntfytopic"], () => {
      const auth = str(c.ntfyAuthenticationMethod);
      if ((auth && auth !== "none") || str(c.ntfyusername) || str(c.ntfyaccesstoken)) return { skip: "it logs in to the ntfy server, and Vigil's ntfy channel sends no credentials" };
      return ok({ channel_type: "ntfy", url: `${trimSlash(str(c.ntfyserverurl)!)}/${encodeURIComponent(str(c.ntfytopic)!)}` }, str(c.ntfyPriority) ? ["priority not kept: Vigil sets it from the alert"] : []);
    }),
  gotify: (c) => needs(c, ["gotifyserverurl", "gotifyapplicationToken"], () => ok({ channel_type: "gotify", url: trimSlash(str(c.gotifyserverurl)!), gotify_token: str(c.gotifyapplicationToken) })),
  pushover: (c) =>
    needs(c, ["pushoverapptoken", "pushoveruserkey"], () => {
      const notes = ["pushoverdevice", "pushoversounds", "pushoverpriority"].filter((k) => str(c[k])).map((k) => `${k} not kept`);
      return ok({ channel_type: "pushover", pushover_token: str(c.pushoverapptoken), pushover_user: str(c.pushoveruserkey) }, notes);
    }),
  smtp: (c) =>
    needs(c, ["smtpHost", "smtpFrom", "smtpTo"], () => {
      const port = Number(c.smtpPort) || null;
      // Kuma: smtpSecure is TLS from the first byte; otherwise nodemailer upgrades with STARTTLS when offered, unless told to ignore it
      const security = c.smtpSecure ? "tls" : c.smtpIgnoreSTARTTLS ? "none" : "starttls";
      const notes: string[] = [];
      const to = [str(c.smtpTo), str(c.smtpCC), str(c.smtpBCC)].filter(Boolean).join(", ");
      if (str(c.smtpCC) || str(c.smtpBCC)) notes.push("Cc and Bcc addresses are sent as To");
      if (c.smtpIgnoreTLSError) notes.push("ignore TLS errors not kept: Vigil verifies the mail server's certificate");
      if (str(c.customSubject) || str(c.customBody)) notes.push("custom subject and body not kept");
      return ok({
        channel_type: "email",
        email_to: to,
        smtp_host: str(c.smtpHost),
        smtp_port: port,
        smtp_security: security,
        smtp_user: str(c.smtpUsername),
        ...(str(c.smtpPassword) ? { smtp_pass: str(c.smtpPassword) } : {}),
        smtp_from: str(c.smtpFrom),
      }, notes);
    }),
  matrix: (c) =>
    needs(c, ["homeserverUrl", "internalRoomId", "accessToken"], () =>
      ok({ channel_type: "matrix", url: trimSlash(str(c.homeserverUrl)!), matrix_room_id: str(c.internalRoomId), matrix_access_token: str(c.accessToken) })),
  PagerDuty: (c) =>
    needs(c, ["pagerdutyIntegrationKey"], () => {
      const endpoint = str(c.pagerdutyIntegrationUrl);
      return ok({ channel_type: "pagerduty", pagerduty_routing_key: str(c.pagerdutyIntegrationKey), ...(endpoint && endpoint !== "https://events.pagerduty.com/v2/enqueue" ? { url: endpoint } : {}) });
    }),
  Opsgenie: (c) =>
    needs(c, ["opsgenieApiKey"], () => ok({ channel_type: "opsgenie", opsgenie_api_key: str(c.opsgenieApiKey), ...(c.opsgenieRegion === "eu" ? { url: "https://api.eu.opsgenie.com" } : {}) })),
  HomeAssistant: (c) =>
    needs(c, ["homeAssistantUrl", "longLivedAccessToken"], () =>
      ok({
        channel_type: "homeassistant",
        url: trimSlash(str(c.homeAssistantUrl)!),
        homeassistant_token: str(c.longLivedAccessToken),
        // Kuma calls /api/services/notify/<service>, "notify" when none is given
        homeassistant_service: `notify.${str(c.notificationService) ?? "notify"}`,
      })),
  signal: (c) =>
    needs(c, ["signalURL", "signalNumber", "signalRecipients"], () =>
      ok({
        channel_type: "signal",
        url: trimSlash(str(c.signalURL)!.replace(/\/v2\/send$/, "")),
        signal_number: str(c.signalNumber),
        signal_recipients: str(c.signalRecipients)!.split(",").map((r) => r.trim()).filter(Boolean),
      })),
  apprise: (c) => needs(c, ["appriseURL"], () => ok({ channel_type: "apprise", apprise_urls: str(c.appriseURL) })),
};

/** The channel a Kuma notification row becomes, or why it cannot be one. */
export function mapKumaNotification(row: KumaRow): Mapped & { provider: string } {
  let config: Config;
  try {
    config = JSON.parse(String(row.config ?? "{}")) as Config;
  } catch {
    return { provider: "unknown", skip: "its configuration is not valid JSON" };
  }
  const provider = str(config.type) ?? "unknown";
  const map = PROVIDERS[provider];
  if (!map) return { provider, skip: `Vigil has no ${provider} channel (it has webhook, slack, discord, teams, telegram, ntfy, gotify, pushover, email, matrix, mattermost, rocketchat, google_chat, pagerduty, opsgenie, homeassistant, signal, apprise)` };
  return { provider, ...map(config) };
}
