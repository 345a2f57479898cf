/**
 * The notification channel's attributes (docs/notifications.md "Channel attributes"): one
 * catalogue says, per attribute, its TypeBox schema, which channel types it belongs to, whether it
 * is read-only or write-only, and the message a client gets when a value does not fit. The OpenAPI
 * document, the validator and the response mapper all read it.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { SMTP_SECURITY, type SmtpSecurity } from "./monitor.ts";
import { enumOf, EXTERNAL_ID_MESSAGE, EXTERNAL_ID_SCHEMA, notNull, nullable } from "./schema-parts.ts";

export const CHANNEL_TYPES = [
  "webhook", "slack", "discord", "teams", "telegram", "ntfy", "gotify", "pushover", "email",
  "matrix", "mattermost", "rocketchat", "google_chat", "pagerduty", "opsgenie", "homeassistant", "signal", "apprise",
] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

type Access = "rw" | "ro" | "wo";
export interface ChannelField<S extends TSchema = TSchema> {
  schema: S;
  /** channel types the attribute belongs to; "all" for the common fields */
  types: "all" | readonly ChannelType[];
  access: Access;
  /** required on create for these types */
  requiredFor?: readonly ChannelType[];
  /** shown when the value does not match `schema` */
  message: string;
}

const oneOf = (values: readonly string[]) => `must be one of ${values.join(", ")}`;
const BOOL = "must be true or false";
const TEXT = (max: number) => `must be a string of 1 to ${max} characters`;

/**
 * Types that send to a URL the user gives; telegram, pushover, pagerduty and opsgenie take `url`
 * only to replace the public API, and apprise to name an Apprise API server instead of the command.
 */
const URL_REQUIRED: readonly ChannelType[] = ["webhook", "slack", "discord", "teams", "ntfy", "gotify", "matrix", "mattermost", "rocketchat", "google_chat", "homeassistant", "signal"];
const URL_TYPES: readonly ChannelType[] = [...URL_REQUIRED, "telegram", "pushover", "pagerduty", "opsgenie", "apprise"];
const EMAIL: readonly ChannelType[] = ["email"];
/** Longer than the other secrets: several Apprise URLs, each with its credentials. */
const APPRISE_URLS_MAX = 16_384;

const f = <S extends TSchema, T extends ChannelField["types"]>(schema: S, types: T, message: string, extra: Partial<ChannelField> = {}) =>
  ({ schema, types, access: "rw", message, ...extra }) as ChannelField<S> & { types: T };
const ro = <S extends TSchema>(schema: S) => ({ schema, types: "all", access: "ro", message: "is read-only" }) as ChannelField<S> & { types: "all" };
const secret = (types: readonly ChannelType[], description: string, requiredFor?: readonly ChannelType[], maxLength = 4096) =>
  f(nullable(Type.String({ minLength: 1, maxLength, writeOnly: true }), description), types, `must be a string of 1 to ${maxLength} characters, or null to remove it`, {
    access: "wo",
    requiredFor,
  }) as ChannelField & { access: "wo" };

/** Every attribute, in the order responses list them. */
export const CHANNEL_FIELDS = {
  name: f(Type.String({ minLength: 1, maxLength: 200 }), "all", TEXT(200), { requiredFor: CHANNEL_TYPES }),
  external_id: f(EXTERNAL_ID_SCHEMA, "all", EXTERNAL_ID_MESSAGE),
  channel_type: f(enumOf(CHANNEL_TYPES, { description: "cannot change after creation" }), "all", oneOf(CHANNEL_TYPES)),
  is_enabled: f(Type.Boolean({ default: true }), "all", BOOL),
  default_for_new_monitors: f(Type.Boolean({ default: false, description: "linked to every monitor created later without notification_channel_ids" }), "all", BOOL),
  url: f(
    nullable(
      Type.String({ minLength: 1, maxLength: 2048 }),
      "where alerts are sent (webhook, slack, discord, teams, ntfy, gotify, mattermost, rocketchat, google_chat: the webhook; matrix: the homeserver; homeassistant: the instance; signal: a signal-cli REST API); for telegram, pushover and opsgenie a replacement for the public API base, for pagerduty for the public events endpoint (null: the public service); for apprise an Apprise API server (null: the apprise command on the Vigil host). Read back as scheme and host only, https://hooks.example.com/*** (the path often holds a credential); writing that value back keeps the stored URL.",
    ),
    URL_TYPES,
    "must be an absolute http(s) URL of at most 2048 characters",
    { requiredFor: URL_REQUIRED },
  ),
  secret: secret(["webhook"], "HMAC-SHA256 signing key for X-Vigil-Signature; write-only"),
  telegram_chat_id: f(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Integer()]), ["telegram"], "must be a chat id (integer) or @channelname", { requiredFor: ["telegram"] }),
  telegram_bot_token: secret(["telegram"], "bot token from @BotFather; write-only", ["telegram"]),
  gotify_token: secret(["gotify"], "application token; write-only", ["gotify"]),
  pushover_token: secret(["pushover"], "application API token; write-only", ["pushover"]),
  pushover_user: secret(["pushover"], "user or group key; write-only", ["pushover"]),
  email_to: f(Type.String({ minLength: 3, maxLength: 1000 }), EMAIL, "must be one or more email addresses separated by commas", { requiredFor: EMAIL }),
  smtp_host: f(Type.String({ minLength: 1, maxLength: 253 }), EMAIL, "must be a host name or IP address", { requiredFor: EMAIL }),
  smtp_port: f(nullable(Type.Integer({ minimum: 1, maximum: 65535 }), "null: 25 for none, 587 for starttls, 465 for tls"), EMAIL, "must be an integer from 1 to 65535, or null for the default of smtp_security"),
  smtp_security: f(enumOf(SMTP_SECURITY, { default: "starttls" }), EMAIL, oneOf(SMTP_SECURITY)),
  smtp_user: f(nullable(Type.String({ minLength: 1, maxLength: 320 })), EMAIL, "must be a string of 1 to 320 characters, or null for no authentication"),
  smtp_pass: secret(EMAIL, "SMTP password; write-only"),
  smtp_from: f(Type.String({ minLength: 3, maxLength: 320 }), EMAIL, "must be an email address, optionally with a display name: Vigil <vigil@example.com>", { requiredFor: EMAIL }),
  matrix_room_id: f(Type.String({ minLength: 3, maxLength: 255, description: "the room's id, !opaque:server (room settings, Advanced)" }), ["matrix"], "must be a room id such as !AbCdEf:example.org", { requiredFor: ["matrix"] }),
  matrix_access_token: secret(["matrix"], "access token of the account that posts (it must have joined the room); write-only", ["matrix"]),
  pagerduty_routing_key: secret(["pagerduty"], "integration (routing) key of an Events API v2 integration; write-only", ["pagerduty"]),
  opsgenie_api_key: secret(["opsgenie"], "API key of an API integration; write-only", ["opsgenie"]),
  homeassistant_token: secret(["homeassistant"], "long-lived access token; write-only", ["homeassistant"]),
  homeassistant_service: f(Type.String({ minLength: 3, maxLength: 255, description: "the service called, domain.service, such as notify.mobile_app_pixel" }), ["homeassistant"], "must be a service such as notify.mobile_app_pixel (domain.service, lower case)", { requiredFor: ["homeassistant"] }),
  signal_number: f(Type.String({ minLength: 2, maxLength: 32, description: "the number registered with signal-cli that sends, +4915112345678" }), ["signal"], "must be a phone number in international format, such as +4915112345678", { requiredFor: ["signal"] }),
  signal_recipients: f(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50, description: "phone numbers (+4915112345678), group ids (group.…) or account UUIDs" }), ["signal"], "must be a list of 1 to 50 recipients: phone numbers (+4915112345678), group ids (group.…) or account UUIDs", { requiredFor: ["signal"] }),
  apprise_urls: secret(["apprise"], "Apprise URLs, one per line (such as tgram://bottoken/chatid); write-only", ["apprise"], APPRISE_URLS_MAX),
  created_at: ro(Type.String({ format: "date-time" })),
  updated_at: ro(Type.String({ format: "date-time" })),
} satisfies Record<string, ChannelField>;

export type ChannelAttributeName = keyof typeof CHANNEL_FIELDS;
export const CHANNEL_ATTRIBUTE_NAMES = Object.keys(CHANNEL_FIELDS) as ChannelAttributeName[];
export const READ_ONLY_CHANNEL_ATTRIBUTES: readonly string[] = ["id", "created_at", "updated_at"];
export const CHANNEL_SECRET_ATTRIBUTES = CHANNEL_ATTRIBUTE_NAMES.filter((n) => CHANNEL_FIELDS[n].access === "wo");
type FieldOf<K extends ChannelAttributeName> = (typeof CHANNEL_FIELDS)[K];
type SecretName = { [K in ChannelAttributeName]: FieldOf<K> extends { access: "wo" } ? K : never }[ChannelAttributeName];
type CommonName = { [K in ChannelAttributeName]: FieldOf<K> extends { types: "all" } ? K : never }[ChannelAttributeName];

/**
 * A channel as responses show it: the common attributes always, its type's settings, the
 * write-only secrets never (`url` masked to its scheme and host).
 */
export type ChannelAttributes = { [K in CommonName]: Static<FieldOf<K>["schema"]> } & { [K in Exclude<ChannelAttributeName, CommonName | SecretName>]?: Static<FieldOf<K>["schema"]> };
/** Settings kept in config_json: per-type, readable, not secret. */
export const CHANNEL_SETTING_ATTRIBUTES = CHANNEL_ATTRIBUTE_NAMES.filter((n) => CHANNEL_FIELDS[n].types !== "all" && CHANNEL_FIELDS[n].access === "rw");

export function channelFieldApplies(name: ChannelAttributeName, type: ChannelType): boolean {
  const t = CHANNEL_FIELDS[name].types;
  return t === "all" || (t as readonly string[]).includes(type);
}

/** Attributes a response shows for `type`, in catalogue order; write-only ones never. */
export function channelResponseAttributes(type: ChannelType): ChannelAttributeName[] {
  return CHANNEL_ATTRIBUTE_NAMES.filter((n) => CHANNEL_FIELDS[n].access !== "wo" && channelFieldApplies(n, type));
}

/** Defaults filled in on create. */
export const CHANNEL_DEFAULTS: Partial<Record<ChannelAttributeName, unknown>> = {
  is_enabled: true,
  default_for_new_monitors: false,
  url: null,
  smtp_port: null,
  smtp_security: "starttls",
  smtp_user: null,
};

/** The default SMTP port of each security mode. */
export const SMTP_DEFAULT_PORT: Record<SmtpSecurity, number> = { none: 25, starttls: 587, tls: 465 };

/** The writable attributes of a PATCH, every one optional: only those sent change. */
export function channelUpdateSchema(): TSchema {
  const props: Record<string, TSchema> = {};
  for (const n of CHANNEL_ATTRIBUTE_NAMES) if (CHANNEL_FIELDS[n].access !== "ro") props[n] = Type.Optional(CHANNEL_FIELDS[n].schema);
  return Type.Object(props, { additionalProperties: false });
}

const typeLiteral = (type: ChannelType) => Type.Literal(type, { description: CHANNEL_FIELDS.channel_type.schema.description });

/** What a POST of a `type` channel takes: its type's attributes, name, channel_type and its requiredFor ones required. */
export function channelCreateSchema(type: ChannelType): TSchema {
  const props: Record<string, TSchema> = {};
  for (const n of CHANNEL_ATTRIBUTE_NAMES) {
    const field = CHANNEL_FIELDS[n] as ChannelField;
    if (field.access === "ro" || !channelFieldApplies(n, type)) continue;
    const required = n === "channel_type" || field.requiredFor?.includes(type);
    props[n] = n === "channel_type" ? typeLiteral(type) : required ? notNull(field.schema) : Type.Optional(field.schema);
  }
  return Type.Object(props, { additionalProperties: false, description: `a new ${type} channel` });
}

/** A `type` channel as responses show it: every attribute of its type, always there (null when unset); secrets never. */
export function channelResponseSchema(type: ChannelType): TSchema {
  return Type.Object(Object.fromEntries(channelResponseAttributes(type).map((n) => [n, n === "channel_type" ? typeLiteral(type) : CHANNEL_FIELDS[n].schema])), { description: `a ${type} channel` });
}
