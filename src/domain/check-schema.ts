import { Type, type Static } from "@sinclair/typebox";
import { CHECK_STATUSES } from "./check-result.ts";
import { enumOf, nullable } from "./schema-parts.ts";

/** A check as the checks list shows it (docs/api.md "Checks"; README "Checks and error codes"). */
export const CheckAttributesSchema = Type.Object({
  monitor_id: Type.Integer(),
  status: enumOf(CHECK_STATUSES),
  checked_at: Type.String({ format: "date-time" }),
  latency_ms: nullable(Type.Integer()),
  http_code: nullable(Type.Integer()),
  error_code: nullable(Type.String({ description: "e.g. connection_timeout, http_error" })),
  error_message: nullable(Type.String()),
  degraded_reason: nullable(Type.String()),
  resolved_ip: nullable(Type.String()),
  ssl_not_after: nullable(Type.String({ format: "date-time" })),
  dns_answer: Type.Union([Type.Array(Type.String()), Type.Null()]),
  synthetic_trace_json: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: "per-step trace of a synthetic check" }),
  region: Type.String({ description: "region that ran the check" }),
  timings: Type.Union(
    [
      Type.Object({
        dns_ms: nullable(Type.Integer({ description: "host name resolved; null for an IP target" })),
        connect_ms: nullable(Type.Integer({ description: "TCP connected" })),
        tls_ms: nullable(Type.Integer({ description: "TLS established; null without TLS" })),
        ttfb_ms: nullable(Type.Integer({ description: "first byte of the answer" })),
      }),
      Type.Null(),
    ],
    { description: "extension: when each moment of the connection came, in ms from the start of the request (of its last hop after redirects); null when the check measured none (ping, dns, heartbeat, or a check from before this was recorded)" },
  ),
});

export type CheckAttributes = Static<typeof CheckAttributesSchema>;
