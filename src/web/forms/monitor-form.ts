import { MONITOR_TYPES, type MonitorType } from "../../domain/monitor.ts";
import { fieldApplies, MONITOR_ATTRIBUTE_NAMES, MONITOR_FIELDS, type MonitorAttributeName, type MonitorField } from "../../domain/monitor-schema.ts";
import { MONITOR_DEFAULTS } from "../../domain/monitor-validation.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField } from "../views/layout.ts";
import { ALERTING_ATTRIBUTES } from "./alerting-section.ts";
import { errorSummary, fieldFromSchema, humanize, renderField, type Errors, type FieldSpec, type Mode } from "./fields.ts";

/** Labels people read; the attribute name stays in the hint-free API docs. */
const LABELS: Partial<Record<MonitorAttributeName, string>> = {
  name: "Name",
  target: "Target",
  method: "HTTP method",
  interval_sec: "Check interval (seconds)",
  timeout_ms: "Timeout (ms)",
  group_id: "Group",
  tags: "Tags",
  is_in_maintenance: "In maintenance (checks run, no incidents or alerts)",
  synthetic_trace_body_detail: "Synthetic trace body detail",
  regions: "Regions",
  notification_channel_ids: "Notification channels",
  editor_ui_profile: "Editor profile",
  port: "Port",
  expected_http_codes: "Expected HTTP codes",
  keyword: "Keyword in the response",
  api_expected_content_type: "Expected Content-Type",
  api_expected_body_contains: "Body must contain",
  api_max_latency_ms: "Degraded above (ms)",
  synthetic_enabled: "Multi-step synthetic mode",
  api_json_assertions_json: "JSON assertions",
  api_headers_json: "Request headers (JSON object)",
  api_body: "Request body",
  synthetic_steps_json: "Synthetic steps (JSON)",
  api_auth_type: "Authentication",
  api_auth_basic_user: "Basic auth user",
  api_auth_api_key_header: "API key header",
  api_auth_bearer_token: "Bearer token",
  api_auth_basic_pass: "Basic auth password",
  api_auth_api_key_value: "API key value",
  tls_verify: "Verify the TLS certificate",
  ssl_expiry_warn_days: "Certificate expiry warning (days)",
  dns_record_type: "Record type",
  dns_resolver: "Resolver",
  dns_expected_answer: "Expected answer",
  ws_send: "Message to send",
  ws_expect: "Expected reply contains",
  grpc_service: "Service name",
  grpc_tls: "Use TLS",
  smtp_security: "Connection security",
  db_password: "Password",
  db_query: "Query",
  db_tls: "Use TLS",
  redis_username: "User name",
  docker_host: "Docker host",
  domain_expiry_warn_days: "Expiry warning (days)",
  heartbeat_period_sec: "Expected every (seconds)",
  heartbeat_grace_sec: "Grace (seconds)",
  heartbeat_notify_on_late: "Alert when late (degraded)",
  heartbeat_payload_policy: "Payload policy",
  heartbeat_payload_status_key: "Payload status key",
  heartbeat_schedule: "Cron schedule",
  heartbeat_timezone: "Time zone of the schedule",
};

const TARGET_HINT: Record<MonitorType, string> = {
  http: "an absolute http(s) URL, e.g. https://example.com/health",
  tcp: "host:port, e.g. db.internal:5432",
  dns: "a host name to resolve, e.g. example.com",
  ssl: "host[:port] or an https URL",
  ping: "a host name or IP address",
  heartbeat: "",
  websocket: "a ws:// or wss:// URL, e.g. wss://example.com/socket",
  grpc: "host:port of the gRPC server, e.g. grpc.internal:50051",
  smtp: "host or host:port of the mail server (port 25 by default), e.g. mail.example.com:587",
  postgres: "postgres://user@host:port/database, without the password, e.g. postgres://monitor@db.internal:5432/app",
  mysql: "mysql://user@host:port/database, without the password, e.g. mysql://monitor@db.internal:3306/app",
  redis: "redis://host:port or rediss://host:port (TLS), optionally /database number, e.g. redis://cache.internal:6379/0",
  docker: "the container's name or id, e.g. nextcloud",
  domain: "the registered domain name, e.g. example.com",
};

export const TYPE_INFO: Record<MonitorType, string> = {
  http: "HTTP(S) endpoint: status code, keyword, JSON assertions, latency",
  tcp: "a TCP port accepts connections",
  dns: "a name resolves (optionally to an expected answer)",
  ssl: "a TLS certificate is valid and not about to expire",
  heartbeat: "your job calls a ping URL; silence means failure",
  ping: "ICMP echo to a host",
  websocket: "a WebSocket endpoint opens (and answers an expected message)",
  grpc: "a gRPC server reports itself serving (standard health check)",
  smtp: "a mail server greets and answers EHLO, with TLS if asked",
  postgres: "a PostgreSQL database accepts a login and answers a query",
  mysql: "a MySQL or MariaDB database accepts a login and answers a query",
  redis: "a Redis server accepts a login and answers PING",
  docker: "a Docker container is running and healthy",
  domain: "a domain's registration is not about to expire",
};

/** Shown first; the rest of a type's fields go under "Advanced". */
const BASIC = new Set<string>([
  "name", "target", "port", "method", "interval_sec", "timeout_ms", "expected_http_codes", "keyword", "dns_record_type", "dns_expected_answer",
  "heartbeat_period_sec", "heartbeat_grace_sec", "heartbeat_notify_on_late", "notification_channel_ids", "is_in_maintenance", "group_id", "tags",
  "ws_send", "ws_expect", "grpc_service", "grpc_tls", "smtp_security", "db_password", "db_query", "db_tls", "redis_username", "docker_host", "domain_expiry_warn_days",
] satisfies MonitorAttributeName[]);

export function isMonitorType(t: string | null): t is MonitorType {
  return (MONITOR_TYPES as readonly string[]).includes(t ?? "");
}

type Choice = { value: number; label: string };

/**
 * The fields a monitor of `type` has on the form: every writable attribute of that type, but the
 * HTTP method on any other type than http (the API accepts it everywhere; only http uses it).
 * `groups` are the account's groups, in display order.
 */
export function monitorFields(type: MonitorType, channels: Choice[], groups: Choice[] = []): FieldSpec[] {
  return MONITOR_ATTRIBUTE_NAMES.filter((n) => {
    const f = MONITOR_FIELDS[n] as MonitorField;
    if (f.access === "ro" || n === "monitor_type" || n === "is_paused" || !fieldApplies(n, type)) return false;
    if (ALERTING_ATTRIBUTES.has(n)) return false; // a section of their own (alerting-section.ts)
    if (n === "method") return type === "http";
    return !(type === "heartbeat" && n === "target");
  }).map((n) => {
    if (n === "notification_channel_ids") return { name: n, label: LABELS[n]!, widget: "choices" as const, nullable: false, choices: channels, hint: "alerted when this monitor changes state" };
    if (n === "group_id") return { name: n, label: LABELS[n]!, widget: "choice" as const, nullable: true, choices: groups, hint: "the section it is listed in, here and on status pages" };
    if (n === "tags") return { name: n, label: LABELS[n]!, widget: "list" as const, nullable: false, hint: "comma-separated, e.g. env:prod, team/web; letters, digits, spaces and _ . : / -" };
    const hint = n === "target" ? TARGET_HINT[type] : n === "regions" ? "comma-separated region names; empty means every region" : undefined;
    return fieldFromSchema(n, (MONITOR_FIELDS[n] as MonitorField).schema, LABELS[n] ?? humanize(n), hint);
  });
}

/** Values a new monitor's form starts with. */
export function createDefaults(type: MonitorType, defaultChannelIds: number[]): Record<string, unknown> {
  return { ...MONITOR_DEFAULTS, interval_sec: 60, timeout_ms: type === "heartbeat" ? 1000 : 10_000, notification_channel_ids: defaultChannelIds };
}

export function monitorForm(o: {
  mode: Mode;
  type: MonitorType;
  action: string;
  fields: FieldSpec[];
  values: Record<string, unknown>;
  errors: Errors;
  session: { csrf_token: string };
  storedSecrets?: Record<string, boolean>;
  /** a section of its own after the type's fields: its fields (for the error summary) and its markup */
  section?: { fields: FieldSpec[]; body: SafeHtml };
}): SafeHtml {
  const basic = o.fields.filter((f) => BASIC.has(f.name));
  const advanced = o.fields.filter((f) => !BASIC.has(f.name));
  const advancedOpen = advanced.some((f) => o.errors[f.name]);
  const note = (f: FieldSpec) => (f.widget === "password" ? (o.storedSecrets?.[f.name] ? "stored; leave empty to keep it" : "write-only: stored encrypted, never shown again") : undefined);
  const field = (f: FieldSpec) => renderField(f, o.values[f.name], o.errors, note(f));
  return html`${errorSummary(o.errors, [...o.fields, ...(o.section?.fields ?? [])])}
<form method="post" action="${o.action}" novalidate>${csrfField(o.session)}
${o.mode === "create" ? html`<input type="hidden" name="monitor_type" value="${o.type}">` : ""}
<div class="panel">${basic.map(field)}</div>
${advanced.length ? html`<details${advancedOpen ? html` open` : ""}><summary>Advanced settings (${advanced.length})</summary><div class="panel">${advanced.map(field)}</div></details>` : ""}
${o.section?.body ?? ""}
<div class="row"><button class="primary" type="submit">${o.mode === "create" ? "Create monitor" : "Save changes"}</button><a class="btn" href="${o.mode === "create" ? "/" : o.action}">Cancel</a></div>
</form>`;
}
