import { CHANNEL_SECRET_ATTRIBUTES, CHANNEL_SETTING_ATTRIBUTES, type ChannelType } from "../domain/notification-channel-schema.ts";
import { externalIdIs } from "./external-ids.ts";
import type { ChannelChanges } from "../domain/notification-channel-validation.ts";
import type { PageWindow } from "../domain/page-window.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import type { Db } from "./database.ts";
import type { NotificationChannelRow } from "./tables.ts";

/**
 * Notification channel repository. API functions are scoped to an account, so a handler cannot
 * touch another tenant's channel by forgetting a WHERE clause. Readable per-type settings live in
 * config_json; write-only ones are sealed together as one JSON object in secrets_enc.
 */
/** A channel as senders need it: settings and secrets merged, secrets in plaintext (memory only). */
export interface ChannelConfig {
  id: number;
  accountId: number;
  name: string;
  type: ChannelType;
  isEnabled: boolean;
  settings: Record<string, unknown>;
  /** the plaintext secrets, so error messages and logs can be scrubbed of them */
  secretValues: string[];
}

export async function listChannels(db: Db, accountId: number, page: PageWindow, f: { externalId?: string } = {}): Promise<{ rows: NotificationChannelRow[]; total: number }> {
  let query = db.selectFrom("notification_channels").where("account_id", "=", accountId);
  if (f.externalId !== undefined) query = query.where(externalIdIs(f.externalId));
  const { n } = await query.select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy("id", "asc").limit(page.limit).offset(page.offset).execute();
  return { rows, total: Number(n) };
}

export async function findChannel(db: Db, accountId: number, id: number): Promise<NotificationChannelRow | undefined> {
  return db.selectFrom("notification_channels").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

export function channelSettings(row: NotificationChannelRow): Record<string, unknown> {
  try {
    const v = JSON.parse(row.config_json);
    return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function openChannelSecrets(row: NotificationChannelRow, secrets: SecretBox): Record<string, string> {
  if (!row.secrets_enc) return {};
  return JSON.parse(secrets.open(row.secrets_enc)) as Record<string, string>;
}

/** Names of the secrets a channel holds, without opening them (for PATCH validation). */
export function storedSecretNames(row: NotificationChannelRow, secrets: SecretBox): Set<string> {
  return new Set(Object.keys(openChannelSecrets(row, secrets)));
}

export function toChannelConfig(row: NotificationChannelRow, secrets: SecretBox): ChannelConfig {
  const opened = openChannelSecrets(row, secrets);
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    type: row.channel_type as ChannelType,
    isEnabled: row.is_enabled === 1,
    settings: { ...channelSettings(row), ...opened },
    secretValues: Object.values(opened).filter((v) => typeof v === "string" && v.length > 0),
  };
}

/** Splits validated changes into the columns, merging with what `before` stored. */
function toColumns(changes: ChannelChanges, secrets: SecretBox, before?: NotificationChannelRow) {
  const settings = before ? channelSettings(before) : {};
  const sealed: Record<string, unknown> = before ? openChannelSecrets(before, secrets) : {};
  const cols: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if ((CHANNEL_SECRET_ATTRIBUTES as string[]).includes(key)) {
      if (value === null) delete sealed[key];
      else sealed[key] = value;
    } else if ((CHANNEL_SETTING_ATTRIBUTES as string[]).includes(key)) settings[key] = value;
    else if (key === "is_enabled" || key === "default_for_new_monitors") cols[key] = value ? 1 : 0;
    else if (key === "name" || key === "channel_type" || key === "external_id") cols[key] = value;
  }
  cols.config_json = JSON.stringify(settings);
  cols.secrets_enc = Object.keys(sealed).length ? secrets.seal(JSON.stringify(sealed)) : null;
  return cols;
}

export async function insertChannel(db: Db, secrets: SecretBox, c: { accountId: number; changes: ChannelChanges; now: number }): Promise<NotificationChannelRow> {
  const cols = toColumns(c.changes, secrets);
  return db
    .insertInto("notification_channels")
    .values({
      account_id: c.accountId,
      name: cols.name as string,
      channel_type: cols.channel_type as string,
      is_enabled: (cols.is_enabled as number) ?? 1,
      default_for_new_monitors: (cols.default_for_new_monitors as number) ?? 0,
      config_json: cols.config_json as string,
      secrets_enc: cols.secrets_enc as string | null,
      external_id: (cols.external_id as string | null | undefined) ?? null,
      created_at: c.now,
      updated_at: c.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateChannel(db: Db, secrets: SecretBox, u: { accountId: number; id: number; changes: ChannelChanges; now: number }): Promise<NotificationChannelRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const before = await findChannel(trx, u.accountId, u.id);
    if (!before) return undefined;
    if (Object.keys(u.changes).length === 0) return before;
    const cols = toColumns(u.changes, secrets, before);
    return trx
      .updateTable("notification_channels")
      .set({ ...cols, updated_at: u.now })
      .where("id", "=", u.id)
      .where("account_id", "=", u.accountId)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** Deletes a channel; its monitor links and queued alerts go with it (ON DELETE CASCADE). */
export async function deleteChannel(db: Db, accountId: number, id: number): Promise<boolean> {
  const r = await db.deleteFrom("notification_channels").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The account's channels flagged default_for_new_monitors, ascending. */
export async function defaultChannelIds(db: Db, accountId: number): Promise<number[]> {
  const rows = await db.selectFrom("notification_channels").select("id").where("account_id", "=", accountId).where("default_for_new_monitors", "=", 1).orderBy("id").execute();
  return rows.map((r) => r.id);
}

/**
 * Links every default_for_new_monitors channel of the account to a new monitor (a create without
 * `notification_channel_ids`). Existing links are kept; returns the linked ids.
 */
export async function linkDefaultChannels(db: Db, accountId: number, monitorId: number): Promise<number[]> {
  const ids = await defaultChannelIds(db, accountId);
  if (ids.length) {
    await db
      .insertInto("monitor_channels")
      .values(ids.map((channel_id) => ({ monitor_id: monitorId, channel_id })))
      .onConflict((oc) => oc.columns(["monitor_id", "channel_id"]).doNothing())
      .execute();
  }
  return ids;
}

/** Any channel by id, for the dispatcher (which works across accounts). */
export async function findChannelById(db: Db, id: number): Promise<NotificationChannelRow | undefined> {
  return db.selectFrom("notification_channels").selectAll().where("id", "=", id).executeTakeFirst();
}
