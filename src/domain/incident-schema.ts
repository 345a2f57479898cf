import { Type, type Static } from "@sinclair/typebox";
import { enumOf } from "./schema-parts.ts";

const intOrNull = (description?: string) => Type.Union([Type.Integer(), Type.Null()], description ? { description } : {});
const strOrNull = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

/** An incident as the API shows it (docs/api.md "Incidents"): references are integers, times ISO 8601. */
export const IncidentAttributesSchema = Type.Object({
  monitor_id: Type.Integer(),
  status: enumOf(["open", "resolved"]),
  started_at: Type.String({ format: "date-time" }),
  resolved_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "null while open" }),
  duration_ms: intOrNull("whole seconds, in ms; null while open"),
  failure_count: Type.Integer(),
  last_error_code: strOrNull("e.g. connection_timeout, http_error"),
  last_error_message: strOrNull(),
  last_http_code: intOrNull(),
  root_check_id: intOrNull("the check that opened it; see GET /api/v1/monitors/{id}/checks"),
  resolved_check_id: intOrNull(),
  parent_incident_id: intOrNull("the incident of a monitor this one depends on that was down when this one opened: its alerts waited for every parent to be up again; null without"),
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
});

export type IncidentAttributes = Static<typeof IncidentAttributesSchema>;
