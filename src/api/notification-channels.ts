import { Type } from "@sinclair/typebox";
import { CHANNEL_TYPES, channelCreateSchema, channelResponseSchema, channelUpdateSchema } from "../domain/notification-channel-schema.ts";
import { pathId } from "../http/path-id.ts";
import { createChannel, deleteChannel, getChannel, listChannels, sendTestNotification, updateChannel, type ChannelItem } from "../services/notification-channels.ts";
import { list, resource, single } from "./envelope.ts";
import { QueryReader } from "./query.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { component, deletedResponse, ExternalIdQuery, listResponse, MetaSchema, oneOf, PageQuery, schemaName, singleResponse, writeBody } from "./schemas.ts";

/** Same envelopes, validation and tenancy as monitors (README "Alerts and notification channels"). */
const BASE = "/api/v1/notification-channels";
const TAG = "Notification channels";
const TYPE = "notification_channel";
/** A channel as responses show it: one schema per type, told apart by channel_type. */
const Attributes = component("NotificationChannel", oneOf(CHANNEL_TYPES.map((t) => component(`${schemaName(t)}Channel`, channelResponseSchema(t))), "one schema per channel_type"));
const CreateBody = writeBody(TYPE, oneOf(CHANNEL_TYPES.map((t) => channelCreateSchema(t)), "one schema per channel_type: the attributes of that type"));
const UpdateBody = writeBody(TYPE, channelUpdateSchema());

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

const one = (c: ChannelItem, status?: number) => single(TYPE, c.id, c.attributes, status);
const channelId = (params: Record<string, string>) => pathId(params, "notification channel");

export const notificationChannelRoutes: RouteDef[] = [
  {
    method: "GET",
    path: BASE,
    scope: "monitors:read",
    summary: "List notification channels (id ascending)",
    tag: TAG,
    query: Type.Object({ ...PageQuery, ...ExternalIdQuery }),
    response: listResponse(TYPE, Attributes),
    async handler(req, ctx) {
      const q = new QueryReader(req.query);
      const { page, perPage, offset } = q.page();
      const externalId = q.string("external_id");
      q.done();
      const { items, total } = await listChannels(ctx, actorOf(req), { limit: perPage, offset }, { externalId });
      return list(items.map((c) => resource(TYPE, c.id, c.attributes)), page, perPage, total);
    },
  },
  {
    method: "POST",
    path: BASE,
    scope: "monitors:write",
    summary: "Create a notification channel",
    tag: TAG,
    body: CreateBody,
    response: singleResponse(TYPE, Attributes),
    successStatus: 201,
    example: { name: "Ops webhook", channel_type: "webhook", url: "https://hooks.example.com/vigil", secret: "a-long-random-signing-key" },
    async handler(req, ctx) {
      return one(await createChannel(ctx, actorOf(req), req.body), 201);
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
      return one(await getChannel(ctx, actorOf(req), channelId(req.params)));
    },
  },
  {
    method: "PATCH",
    path: `${BASE}/:id`,
    scope: "monitors:write",
    summary: "Update a notification channel (only the attributes sent change; null removes an optional secret)",
    tag: TAG,
    body: UpdateBody,
    response: singleResponse(TYPE, Attributes),
    example: { is_enabled: false },
    async handler(req, ctx) {
      return one(await updateChannel(ctx, actorOf(req), channelId(req.params), req.body));
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
      const id = channelId(req.params);
      await deleteChannel(ctx, actorOf(req), id);
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
      const id = channelId(req.params);
      const outcome = await sendTestNotification(ctx, actorOf(req), id);
      return single(TYPE, id, { ok: outcome.ok, status_code: outcome.statusCode, error: outcome.error });
    },
  },
];
