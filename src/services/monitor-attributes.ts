import { DEFAULT_DOMAIN_EXPIRY_WARN_DAYS, type MonitorType } from "../domain/monitor.ts";
import { responseAttributes, type MonitorAttributeName, type MonitorAttributes } from "../domain/monitor-schema.ts";
import type { ExistingMonitor } from "../domain/monitor-validation.ts";
import { toIso } from "../lib/dates.ts";
import type { MonitorRow } from "../store/tables.ts";

const BOOLEANS = new Set(["is_paused", "is_in_maintenance", "synthetic_enabled", "tls_verify", "heartbeat_notify_on_late", "follow_redirects", "grpc_tls", "db_tls"]);
const JSONS = new Set(["regions", "api_json_assertions_json", "api_headers_json", "synthetic_steps_json"]);
const TIMES = new Set(["last_checked_at", "next_run_at", "created_at", "updated_at", "ssl_expiry_last_not_after", "heartbeat_last_ping_at", "domain_expires_at"]);

function parseJson(text: string | null): unknown {
  if (text === null || text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** What a monitor's link tables hold for its attributes, besides its notification channels. */
export interface MonitorLinks {
  depends_on_ids: number[];
  escalation_channel_ids: number[];
}
export const NO_LINKS: MonitorLinks = Object.freeze({ depends_on_ids: [], escalation_channel_ids: [] });

function value(row: MonitorRow, name: MonitorAttributeName, channelIds: number[], links: MonitorLinks, tags: string[]): unknown {
  if (name === "notification_channel_ids") return channelIds;
  if (name === "tags") return tags;
  if (name === "depends_on_ids" || name === "escalation_channel_ids") return links[name];
  const raw = (row as unknown as Record<string, unknown>)[name];
  if (BOOLEANS.has(name)) return raw === 1;
  if (JSONS.has(name)) return parseJson(raw as string | null);
  if (TIMES.has(name)) return toIso(raw as number | null);
  // columns that are nullable for other types but always set for the types that show them
  if (name === "dns_record_type") return raw ?? "A";
  if (name === "heartbeat_timezone") return raw ?? "UTC";
  if (name === "grpc_service") return raw ?? "";
  if (name === "smtp_security") return raw ?? "none";
  if (name === "domain_expiry_warn_days") return raw ?? DEFAULT_DOMAIN_EXPIRY_WARN_DAYS;
  return raw ?? null;
}

/**
 * The one mapping from a stored monitor to its API attributes: the common fields always, the
 * others only for the types they belong to (docs/api.md "Monitors"). Write-only secrets are not in
 * the list at all, so they cannot leak through here.
 */
export function monitorAttributes(row: MonitorRow, channelIds: number[], links: MonitorLinks = NO_LINKS, tags: string[] = []): MonitorAttributes {
  const out: Record<string, unknown> = {};
  for (const name of responseAttributes(row.monitor_type as MonitorType)) out[name] = value(row, name, channelIds, links, tags);
  return out as MonitorAttributes;
}

/** The stored monitor in the validator's terms: its API values and which secrets it holds. */
export function existingMonitor(row: MonitorRow, channelIds: number[], links: MonitorLinks = NO_LINKS, tags: string[] = []): ExistingMonitor {
  return {
    type: row.monitor_type as MonitorType,
    values: monitorAttributes(row, channelIds, links, tags) as Record<string, unknown>,
    secrets: {
      api_auth_bearer_token: row.api_auth_bearer_token_enc !== null,
      api_auth_basic_pass: row.api_auth_basic_pass_enc !== null,
      api_auth_api_key_value: row.api_auth_api_key_value_enc !== null,
      db_password: row.db_password_enc !== null,
    },
  };
}
