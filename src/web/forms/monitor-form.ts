import { AUTH_TYPES, JSON_ASSERTION_OPS, MAX_REDIRECTS, MONITOR_TYPES, type JsonAssertion, type MonitorType } from "../../domain/monitor.ts";
import { fieldApplies, MONITOR_ATTRIBUTE_NAMES, MONITOR_FIELDS, type MonitorAttributeName, type MonitorField } from "../../domain/monitor-schema.ts";
import { MONITOR_DEFAULTS } from "../../domain/monitor-validation.ts";
import { html, type SafeHtml } from "../html.ts";
import { csrfField } from "../views/layout.ts";
import { ALERTING_ATTRIBUTES } from "./alerting-section.ts";
import { errorSummary, fieldFromSchema, humanize, renderField, type Errors, type FieldSpec, type Mode } from "./fields.ts";

/** Labels people read; the attribute names stay in the API docs. */
const LABELS: Partial<Record<MonitorAttributeName, string>> = {
  name: "Name",
  target: "Target",
  method: "HTTP method",
  interval_sec: "Check every (seconds)",
  timeout_ms: "Give up after (milliseconds)",
  group_id: "Group",
  tags: "Tags",
  is_in_maintenance: "In maintenance (checks run, no incidents or alerts)",
  synthetic_trace_body_detail: "Response bodies kept in step traces",
  regions: "Regions",
  notification_channel_ids: "Notification channels",
  port: "Port",
  expected_http_codes: "Expected status codes",
  keyword: "Page must contain",
  api_expected_content_type: "Expected content type",
  api_expected_body_contains: "Response body must contain",
  api_max_latency_ms: "Slow above (milliseconds)",
  synthetic_enabled: "Multi-step check",
  api_json_assertions_json: "Rules on the JSON response",
  api_headers_json: "Request headers",
  api_body: "Request body",
  synthetic_steps_json: "Steps of the multi-step check",
  api_auth_type: "Sign in with",
  api_auth_basic_user: "User name",
  api_auth_basic_pass: "Password",
  api_auth_bearer_token: "Token",
  api_auth_api_key_header: "Header name",
  api_auth_api_key_value: "Key",
  follow_redirects: "Follow redirects",
  tls_verify: "Verify the TLS certificate",
  ssl_expiry_warn_days: "Warn before the certificate expires (days)",
  dns_record_type: "Record type",
  dns_resolver: "DNS server",
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
  domain_expiry_warn_days: "Warn before the registration expires (days)",
  heartbeat_period_sec: "Expected every (seconds)",
  heartbeat_grace_sec: "Grace (seconds)",
  heartbeat_notify_on_late: "Alert when late (shown as degraded)",
  heartbeat_payload_policy: "Read the ping's body",
  heartbeat_payload_status_key: "Status key in the body",
  heartbeat_schedule: "Schedule (cron)",
  heartbeat_timezone: "Time zone of the schedule",
};

/** The JSON assertion hint's example: a rule the validation takes (its operator is the schema's first). */
const JSON_ASSERTION_EXAMPLE: JsonAssertion = { path: "status", op: JSON_ASSERTION_OPS[0], value: "ok" };

/**
 * Hints in plain words, in place of the API's descriptions (which speak of null and attribute
 * names); "" shows none.
 */
const HINTS: Partial<Record<MonitorAttributeName, string>> = {
  name: "",
  method: "",
  interval_sec: "from 10 seconds to one day",
  timeout_ms: "must be shorter than the time between checks",
  is_in_maintenance: "",
  synthetic_trace_body_detail: "how much of each step's response a multi-step check keeps to show you",
  regions: "comma-separated region names; empty: every region",
  expected_http_codes: "e.g. 200,201 or 200-299 or 2xx; empty: any 2xx",
  keyword: "the check fails when the page does not contain this text; empty: not checked",
  api_expected_content_type: "e.g. application/json; empty: not checked",
  api_expected_body_contains: "empty: not checked",
  api_max_latency_ms: "a check that succeeds but answers slower is shown as degraded; empty: never",
  synthetic_enabled: "runs the steps below in order instead of one request",
  api_json_assertions_json: `a JSON list, e.g. ${JSON.stringify([JSON_ASSERTION_EXAMPLE])}; empty: none (see docs/monitors.md for every operator)`,
  api_headers_json: 'a JSON object, e.g. {"Accept": "application/json"}; empty: none',
  api_body: "sent with the request, e.g. for POST; empty: no body",
  synthetic_steps_json: "a JSON description of the steps (see docs/monitors.md); empty: none",
  api_auth_basic_user: "",
  api_auth_api_key_header: "e.g. X-Api-Key",
  api_auth_bearer_token: "sent as “Authorization: Bearer …”",
  api_auth_basic_pass: "",
  api_auth_api_key_value: "",
  follow_redirects: `up to ${MAX_REDIRECTS}; turn off to expect a redirect (301, 302, …) itself`,
  tls_verify: "turn off only for a self-signed certificate you trust",
  ssl_expiry_warn_days: "the check turns degraded this many days before; empty: 14",
  dns_resolver: "IP address (and :port) of the server to ask; empty: this machine's (not where private targets are blocked)",
  dns_expected_answer: "one of the answers must be exactly this; empty: any answer is fine",
  ws_send: "sent once connected; empty: nothing is sent",
  ws_expect: "the server's first message must contain it; empty: connecting is enough",
  grpc_service: "empty: asks about the server as a whole",
  grpc_tls: "",
  smtp_security: "none: plain text; starttls: encrypted after the greeting; tls: encrypted from the start",
  db_password: "",
  db_query: "run after logging in; empty: SELECT 1",
  db_tls: "the certificate is verified",
  redis_username: "for Redis 6 users; empty: the password alone",
  docker_host: "unix:///path, tcp://host:port or http://host:port; empty: this machine's Docker",
  domain_expiry_warn_days: "the check turns degraded this many days before",
  heartbeat_period_sec: "how often your job calls the ping URL",
  heartbeat_grace_sec: "extra time allowed before the monitor is down; empty: none",
  heartbeat_notify_on_late: "",
  heartbeat_payload_policy: "status_ok: a ping whose JSON body does not say ok counts as a failure",
  heartbeat_payload_status_key: "e.g. status or result.state; empty: status",
  heartbeat_schedule: "when your job runs, e.g. 0 3 * * * for 03:00 every day; empty: every period above",
  heartbeat_timezone: "e.g. Europe/Paris; empty: UTC",
};

/** The port means something else per type. */
const PORT_HINT: Partial<Record<MonitorType, string>> = {
  http: "only when it differs from the URL's",
  tcp: "when the target has none",
};

/** Never on the form: kept as the API sets it. */
const HIDDEN = new Set<string>(["editor_ui_profile"] satisfies MonitorAttributeName[]);
/** A heartbeat is not checked by Vigil: it waits for pings, so there is no interval or timeout to ask. */
const NOT_ON_HEARTBEAT = new Set<string>(["target", "interval_sec", "timeout_ms"] satisfies MonitorAttributeName[]);

/** The authentication section: one secret and (for some) one name per kind. */
const AUTH_KINDS: { value: (typeof AUTH_TYPES)[number]; label: string; fields: MonitorAttributeName[] }[] = [
  { value: "none", label: "Nothing (no sign-in)", fields: [] },
  { value: "basic", label: "User name and password (Basic)", fields: ["api_auth_basic_user", "api_auth_basic_pass"] },
  { value: "bearer", label: "A token (Bearer)", fields: ["api_auth_bearer_token"] },
  { value: "api_key", label: "An API key in a header", fields: ["api_auth_api_key_header", "api_auth_api_key_value"] },
];
const AUTH_FIELDS = new Set<string>(["api_auth_type", ...AUTH_KINDS.flatMap((k) => k.fields)]);

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
 * HTTP method and the trace detail on any other type than http, the
 * interval and timeout on heartbeat, and what only API clients set (HIDDEN).
 * `groups` are the account's groups, in display order.
 */
export function monitorFields(type: MonitorType, channels: Choice[], groups: Choice[] = []): FieldSpec[] {
  return MONITOR_ATTRIBUTE_NAMES.filter((n) => {
    const f = MONITOR_FIELDS[n] as MonitorField;
    if (f.access === "ro" || n === "monitor_type" || n === "is_paused" || HIDDEN.has(n) || !fieldApplies(n, type)) return false;
    if (n === "external_id") return false; // set by configuration files (README "Configuration as code")
    if (ALERTING_ATTRIBUTES.has(n)) return false; // a section of their own (alerting-section.ts)
    // the API takes them on every type; only http uses them (its method, its multi-step traces)
    if (n === "method" || n === "synthetic_trace_body_detail") return type === "http";
    return !(type === "heartbeat" && NOT_ON_HEARTBEAT.has(n));
  }).map((n) => {
    if (n === "notification_channel_ids") return { name: n, label: LABELS[n]!, widget: "choices" as const, nullable: false, choices: channels, hint: "alerted when this monitor changes state" };
    if (n === "group_id") return { name: n, label: LABELS[n]!, widget: "choice" as const, nullable: true, choices: groups, hint: "the section it is listed in, here and on status pages" };
    if (n === "tags") return { name: n, label: LABELS[n]!, widget: "list" as const, nullable: false, hint: "comma-separated, e.g. env:prod, team/web; letters, digits, spaces and _ . : / -" };
    const hint = n === "target" ? TARGET_HINT[type] : n === "port" ? PORT_HINT[type] : HINTS[n];
    return fieldFromSchema(n, (MONITOR_FIELDS[n] as MonitorField).schema, LABELS[n] ?? humanize(n), hint);
  });
}

/** Values a new monitor's form starts with. */
export function createDefaults(type: MonitorType, defaultChannelIds: number[]): Record<string, unknown> {
  const heartbeat = type === "heartbeat" ? { heartbeat_period_sec: HEARTBEAT_CREATE.interval_sec } : {};
  return { ...MONITOR_DEFAULTS, interval_sec: 60, timeout_ms: type === "heartbeat" ? 1000 : 10_000, notification_channel_ids: defaultChannelIds, ...heartbeat };
}

/** What a heartbeat's form does not ask but the API needs on create (an edit keeps what is stored). */
const HEARTBEAT_CREATE = { interval_sec: 60, timeout_ms: 1000 };

/** Attributes a new monitor of `type` gets besides its form's. */
export function createFixedAttributes(type: MonitorType): Record<string, unknown> {
  return type === "heartbeat" ? { ...HEARTBEAT_CREATE } : {};
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
  const auth = o.fields.filter((f) => AUTH_FIELDS.has(f.name));
  const advanced = o.fields.filter((f) => !BASIC.has(f.name) && !AUTH_FIELDS.has(f.name));
  const advancedOpen = advanced.some((f) => o.errors[f.name]);
  const note = (f: FieldSpec) => (f.widget === "password" ? (o.storedSecrets?.[f.name] ? "stored; leave empty to keep it" : "kept encrypted, never shown again") : undefined);
  const field = (f: FieldSpec) => renderField(f, o.values[f.name], o.errors, note(f));
  return html`${errorSummary(o.errors, [...o.fields, ...(o.section?.fields ?? [])])}
<form method="post" action="${o.action}" novalidate>${csrfField(o.session)}
${o.mode === "create" ? html`<input type="hidden" name="monitor_type" value="${o.type}">` : ""}
<div class="panel">${basic.map(field)}</div>
${auth.length ? authSection(auth, o.values, o.errors, field) : ""}
${advanced.length ? html`<details${advancedOpen ? html` open` : ""}><summary>Advanced settings (${advanced.length})</summary><div class="panel">${advanced.map(field)}</div></details>` : ""}
${o.section?.body ?? ""}
<div class="row"><button class="primary" type="submit">${o.mode === "create" ? "Create monitor" : "Save changes"}</button><a class="btn" href="${o.mode === "create" ? "/" : o.action}">Cancel</a></div>
</form>`;
}

/**
 * One section for signing in to the target: the kind picked, then that kind's fields. Without
 * script every kind's fields show, each under its name; the script (app.client.js) shows the chosen
 * kind's alone and names it in the heading as the choice changes. Fields of another kind are sent as they are and the service keeps them, as the API does.
 */
function authSection(fields: FieldSpec[], values: Record<string, unknown>, errors: Errors, field: (f: FieldSpec) => SafeHtml): SafeHtml {
  const chosen = typeof values.api_auth_type === "string" ? values.api_auth_type : "none";
  const byName = new Map(fields.map((f) => [f.name, f]));
  const open = chosen !== "none" || fields.some((f) => errors[f.name]);
  const msgs = errors.api_auth_type ?? [];
  return html`<details${open ? html` open` : ""}><summary>Authentication (<span data-auth-label>${AUTH_KINDS.find((k) => k.value === chosen)?.label ?? chosen}</span>)</summary><div class="panel" data-auth-section>
<div class="field"><label for="f-api_auth_type">${LABELS.api_auth_type!}</label><select id="f-api_auth_type" name="api_auth_type" data-auth-choice${msgs.length ? html` aria-invalid="true" aria-describedby="f-api_auth_type-err"` : ""}>${AUTH_KINDS.map((k) => html`<option value="${k.value}"${k.value === chosen ? html` selected` : ""}>${k.label}</option>`)}</select>${msgs.length ? html`<span class="err" id="f-api_auth_type-err">${msgs.map((m) => `${LABELS.api_auth_type!} ${m}`).join("; ")}</span>` : ""}</div>
<p class="hint" data-auth-note>Only the fields of the kind chosen above are used.</p>
${AUTH_KINDS.filter((k) => k.fields.length).map((k) => html`<fieldset class="auth-kind" data-auth="${k.value}"><legend>${k.label}</legend>${k.fields.map((n) => byName.get(n)).filter((f): f is FieldSpec => !!f).map(field)}</fieldset>`)}
</div></details>`;
}
