import { Type } from "@sinclair/typebox";
import { CHANNEL_TYPES, channelCreateSchema, channelResponseSchema, channelUpdateSchema } from "../domain/notification-channel-schema.ts";
import { createChannel, deleteChannel, getChannel, listChannels, sendTestNotification, updateChannel } from "../services/notification-channels.ts";
import { single } from "./envelope.ts";
import { BY_EXTERNAL_ID, resourceRoutes } from "./resource-routes.ts";
import { actorOf, type RouteDef } from "./route.ts";
import { component, MetaSchema, oneOf, schemaName } from "./schemas.ts";

/** Same envelopes, validation and tenancy as monitors (README "Alerts and notification channels"). */
const TYPE = "notification_channel";

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

const channels = resourceRoutes({
  path: "/api/v1/notification-channels",
  noun: "notification channel",
  type: TYPE,
  tag: "Notification channels",
  scopes: { read: "monitors:read", write: "monitors:write" },
  /** A channel as responses show it: one schema per type, told apart by channel_type. */
  attributes: component("NotificationChannel", oneOf(CHANNEL_TYPES.map((t) => component(`${schemaName(t)}Channel`, channelResponseSchema(t))), "one schema per channel_type")),
  createAttributes: oneOf(CHANNEL_TYPES.map((t) => channelCreateSchema(t)), "one schema per channel_type: the attributes of that type"),
  updateAttributes: channelUpdateSchema(),
  ...BY_EXTERNAL_ID,
  summaries: {
    list: "List notification channels (id ascending)",
    create: "Create a notification channel",
    get: "Get a notification channel",
    update: "Update a notification channel (only the attributes sent change; null removes an optional secret)",
    remove: "Delete a notification channel, its monitor links and its queued alerts",
  },
  examples: {
    create: { name: "Ops webhook", channel_type: "webhook", url: "https://hooks.example.com/vigil", secret: "a-long-random-signing-key" },
    update: { is_enabled: false },
  },
  list: listChannels,
  create: createChannel,
  get: getChannel,
  update: updateChannel,
  remove: deleteChannel,
});

export const notificationChannelRoutes: RouteDef[] = [
  ...channels.routes,
  {
    method: "POST",
    path: "/api/v1/notification-channels/:id/test",
    scope: "monitors:write",
    summary: "Send a sample alert (event \"test\") now and return the attempt's outcome",
    tag: "Notification channels",
    response: TestResponse,
    async handler(req, ctx) {
      const id = channels.itemId(req.params);
      const outcome = await sendTestNotification(ctx, actorOf(req), id);
      return single(TYPE, id, { ok: outcome.ok, status_code: outcome.statusCode, error: outcome.error });
    },
  },
];
