import { Type } from "@sinclair/typebox";
import type { AppContext } from "../context.ts";
import { channelAttributesSchema, type ChannelType } from "../domain/notification-channel-schema.ts";
import { validateChannelWrite, type ChannelWriteResult } from "../domain/notification-channel-validation.ts";
import { sendTestAlert } from "../notify/test-send.ts";
import { isMaskOf } from "../domain/url-mask.ts";
import { channelSettings, deleteChannel, findChannel, insertChannel, listChannels, storedSecretNames, updateChannel } from "../store/notification-channels.ts";
import type { NotificationChannelRow } from "../store/tables.ts";
import { list, resource, single } from "./envelope.ts";
import { notFound, validationError } from "../http/errors.ts";
import { pathId } from "../http/path-id.ts";
import { attributesOf } from "../services/write-input.ts";
import { channelPrivateTargetDetails } from "../services/private-targets.ts";
import { channelAttributes } from "./notification-channel-mapper.ts";
import { QueryReader } from "./query.ts";
import type { RouteDef } from "./route.ts";
import { deletedResponse, listResponse, MetaSchema, PageQuery, singleResponse, writeBody } from "./schemas.ts";

/** decisions.md "Notification channels (extension)": same envelopes, validation and tenancy as monitors. */
const BASE = "/api/v1/notification-channels";
const TAG = "Notification channels";
const TYPE = "notification_channel";
const Attributes = channelAttributesSchema(false);
const WriteBody = writeBody(TYPE, channelAttributesSchema(true));

const TestResponse = Type.Object({
  data: Type.Object({
    id: Type.String(),
    type: Type.Literal(TYPE),
    attributes: Type.Object({
      ok: Type.Boolean(),
      status_code: Type.Union([Type.Integer(), Type.Null()], { description: "HTTP status, or the SMTP reply code" }),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
  }),
  meta: MetaSchema,
});

const present = (row: NotificationChannelRow, status = 200) => single(TYPE, row.id, channelAttributes(row), status);

function refuse(v: ChannelWriteResult): void {
  if (Object.keys(v.details).length) throw validationError(v.details);
}

/** The account's private-target rule for the receiver, at write time (private-targets.ts). */
async function checkPrivateReceiver(ctx: AppContext, accountId: number, v: ChannelWriteResult): Promise<void> {
  if (Object.keys(v.details).length || !(await ctx.privateTargets.blocksNow(accountId))) return;
  const found = await channelPrivateTargetDetails(v.changes as Record<string, unknown>);
  for (const [attr, messages] of Object.entries(found)) (v.details[attr] ??= []).push(...messages);
}

async function owned(ctx: AppContext, accountId: number, params: Record<string, string>): Promise<NotificationChannelRow> {
  const row = await findChannel(ctx.db, accountId, pathId(params, "notification channel"));
  if (!row) throw notFound("notification channel");
  return row;
}

export const notificationChannelRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "monitors:read",
    summary: "List notification channels (id ascending)",
    tag: TAG,
    query: Type.Object(PageQuery),
    response: listResponse(TYPE, Attributes),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      q.done();
      const { rows, total } = await listChannels(ctx.db, req.caller.accountId, { limit: perPage, offset });
      return list(rows.map((r) => resource(TYPE, r.id, channelAttributes(r))), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "monitors:write",
    summary: "Create a notification channel",
    tag: TAG,
    body: WriteBody,
    response: singleResponse(TYPE, Attributes),
    successStatus: 201,
    example: { name: "Ops webhook", channel_type: "webhook", url: "https://hooks.example.com/vigil", secret: "a-long-random-signing-key" },
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const v = validateChannelWrite(attributesOf(req.body, TYPE));
      await checkPrivateReceiver(ctx, accountId, v);
      refuse(v);
      const row = await insertChannel(ctx.db, ctx.secrets, { accountId, changes: v.changes, now: ctx.clock.now() });
      ctx.log.child("api.notification-channels").info("notification channel created", { request_id: req.requestId, account_id: accountId, channel_id: row.id, channel_type: row.channel_type });
      return present(row, 201);
    },
  },
  {
    method: "GET",
    path: `${BASE}/:id`,
    scope: "monitors:read",
    summary: "Get a notification channel",
    tag: TAG,
    response: singleResponse(TYPE, Attributes),
    async handler(req, ctx) {
      return present(await owned(ctx, req.caller.accountId, req.params));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Update a notification channel (only the attributes sent change; null removes an optional secret)",
    tag: TAG,
    body: WriteBody,
    response: singleResponse(TYPE, Attributes),
    example: { is_enabled: false },
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const row = await owned(ctx, accountId, req.params);
      const attrs = attributesOf(req.body, TYPE, row.id);
      // the masked URL a client read and sends back unchanged keeps the stored one
      if (isMaskOf(attrs.url, channelSettings(row).url)) delete attrs.url;
      const v = validateChannelWrite(attrs, { type: row.channel_type as ChannelType, secrets: storedSecretNames(row, ctx.secrets) });
      await checkPrivateReceiver(ctx, accountId, v);
      refuse(v);
      const after = await updateChannel(ctx.db, ctx.secrets, { accountId, id: row.id, changes: v.changes, now: ctx.clock.now() });
      if (!after) throw notFound("notification channel");
      return present(after);
    },
  },
  {
    method: "DELETE",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Delete a notification channel, its monitor links and its queued alerts",
    tag: TAG,
    response: deletedResponse(TYPE),
    async handler(req, ctx) {
      const accountId = req.caller.accountId;
      const id = pathId(req.params, "notification channel");
      if (!(await deleteChannel(ctx.db, accountId, id))) throw notFound("notification channel");
      ctx.log.child("api.notification-channels").info("notification channel deleted", { request_id: req.requestId, account_id: accountId, channel_id: id });
      return single(TYPE, id, { deleted: true });
    },
  },
  {
    method: "POST",
    path: `${BASE}/:id/test`,
    scope: "monitors:write",
    summary: "Send a sample alert (event \"test\") now and return the attempt's outcome",
    tag: TAG,
    response: TestResponse,
    async handler(req, ctx) {
      const row = await owned(ctx, req.caller.accountId, req.params);
      const outcome = await sendTestAlert(ctx, row);
      ctx.log.child("api.notification-channels").info("test notification sent", { request_id: req.requestId, channel_id: row.id, ok: outcome.ok, status_code: outcome.statusCode, error: outcome.error });
      return single(TYPE, row.id, { ok: outcome.ok, status_code: outcome.statusCode, error: outcome.error });
    },
  },
];
