import { Elysia } from "elysia";
import { CHANNEL_ATTRIBUTE_NAMES, CHANNEL_FIELDS, CHANNEL_TYPES, channelFieldApplies, type ChannelAttributeName, type ChannelAttributes, type ChannelField, type ChannelType } from "../domain/notification-channel-schema.ts";
import { pathId } from "../http/path-id.ts";
import { allItems } from "../services/items.ts";
import { createChannel, deleteChannel, getChannel, listChannels, sendTestNotification, storedChannelSecrets, updateChannel, type ChannelItem } from "../services/notification-channels.ts";
import { errorSummary, fieldFromSchema, formToAttributes, humanize, renderField, validationDetails, type Errors, type FieldSpec, type Mode } from "./forms/fields.ts";
import { html, type SafeHtml } from "./html.ts";
import { redirect, send } from "./respond.ts";
import { leaveBodyUnread, signedIn, type Signed } from "./routing.ts";
import { putFlash, takeFlash } from "../auth/session-flash.ts";
import { csrfField, dashboardPage, flash, storedFlash } from "./views/layout.ts";
import { confirmDelete } from "./views/monitor-views.ts";
import type { WebContext } from "./web-context.ts";

/** Notification channels: list, create/edit per type, send a test, delete; through services/notification-channels.ts. */

const LABELS: Partial<Record<ChannelAttributeName, string>> = {
  is_enabled: "Enabled",
  default_for_new_monitors: "Linked to new monitors by default",
  url: "URL",
  secret: "Signing secret",
  telegram_chat_id: "Chat id",
  telegram_bot_token: "Bot token",
  gotify_token: "Application token",
  pushover_token: "API token",
  pushover_user: "User key",
  email_to: "Send to",
  smtp_host: "SMTP host",
  smtp_port: "SMTP port",
  smtp_security: "SMTP security",
  smtp_user: "SMTP user",
  smtp_pass: "SMTP password",
  smtp_from: "From",
  matrix_room_id: "Room id",
  matrix_access_token: "Access token",
  pagerduty_routing_key: "Integration key",
  opsgenie_api_key: "API key",
  homeassistant_token: "Access token",
  homeassistant_service: "Service",
  signal_number: "Sending number",
  signal_recipients: "Recipients",
  apprise_urls: "Apprise URLs",
};

/** How each type is named on the page. */
const TYPE_NAMES: Record<ChannelType, string> = {
  webhook: "Webhook",
  slack: "Slack",
  discord: "Discord",
  teams: "Teams",
  telegram: "Telegram",
  ntfy: "ntfy",
  gotify: "Gotify",
  pushover: "Pushover",
  email: "Email",
  matrix: "Matrix",
  mattermost: "Mattermost",
  rocketchat: "Rocket.Chat",
  google_chat: "Google Chat",
  pagerduty: "PagerDuty",
  opsgenie: "Opsgenie",
  homeassistant: "Home Assistant",
  signal: "Signal",
  apprise: "Apprise",
};

/** Per type, what `url` is for: the catalogue's description covers every type at once. */
const URL_HINTS: Partial<Record<ChannelType, string>> = {
  webhook: "where the JSON is POSTed",
  slack: "the incoming webhook URL",
  discord: "the webhook URL",
  teams: "the workflow's webhook URL",
  mattermost: "the incoming webhook URL",
  rocketchat: "the incoming webhook URL",
  google_chat: "the space's webhook URL",
  ntfy: "the topic URL, such as https://ntfy.sh/my-alerts",
  gotify: "the Gotify server",
  matrix: "the homeserver, such as https://matrix.example.org",
  homeassistant: "the Home Assistant instance, such as http://homeassistant.local:8123",
  signal: "the signal-cli REST API, such as http://signal-api:8080",
  pagerduty: "leave empty for PagerDuty's public events endpoint",
  opsgenie: "leave empty for https://api.opsgenie.com (EU accounts: https://api.eu.opsgenie.com)",
  telegram: "leave empty for the public Bot API",
  pushover: "leave empty for the public Pushover API",
  apprise: "an Apprise API server; leave empty to run the apprise command on the Vigil host",
};

function isChannelType(t: string | null): t is ChannelType {
  return (CHANNEL_TYPES as readonly string[]).includes(t ?? "");
}

function channelFields(type: ChannelType): FieldSpec[] {
  return CHANNEL_ATTRIBUTE_NAMES.filter((n) => {
    const f = CHANNEL_FIELDS[n] as ChannelField;
    // external_id is set by configuration files (README "Configuration as code")
    return f.access !== "ro" && n !== "channel_type" && n !== "external_id" && channelFieldApplies(n, type);
  }).map((n) => fieldFromSchema(n, (CHANNEL_FIELDS[n] as ChannelField).schema, LABELS[n] ?? humanize(n), n === "url" ? URL_HINTS[type] : undefined));
}

const channelId = (s: Signed) => pathId(s.params, "notification channel");

export function channelRoutes(web: WebContext) {
  const app = web.app;
  const route = (h: (s: Signed) => Promise<Response>) => signedIn(web, "channels", h);
  const page = (s: Signed, title: string, body: SafeHtml, status = 200) => send(s.request, dashboardPage({ title, session: s.session, section: "channels", body, saturation: web.saturation() }), { status });

  async function list(s: Signed) {
    const channels = await allItems((w) => listChannels(app, s.actor, w));
    const result = await takeFlash(app, s.session.id_hash, "channels");
    const body = html`${flash(s.url.searchParams.get("msg"))}${storedFlash(result)}<div class="row between"><h1>Notification channels</h1></div>
<p>Add a channel: ${CHANNEL_TYPES.map((t, i) => html`${i ? " · " : ""}<a href="/channels/new?type=${t}">${TYPE_NAMES[t]}</a>`)}</p>
${channels.length === 0 ? html`<p class="empty">No channels yet: alerts go nowhere.</p>` : html`<table><caption class="sr-only">Notification channels</caption><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Enabled</th><th scope="col">Default</th><th scope="col">Actions</th></tr></thead><tbody>${channels.map((c) => {
      const a = c.attributes;
      return html`<tr><td data-label="Name">${a.name}</td><td data-label="Type">${TYPE_NAMES[a.channel_type]}</td><td data-label="Enabled">${a.is_enabled ? "yes" : "no"}</td><td data-label="Default">${a.default_for_new_monitors ? "yes" : "no"}</td><td class="row"><a href="/channels/${c.id}/edit">Edit</a>
<form class="inline" method="post" action="/channels/${c.id}/test">${csrfField(s.session)}<button type="submit">Send test</button></form><a href="/channels/${c.id}/delete">Delete</a></td></tr>`;
    })}</tbody></table>`}`;
    return page(s, "Notification channels", body);
  }

  async function form(s: Signed, mode: Mode, type: ChannelType, values: Record<string, unknown>, errors: Errors, target?: ChannelItem, status = 200) {
    const fields = channelFields(type);
    const stored = target ? await storedChannelSecrets(app, s.actor, target.id) : new Set<string>();
    const note = (f: FieldSpec) => {
      if (f.widget === "password" || f.widget === "secret-text") return stored.has(f.name) ? "stored; leave empty to keep it" : "write-only: stored encrypted, never shown again";
      // the path and query of a webhook URL often hold its credential, so they are never shown
      if (f.name === "url" && mode === "edit" && typeof values.url === "string" && values.url.endsWith("***")) return "shown without its path and query; leave it as is to keep the stored URL";
      return undefined;
    };
    const title = mode === "create" ? `New ${TYPE_NAMES[type]} channel` : `Edit ${target!.attributes.name}`;
    const body = html`<h1>${title}</h1>${errorSummary(errors, fields)}
<form method="post" action="${mode === "create" ? "/channels" : `/channels/${target!.id}`}" novalidate>${csrfField(s.session)}${mode === "create" ? html`<input type="hidden" name="channel_type" value="${type}">` : ""}
<div class="panel">${fields.map((f) => renderField(f, values[f.name], errors, note(f)))}</div>
<div class="row"><button class="primary" type="submit">${mode === "create" ? "Create channel" : "Save changes"}</button><a class="btn" href="/channels">Cancel</a></div></form>`;
    return page(s, title, body, status);
  }

  return new Elysia({ name: "web-channels" })
    .onParse(leaveBodyUnread)
    .get("/channels", route((s) => list(s)))
    .get(
      "/channels/new",
      route(async (s) => {
        const type = s.url.searchParams.get("type");
        if (!isChannelType(type)) return redirect("/channels");
        return form(s, "create", type, { is_enabled: true, default_for_new_monitors: false, smtp_security: "starttls" } satisfies Partial<ChannelAttributes>, {});
      }),
    )
    .post(
      "/channels",
      route(async (s) => {
        const type = s.form.get("channel_type");
        if (!isChannelType(type)) return redirect("/channels");
        const attrs = { channel_type: type, ...formToAttributes(channelFields(type), s.form, "create") };
        try {
          await createChannel(app, s.actor, attrs);
          return redirect("/channels?msg=created");
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return form(s, "create", type, attrs, details, undefined, 422);
        }
      }),
    )
    .get(
      "/channels/:id/edit",
      route(async (s) => {
        const c = await getChannel(app, s.actor, channelId(s));
        return form(s, "edit", c.attributes.channel_type, c.attributes, {}, c);
      }),
    )
    .post(
      "/channels/:id",
      route(async (s) => {
        const c = await getChannel(app, s.actor, channelId(s));
        const type = c.attributes.channel_type;
        const attrs = formToAttributes(channelFields(type), s.form, "edit");
        try {
          await updateChannel(app, s.actor, c.id, attrs);
          return redirect("/channels?msg=saved");
        } catch (e) {
          const details = validationDetails(e);
          if (!details) throw e;
          return form(s, "edit", type, { ...c.attributes, ...attrs }, details, c, 422);
        }
      }),
    )
    .post(
      "/channels/:id/test",
      route(async (s) => {
        const c = await getChannel(app, s.actor, channelId(s));
        const r = await sendTestNotification(app, s.actor, c.id);
        const answer = r.statusCode ? ` (answer ${r.statusCode})` : "";
        // the answer is shown on the list the browser is sent to: a reload there sends nothing
        await putFlash(app, s.session.id_hash, "channels", r.ok ? { tone: "ok", text: `Test sent to ${c.attributes.name}${answer}.` } : { tone: "error", text: `Test to ${c.attributes.name} failed${answer}: ${r.error ?? "no detail"}` });
        return redirect("/channels");
      }),
    )
    .get(
      "/channels/:id/delete",
      route(async (s) => {
        const c = await getChannel(app, s.actor, channelId(s));
        return page(s, "Delete channel", confirmDelete({ what: "channel", name: c.attributes.name, action: `/channels/${c.id}/delete`, back: "/channels", session: s.session, consequence: "Monitors stop alerting through it." }));
      }),
    )
    .post(
      "/channels/:id/delete",
      route(async (s) => {
        await deleteChannel(app, s.actor, channelId(s));
        return redirect("/channels?msg=deleted");
      }),
    );
}
