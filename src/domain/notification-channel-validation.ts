/**
 * Validation of notification channel writes, the same rules as monitors (docs/api-rules.md "Writes:
 * flat or JSON:API", docs/notifications.md "Channel attributes"): unknown attributes and attributes
 * of another channel type are a 422, read-only ones are ignored, `channel_type` cannot change, every
 * problem is collected per attribute in one pass, and secret values are never echoed.
 */
import { Value } from "@sinclair/typebox/value";
import {
  CHANNEL_ATTRIBUTE_NAMES,
  CHANNEL_DEFAULTS,
  CHANNEL_FIELDS,
  CHANNEL_TYPES,
  channelFieldApplies,
  READ_ONLY_CHANNEL_ATTRIBUTES,
  type ChannelAttributeName,
  type ChannelField,
  type ChannelType,
} from "./notification-channel-schema.ts";
import { newDetails } from "./details.ts";
import { holdsNul, NUL_MESSAGE } from "./text-rules.ts";

export type Details = Record<string, string[]>;
export type ChannelChanges = Partial<Record<ChannelAttributeName, unknown>>;

/** The stored channel a PATCH applies to. */
export interface ExistingChannel {
  type: ChannelType;
  /** which write-only secrets are stored */
  secrets: ReadonlySet<string>;
}

export interface ChannelWriteResult {
  type: ChannelType | null;
  /** normalised values to store; secrets are plaintext, null clears one */
  changes: ChannelChanges;
  details: Details;
}

const ADDRESS = /^[^\s@<>,;]+@[^\s@<>,;]+$/;
/** A Matrix room id: `!` then an opaque local part, `:` and the server name. */
const MATRIX_ROOM_ID = /^![^\s:/]+:[A-Za-z0-9.[\]:-]+$/;
const HOMEASSISTANT_SERVICE = /^[a-z0-9_]+\.[a-z0-9_]+$/;
/** E.164: a plus, then up to 15 digits not starting with 0. */
const PHONE_NUMBER = /^\+[1-9]\d{5,14}$/;
const SIGNAL_GROUP = /^group\.[A-Za-z0-9+/=_-]{4,}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** An Apprise URL: a service scheme and something after `://`, no spaces. */
const APPRISE_URL = /^[a-z][a-z0-9+.-]{0,31}:\/\/\S+$/i;
/** How many Apprise URLs one channel may hold. */
export const APPRISE_MAX_URLS = 50;

/** The Apprise URLs of an `apprise_urls` value: one per non-empty line. */
export function appriseUrlList(text: string): string[] {
  return text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
}

/** `a@x.org, b@y.org` → the addresses, or null when one is not an address. */
export function parseAddressList(text: string): string[] | null {
  const parts = text.split(",").map((p) => p.trim()).filter(Boolean);
  if (parts.length === 0 || parts.some((p) => !ADDRESS.test(p))) return null;
  return parts;
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "";
  } catch {
    return false;
  }
}

function valueProblems(name: ChannelAttributeName, value: unknown): string[] {
  if (value === null) return [];
  switch (name) {
    case "name":
      return (value as string).trim() === "" ? ["must not be blank"] : [];
    case "url":
      return isHttpUrl((value as string).trim()) ? [] : [CHANNEL_FIELDS.url.message];
    case "email_to":
      return parseAddressList(value as string) ? [] : [CHANNEL_FIELDS.email_to.message];
    case "smtp_from": {
      const v = (value as string).trim();
      const m = /<([^<>]+)>\s*$/.exec(v);
      return ADDRESS.test(m ? m[1]!.trim() : v) ? [] : [CHANNEL_FIELDS.smtp_from.message];
    }
    case "smtp_host":
      return /^[A-Za-z0-9._:[\]-]+$/.test((value as string).trim()) ? [] : [CHANNEL_FIELDS.smtp_host.message];
    case "telegram_chat_id":
      return /^(-?\d{1,20}|@[A-Za-z0-9_]{1,64})$/.test(String(value).trim()) ? [] : [CHANNEL_FIELDS.telegram_chat_id.message];
    case "matrix_room_id":
      return MATRIX_ROOM_ID.test((value as string).trim()) ? [] : [(value as string).trim().startsWith("#") ? "must be the room's id (!AbCdEf:example.org), not an alias: room settings, Advanced, show it" : CHANNEL_FIELDS.matrix_room_id.message];
    case "homeassistant_service":
      return HOMEASSISTANT_SERVICE.test((value as string).trim()) ? [] : [CHANNEL_FIELDS.homeassistant_service.message];
    case "signal_number":
      return PHONE_NUMBER.test((value as string).trim()) ? [] : [CHANNEL_FIELDS.signal_number.message];
    case "signal_recipients": {
      const bad = (value as string[]).map((r) => r.trim()).filter((r) => !PHONE_NUMBER.test(r) && !SIGNAL_GROUP.test(r) && !UUID.test(r));
      return bad.length ? [`${CHANNEL_FIELDS.signal_recipients.message}; not one: ${bad.slice(0, 3).join(", ")}`] : [];
    }
    case "apprise_urls": {
      // the URLs are secret: a bad one is named by its line number, never quoted
      const urls = appriseUrlList(value as string);
      if (urls.length === 0) return ["must hold at least one Apprise URL, one per line"];
      if (urls.length > APPRISE_MAX_URLS) return [`must hold at most ${APPRISE_MAX_URLS} Apprise URLs`];
      const bad = urls.flatMap((u, i) => (APPRISE_URL.test(u) ? [] : [i + 1]));
      return bad.length ? [`must hold one Apprise URL (service://…) per line; not one: line${bad.length > 1 ? "s" : ""} ${bad.join(", ")} of the non-empty lines`] : [];
    }
    default:
      return [];
  }
}

function normalise(name: ChannelAttributeName, value: unknown): unknown {
  if (name === "telegram_chat_id" && value !== null) return String(value).trim();
  if (name === "signal_recipients") return (value as string[]).map((r) => r.trim());
  if (name === "apprise_urls" && typeof value === "string") return appriseUrlList(value).join("\n");
  if (typeof value !== "string") return value;
  const field = CHANNEL_FIELDS[name] as ChannelField;
  return field.access === "wo" ? value : value.trim();
}

/**
 * Validates a create (no `existing`) or a partial update, returning the normalised changes and the
 * 422 details.
 */
export function validateChannelWrite(input: Record<string, unknown>, existing?: ExistingChannel): ChannelWriteResult {
  const details: Details = newDetails();
  const add = (attr: string, message: string) => void (details[attr] ??= []).push(message);
  const changes: ChannelChanges = {};

  let type: ChannelType | null;
  if (existing) {
    type = existing.type;
    if ("channel_type" in input && input.channel_type !== existing.type) add("channel_type", `cannot be changed after creation (this channel is ${existing.type}); create a new channel instead`);
  } else if (!("channel_type" in input) || input.channel_type === null) {
    type = null;
    add("channel_type", `is required: one of ${CHANNEL_TYPES.join(", ")}`);
  } else if (!(CHANNEL_TYPES as readonly unknown[]).includes(input.channel_type)) {
    type = null;
    add("channel_type", CHANNEL_FIELDS.channel_type.message);
  } else {
    type = input.channel_type as ChannelType;
    changes.channel_type = type;
  }

  for (const [key, value] of Object.entries(input)) {
    if (READ_ONLY_CHANNEL_ATTRIBUTES.includes(key) || key === "channel_type") continue;
    if (!Object.hasOwn(CHANNEL_FIELDS, key)) { // `in` would accept inherited names such as toString
      add(key, "is not a notification channel attribute; see the notification_channel fields in /api/v1/openapi.json");
      continue;
    }
    const name = key as ChannelAttributeName;
    const field = CHANNEL_FIELDS[name] as ChannelField;
    if (type && !channelFieldApplies(name, type)) {
      add(name, `does not apply to ${type} channels; it is for ${(field.types as readonly string[]).join(", ")} channels`);
      continue;
    }
    if (holdsNul(value)) {
      add(name, NUL_MESSAGE);
      continue;
    }
    const problems = Value.Check(field.schema, value) ? valueProblems(name, value) : [field.message];
    if (problems.length) for (const p of problems) add(name, p);
    else changes[name] = normalise(name, value);
  }

  if (type) {
    for (const name of CHANNEL_ATTRIBUTE_NAMES) {
      const field = CHANNEL_FIELDS[name] as ChannelField;
      const required = field.requiredFor?.includes(type) ?? false;
      if (!existing) {
        if (required && (!(name in input) || input[name] === null) && !details[name]) details[name] = [requiredMessage(field)];
        if (name in CHANNEL_DEFAULTS && !(name in changes) && channelFieldApplies(name, type)) changes[name] = CHANNEL_DEFAULTS[name];
      } else if (required && name in changes && changes[name] === null) {
        add(name, `cannot be removed from a ${type} channel; it ${requiredMessage(field)}`);
        delete changes[name];
      }
    }
  }
  return { type, changes, details };
}

function requiredMessage(field: ChannelField): string {
  return field.access === "wo" ? "is required (write-only: it is stored encrypted and never returned)" : "is required";
}
