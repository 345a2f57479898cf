import type { AppContext } from "../context.ts";
import type { ChannelAttributes, ChannelType } from "../domain/notification-channel-schema.ts";
import { validateChannelWrite, type ChannelWriteResult } from "../domain/notification-channel-validation.ts";
import { isMaskOf } from "../domain/url-mask.ts";
import { notFound, validationError } from "../http/errors.ts";
import { sendTestAlert } from "../notify/test-send.ts";
import { externalIdTaken, isExternalIdConflict } from "../store/external-ids.ts";
import * as store from "../store/notification-channels.ts";
import type { NotificationChannelRow } from "../store/tables.ts";
import type { Actor } from "./actor.ts";
import { channelAttributes } from "./channel-attributes.ts";
import type { Item, Listed, PageWindow } from "./items.ts";
import { channelPrivateTargetDetails } from "./private-targets.ts";
import { attributesOf, type WriteInput } from "./write-input.ts";

/**
 * Notification channels, for the API and the dashboard alike: the same envelopes, validation and
 * tenancy as monitors (README "Alerts and notification channels"). Secrets are written, never read
 * back: callers learn only which ones are stored.
 */
export type ChannelItem = Item<ChannelAttributes>;

/** The outcome of a sample alert sent now. */
export interface TestSendOutcome {
  ok: boolean;
  /** HTTP status, or the SMTP reply code */
  statusCode: number | null;
  error: string | null;
}

const logOf = (ctx: AppContext) => ctx.log.child("api.notification-channels");
const present = (row: NotificationChannelRow): ChannelItem => ({ id: row.id, attributes: channelAttributes(row) });

function refuse(v: ChannelWriteResult): void {
  if (Object.keys(v.details).length) throw validationError(v.details);
}

/** external_id is unique among the account's channels (README "Configuration as code"). */
async function checkExternalId(ctx: AppContext, accountId: number, v: ChannelWriteResult, exceptId?: number): Promise<void> {
  const x = (v.changes as Record<string, unknown>).external_id;
  if (typeof x === "string" && !v.details.external_id && (await externalIdTaken(ctx.db, "notification_channels", accountId, x, exceptId))) v.details.external_id = ["has already been taken"];
}

/** Another write took the external_id after the check: the same 422. */
function externalIdRace(err: unknown): never {
  if (isExternalIdConflict(err)) throw validationError({ external_id: ["has already been taken"] });
  throw err;
}

/** The account's private-target rule for the receiver, at write time (private-targets.ts). */
async function checkPrivateReceiver(ctx: AppContext, accountId: number, v: ChannelWriteResult): Promise<void> {
  if (Object.keys(v.details).length || !v.type || !(await ctx.privateTargets.blocksNow(accountId))) return;
  const found = await channelPrivateTargetDetails(v.type, v.changes as Record<string, unknown>);
  for (const [attr, messages] of Object.entries(found)) (v.details[attr] ??= []).push(...messages);
}

async function owned(ctx: AppContext, actor: Actor, id: number): Promise<NotificationChannelRow> {
  const row = await store.findChannel(ctx.db, actor.accountId, id);
  if (!row) throw notFound("notification channel");
  return row;
}

/** A page of the account's channels, id ascending. */
export async function listChannels(ctx: AppContext, actor: Actor, window: PageWindow, filter: { externalId?: string } = {}): Promise<Listed<ChannelAttributes>> {
  const { rows, total } = await store.listChannels(ctx.db, actor.accountId, window, filter);
  return { items: rows.map(present), total };
}

export async function getChannel(ctx: AppContext, actor: Actor, id: number): Promise<ChannelItem> {
  return present(await owned(ctx, actor, id));
}

export async function createChannel(ctx: AppContext, actor: Actor, input: WriteInput | undefined): Promise<ChannelItem> {
  const { accountId } = actor;
  const v = validateChannelWrite(attributesOf(input, "notification_channel"));
  await checkExternalId(ctx, accountId, v);
  await checkPrivateReceiver(ctx, accountId, v);
  refuse(v);
  const row = await store.insertChannel(ctx.db, ctx.secrets, { accountId, changes: v.changes, now: ctx.clock.now() }).catch(externalIdRace);
  logOf(ctx).info("notification channel created", { request_id: actor.requestId, account_id: accountId, channel_id: row.id, channel_type: row.channel_type });
  return present(row);
}

/** Changes only the attributes given; null removes an optional secret. */
export async function updateChannel(ctx: AppContext, actor: Actor, id: number, input: WriteInput | undefined): Promise<ChannelItem> {
  const { accountId } = actor;
  const row = await owned(ctx, actor, id);
  const attrs = attributesOf(input, "notification_channel", row.id);
  // the masked URL a client read and sends back unchanged keeps the stored one
  if (isMaskOf(attrs.url, store.channelSettings(row).url)) delete attrs.url;
  const v = validateChannelWrite(attrs, { type: row.channel_type as ChannelType, secrets: store.storedSecretNames(row, ctx.secrets) });
  await checkExternalId(ctx, accountId, v, row.id);
  await checkPrivateReceiver(ctx, accountId, v);
  refuse(v);
  const after = await store.updateChannel(ctx.db, ctx.secrets, { accountId, id: row.id, changes: v.changes, now: ctx.clock.now() }).catch(externalIdRace);
  if (!after) throw notFound("notification channel");
  return present(after);
}

/** Deletes the channel, its monitor links and its queued alerts. */
export async function deleteChannel(ctx: AppContext, actor: Actor, id: number): Promise<void> {
  const { accountId } = actor;
  if (!(await store.deleteChannel(ctx.db, accountId, id))) throw notFound("notification channel");
  logOf(ctx).info("notification channel deleted", { request_id: actor.requestId, account_id: accountId, channel_id: id });
}

/** Sends a sample alert (event "test") now and says how the attempt went. */
export async function sendTestNotification(ctx: AppContext, actor: Actor, id: number): Promise<TestSendOutcome> {
  const row = await owned(ctx, actor, id);
  const outcome = await sendTestAlert(ctx, row);
  logOf(ctx).info("test notification sent", { request_id: actor.requestId, channel_id: row.id, ok: outcome.ok, status_code: outcome.statusCode, error: outcome.error });
  return { ok: outcome.ok, statusCode: outcome.statusCode, error: outcome.error };
}

/** Which write-only secrets the channel holds (never their values): the edit form says "stored". */
export async function storedChannelSecrets(ctx: AppContext, actor: Actor, id: number): Promise<Set<string>> {
  return store.storedSecretNames(await owned(ctx, actor, id), ctx.secrets);
}
