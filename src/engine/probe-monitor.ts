import { DEFAULT_DOMAIN_EXPIRY_WARN_DAYS, DNS_RECORD_TYPES, SMTP_SECURITY, type AuthType, type SmtpSecurity, type DnsRecordType, type HttpMethod, type JsonAssertion, type MonitorType, type ProbeMonitor, type SyntheticScenario, type TraceBodyDetail } from "../domain/monitor.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import type { MonitorRow } from "../store/tables.ts";

/** A stored monitor could not be turned into something a probe can run (bad JSON, unreadable secret). */
export class MonitorDefinitionError extends Error {}

function parseJson<T>(text: string | null, field: string): T | null {
  if (text === null || text === "") return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new MonitorDefinitionError(`the stored ${field} is not valid JSON`);
  }
}

function openSecret(sealed: string | null, field: string, secrets: SecretBox): string | null {
  if (sealed === null) return null;
  try {
    return secrets.open(sealed);
  } catch {
    // never the value, nor the sealed text: only which field, and the likely cause
    throw new MonitorDefinitionError(`the stored ${field} could not be decrypted (was the secret key changed?)`);
  }
}

/**
 * The probe's view of a stored monitor: JSON columns parsed, booleans as booleans, secrets opened.
 * The plaintext secrets live only in this object, in memory, for the length of one check.
 */
export function rowToProbeMonitor(row: MonitorRow, secrets: SecretBox, blockPrivateTargets: boolean): ProbeMonitor {
  const recordType = (row.dns_record_type ?? "A").toUpperCase() as DnsRecordType;
  return {
    id: row.id,
    monitor_type: row.monitor_type as MonitorType,
    target: row.target,
    method: (row.method || "GET").toUpperCase() as HttpMethod,
    timeout_ms: row.timeout_ms,
    interval_sec: row.interval_sec,
    port: row.port,
    expected_http_codes: row.expected_http_codes,
    keyword: row.keyword,
    api_expected_content_type: row.api_expected_content_type,
    api_expected_body_contains: row.api_expected_body_contains,
    api_max_latency_ms: row.api_max_latency_ms,
    api_json_assertions_json: parseJson<JsonAssertion[]>(row.api_json_assertions_json, "api_json_assertions_json"),
    api_headers_json: parseJson<Record<string, string>>(row.api_headers_json, "api_headers_json"),
    api_body: row.api_body,
    api_auth_type: (row.api_auth_type || "none") as AuthType,
    api_auth_basic_user: row.api_auth_basic_user,
    api_auth_api_key_header: row.api_auth_api_key_header,
    api_auth_bearer_token: openSecret(row.api_auth_bearer_token_enc, "api_auth_bearer_token", secrets),
    api_auth_basic_pass: openSecret(row.api_auth_basic_pass_enc, "api_auth_basic_pass", secrets),
    api_auth_api_key_value: openSecret(row.api_auth_api_key_value_enc, "api_auth_api_key_value", secrets),
    synthetic_enabled: row.synthetic_enabled === 1,
    synthetic_steps_json: parseJson<SyntheticScenario>(row.synthetic_steps_json, "synthetic_steps_json"),
    synthetic_trace_body_detail: (row.synthetic_trace_body_detail || "truncated") as TraceBodyDetail,
    tls_verify: row.tls_verify !== 0,
    follow_redirects: row.follow_redirects !== 0,
    ssl_expiry_warn_days: row.ssl_expiry_warn_days,
    dns_record_type: (DNS_RECORD_TYPES as readonly string[]).includes(recordType) ? recordType : "A",
    dns_resolver: row.dns_resolver,
    dns_expected_answer: row.dns_expected_answer,
    ws_send: row.ws_send,
    ws_expect: row.ws_expect,
    grpc_service: row.grpc_service ?? "",
    grpc_tls: row.grpc_tls === 1,
    smtp_security: (SMTP_SECURITY as readonly (string | null)[]).includes(row.smtp_security) ? (row.smtp_security as SmtpSecurity) : "none",
    db_password: openSecret(row.db_password_enc, "db_password", secrets),
    db_query: row.db_query,
    db_tls: row.db_tls === 1,
    redis_username: row.redis_username,
    docker_host: row.docker_host,
    domain_expiry_warn_days: row.domain_expiry_warn_days ?? DEFAULT_DOMAIN_EXPIRY_WARN_DAYS,
    block_private_targets: blockPrivateTargets,
  };
}

/** The regions a monitor runs in: null (the column's NULL) means every region. */
export function monitorRegions(row: Pick<MonitorRow, "regions">): string[] | null {
  if (!row.regions) return null;
  try {
    const list = JSON.parse(row.regions);
    return Array.isArray(list) && list.length > 0 ? list.map(String) : null;
  } catch {
    return null;
  }
}

export function runsInRegion(row: Pick<MonitorRow, "regions">, region: string): boolean {
  const list = monitorRegions(row);
  return list === null || list.includes(region);
}
