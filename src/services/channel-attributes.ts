import { channelResponseAttributes, CHANNEL_SETTING_ATTRIBUTES, type ChannelAttributes, type ChannelType } from "../domain/notification-channel-schema.ts";
import { maskedUrl } from "../domain/url-mask.ts";
import { toIso } from "../lib/dates.ts";
import { channelSettings } from "../store/notification-channels.ts";
import type { NotificationChannelRow } from "../store/tables.ts";

/**
 * The one mapping from a stored channel to its API attributes: common fields, then the settings
 * of its type. Write-only attributes are not in the list at all, and secrets_enc is never opened
 * here, so a secret cannot leak through a response; `url` shows its scheme and host only.
 */
export function channelAttributes(row: NotificationChannelRow): ChannelAttributes {
  const settings = channelSettings(row);
  const out: Record<string, unknown> = {};
  for (const name of channelResponseAttributes(row.channel_type as ChannelType)) {
    if (name === "is_enabled" || name === "default_for_new_monitors") out[name] = row[name] === 1;
    else if (name === "created_at" || name === "updated_at") out[name] = toIso(row[name]);
    else if (name === "name" || name === "channel_type" || name === "external_id") out[name] = row[name];
    else if (name === "url") out[name] = typeof settings.url === "string" ? maskedUrl(settings.url) : null;
    else if ((CHANNEL_SETTING_ATTRIBUTES as string[]).includes(name)) out[name] = settings[name] ?? null;
  }
  return out as ChannelAttributes;
}
