import { Type, type Static } from "@sinclair/typebox";
import { enumOf } from "./schema-parts.ts";

/** Kinds of a monitor's timeline events. */
export const EVENT_KINDS = ["ping", "start", "fail", "transition", "token_rotated", "expiring", "still_down", "escalated"] as const;

const strOrNull = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

/** An item of a monitor's timeline (docs/api.md "Heartbeat token and timeline"); which fields it has depends on `kind`. */
export const EventAttributesSchema = Type.Object({
  monitor_id: Type.Integer(),
  kind: enumOf(EVENT_KINDS, { description: "ping (and the heartbeat's start/fail signals), transition, token_rotated, expiring (a monitor.expiring alert: a certificate or domain registration close to expiry), still_down (an open incident's reminder: monitor.still_down), escalated (an open incident escalated: monitor.escalated)" }),
  at: Type.String({ format: "date-time" }),
  received_at: Type.Optional(Type.String({ format: "date-time", description: "pings: when it arrived" })),
  result: Type.Optional(strOrNull("pings: accepted, rejected or ignored")),
  reason: Type.Optional(strOrNull("pings: why it was rejected; transitions: what caused it; expiring: what expires when, in words; still_down, escalated: how long the monitor has been down and who was told")),
  source_ip: Type.Optional(strOrNull("pings: the sender's address")),
  duration_ms: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "pings after a start signal: the run's duration" })),
  body: Type.Optional(strOrNull("failure pings (/fail, a non-zero exit code): the first 10 KiB of the body the job sent")),
  body_bytes: Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: "pings: the body's size as sent, when it was longer than what was kept (64 KiB read for the payload policy, 10 KiB stored on a failure); null otherwise" })),
  from: Type.Optional(Type.String({ description: "transitions: previous state" })),
  to: Type.Optional(Type.String({ description: "transitions: new state" })),
  expires_at: Type.Optional(Type.String({ format: "date-time", description: "expiring: the certificate's or domain registration's expiry date" })),
  days_left: Type.Optional(Type.Integer({ description: "expiring: whole days left at the event (0 in the last day)" })),
});

export type EventAttributes = Static<typeof EventAttributesSchema>;
