import type { IncidentStatus, UpdateKind } from "../../domain/status-page-update-schema.ts";

/** How the kinds and statuses of status page updates read on the page, in the feed and in the editor. */
export const KIND_LABEL: Record<UpdateKind, string> = { incident: "Incident", maintenance: "Maintenance", info: "Information" };
export const STATUS_LABEL: Record<IncidentStatus, string> = { investigating: "Investigating", identified: "Identified", monitoring: "Monitoring", resolved: "Resolved" };
