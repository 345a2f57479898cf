/**
 * The monitor's attributes as the API sees them (docs/monitors.md "Types and attributes",
 * docs/heartbeats.md "Heartbeat attributes"): one catalogue says, per attribute, its TypeBox schema,
 * which monitor types it belongs to, whether it is read-only or write-only, and the message a client
 * gets when a value does not fit. The OpenAPI document, the validator and the response mapper all
 * read it.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { enumOf, EXTERNAL_ID_MESSAGE, EXTERNAL_ID_SCHEMA, notNull, nullable } from "./schema-parts.ts";
import { AUTH_TYPES, DNS_RECORD_TYPES, HTTP_METHODS, MAX_REDIRECTS, MONITOR_STATES, MONITOR_TYPES, SMTP_SECURITY, TRACE_BODY_DETAILS, type MonitorType } from "./monitor.ts";
import { HeadersSchema, JsonAssertionSchema, SyntheticScenarioSchema } from "./synthetic-schema.ts";
import { MAX_TAGS, TAG_MAX_LENGTH, TAG_PATTERN, TAG_RULE } from "./tags.ts";

export const EDITOR_UI_PROFILES = ["http_endpoint", "api_full", "api"] as const;
export const PAYLOAD_POLICIES = ["none", "status_ok"] as const;
export const MAX_HEARTBEAT_SEC = 31_536_000; // one year: longer windows are a configuration mistake
export const REGION_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$"; // as --region (config/load.ts)

type Access = "rw" | "ro" | "wo";
export interface MonitorField<S extends TSchema = TSchema> {
  schema: S;
  /** monitor types the attribute belongs to; "all" for the common fields */
  types: "all" | readonly MonitorType[];
  access: Access;
  /** shown when the value does not match `schema` */
  message: string;
}

const iso = (description: string) => Type.String({ format: "date-time", description });
const isoOrNull = (description: string) => nullable(Type.String({ format: "date-time" }), description);
const oneOf = (values: readonly string[]) => `must be one of ${values.join(", ")}`;
const BOOL = "must be true or false";

const HTTP: readonly MonitorType[] = ["http"];
/** every type Vigil checks itself: all but heartbeat, which is pushed */
const ACTIVE: readonly MonitorType[] = MONITOR_TYPES.filter((t) => t !== "heartbeat");
/** types that may speak TLS and can be told not to verify the certificate */
const TLS_VERIFY: readonly MonitorType[] = ["http", "ssl", "websocket", "grpc", "smtp"];
/** types whose certificate expiry is watched (degraded within the warn days, kept on the monitor) */
const CERT_EXPIRY: readonly MonitorType[] = ["http", "ssl", "smtp"];
const HEADERS: readonly MonitorType[] = ["http", "websocket"];
const SQL_DB: readonly MonitorType[] = ["postgres", "mysql"];
const PASSWORD: readonly MonitorType[] = ["postgres", "mysql", "redis"];
const HEARTBEAT: readonly MonitorType[] = ["heartbeat"];

const f = <S extends TSchema>(schema: S, types: MonitorField["types"], message: string, access: Access = "rw"): MonitorField<S> => ({ schema, types, access, message });
const ro = <S extends TSchema>(schema: S, types: MonitorField["types"] = "all"): MonitorField<S> => ({ schema, types, access: "ro", message: "is read-only" });
const secret = (description: string, types: readonly MonitorType[] = HTTP) =>
  f(nullable(Type.String({ minLength: 1, maxLength: 4096, writeOnly: true }), description), types, "must be a string of 1 to 4096 characters, or null to remove it", "wo");

/** Every attribute, in the order responses list them. */
export const MONITOR_FIELDS = {
  // common (docs/monitors.md "Common attributes")
  name: f(Type.String({ minLength: 1, maxLength: 200, description: "name" }), "all", "must be a string of 1 to 200 characters"),
  external_id: f(EXTERNAL_ID_SCHEMA, "all", EXTERNAL_ID_MESSAGE),
  monitor_type: f(enumOf(MONITOR_TYPES, { description: "cannot change after creation" }), "all", oneOf(MONITOR_TYPES)),
  target: f(nullable(Type.String({ maxLength: 2048 }), "http: absolute http(s) URL; tcp: host:port; dns: hostname; ssl: host[:port] or https URL; ping: hostname or IP; websocket: ws(s):// URL; grpc: host:port; smtp: host[:port]; postgres: postgres://user@host:port/db; mysql: mysql://user@host:port/db; redis: redis(s)://host:port[/db]; docker: container name or id; domain: registrable domain name; heartbeat: not used"), "all", "must be a string of at most 2048 characters"),
  method: f(enumOf(HTTP_METHODS, { default: "GET", description: "HTTP method; used by http monitors" }), "all", oneOf(HTTP_METHODS)),
  interval_sec: f(Type.Integer({ minimum: 10, maximum: 86400, description: "seconds between checks" }), "all", "must be an integer from 10 to 86400"),
  timeout_ms: f(Type.Integer({ minimum: 100, maximum: 60000, description: "timeout in ms; below interval_sec × 1000" }), "all", "must be an integer from 100 to 60000"),
  group_id: f(nullable(Type.Integer({ minimum: 1 }), "one of this account's groups (/api/v1/groups); null when ungrouped"), "all", "must be a positive integer, or null when ungrouped"),
  is_paused: f(Type.Boolean({ default: false }), "all", BOOL),
  is_in_maintenance: f(Type.Boolean({ default: false, description: "the maintenance switch; reads true also while a maintenance window is in effect for the monitor, but only the switch is saved" }), "all", BOOL),
  last_status: ro(enumOf(MONITOR_STATES, { description: "aggregate state" })),
  last_checked_at: ro(isoOrNull("time of the last check")),
  next_run_at: ro(isoOrNull("time of the next scheduled check")),
  created_at: ro(iso("creation time")),
  updated_at: ro(iso("last update time")),
  synthetic_trace_body_detail: f(enumOf(TRACE_BODY_DETAILS, { default: "truncated" }), "all", oneOf(TRACE_BODY_DETAILS)),
  regions: f(
    nullable(Type.Array(Type.String({ pattern: REGION_PATTERN }), { minItems: 1, maxItems: 50, uniqueItems: true }), "extension: regions that run the checks; null means every region"),
    "all",
    "must be a non-empty list of distinct region names (letters, digits, - and _), or null for every region",
  ),
  notification_channel_ids: f(
    Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100, uniqueItems: true, description: "extension: this account's notification channels alerted for this monitor; on create, omitted means the channels marked default_for_new_monitors" }),
    "all",
    "must be a list of distinct notification channel ids (positive integers)",
  ),
  // alerting (docs/monitors.md "Dependencies, reminders and escalation")
  depends_on_ids: f(
    Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 50, uniqueItems: true, description: "this account's monitors this one depends on: an incident that opens while one of them is down alerts nobody, and alerts (monitor.down) if it is still open once every one is up again" }),
    "all",
    "must be a list of distinct monitor ids (positive integers)",
  ),
  alert_repeat_minutes: f(nullable(Type.Integer({ minimum: 5, maximum: 1440 }), "while an incident stays open, its down alert is sent again every this many minutes (monitor.still_down); null: no reminders"), "all", "must be an integer from 5 to 1440, or null for no reminders"),
  escalation_channel_ids: f(
    Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 100, uniqueItems: true, description: "this account's notification channels an incident escalates to once it has been open escalate_after_minutes (monitor.escalated); they then get its recovery too" }),
    "all",
    "must be a list of distinct notification channel ids (positive integers)",
  ),
  escalate_after_minutes: f(nullable(Type.Integer({ minimum: 1, maximum: 1440 }), "minutes an incident stays open before it escalates to escalation_channel_ids; null: never"), "all", "must be an integer from 1 to 1440, or null for no escalation"),
  tags: f(
    Type.Array(Type.String({ minLength: 1, maxLength: TAG_MAX_LENGTH, pattern: TAG_PATTERN }), { maxItems: MAX_TAGS, uniqueItems: true, description: `extension: up to ${MAX_TAGS} distinct tags, each ${TAG_RULE}; returned sorted` }),
    "all",
    `must be a list of up to ${MAX_TAGS} distinct tags, each ${TAG_RULE}`,
  ),
  // http (docs/monitors.md "HTTP attributes")
  editor_ui_profile: f(nullable(enumOf(EDITOR_UI_PROFILES)), HTTP, `${oneOf(EDITOR_UI_PROFILES)}, or null`),
  port: f(nullable(Type.Integer({ minimum: 1, maximum: 65535 }), "http: overrides the URL's port; tcp: the port when target has none"), ["http", "tcp"], "must be an integer from 1 to 65535, or null"),
  expected_http_codes: f(nullable(Type.String({ maxLength: 200 }), "e.g. 200,201,204 or 200-299 or 2xx; null means 200-299"), HTTP, "must be a string such as 200,201 or 200-299 or 2xx, or null for 200-299"),
  keyword: f(nullable(Type.String({ minLength: 1, maxLength: 1000 })), HTTP, "must be a string of 1 to 1000 characters, or null"),
  api_expected_content_type: f(nullable(Type.String({ minLength: 1, maxLength: 200 })), HTTP, "must be a string of 1 to 200 characters, or null"),
  api_expected_body_contains: f(nullable(Type.String({ minLength: 1, maxLength: 1000 })), HTTP, "must be a string of 1 to 1000 characters, or null"),
  api_max_latency_ms: f(nullable(Type.Integer({ minimum: 1, maximum: 60000 }), "latency above which a successful check is degraded (http, and as an extension every other checked type)"), ACTIVE, "must be an integer from 1 to 60000, or null"),
  synthetic_enabled: f(Type.Boolean({ default: false }), HTTP, BOOL),
  api_json_assertions_json: f(nullable(Type.Array(JsonAssertionSchema, { maxItems: 50 })), HTTP, "must be a list of rules {path, op, value}, or null"),
  api_headers_json: f(nullable(HeadersSchema, "headers sent with the request (websocket: with the upgrade request)"), HEADERS, "must be an object mapping header names to string values, or null"),
  api_body: f(nullable(Type.String({ maxLength: 65536 })), HTTP, "must be a string of at most 65536 characters, or null"),
  synthetic_steps_json: f(nullable(SyntheticScenarioSchema), HTTP, 'must be an object {"steps": [...]}, or null'),
  api_auth_type: f(enumOf(AUTH_TYPES, { default: "none", description: "selects which write-only secret is sent" }), HTTP, oneOf(AUTH_TYPES)),
  api_auth_basic_user: f(nullable(Type.String({ minLength: 1, maxLength: 200 })), HTTP, "must be a string of 1 to 200 characters, or null"),
  api_auth_api_key_header: f(nullable(Type.String({ pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$" })), HTTP, "must be an HTTP header name such as X-Api-Key, or null"),
  api_auth_bearer_token: secret("write-only: sent as Authorization: Bearer when api_auth_type is bearer"),
  api_auth_basic_pass: secret("write-only: Basic auth password when api_auth_type is basic"),
  api_auth_api_key_value: secret("write-only: API key value when api_auth_type is api_key"),
  follow_redirects: f(Type.Boolean({ default: true, description: `follow up to ${MAX_REDIRECTS} redirects (true), or judge the first answer, a redirect included (false); an expected 301/302/303/307/308 needs false` }), HTTP, BOOL),
  tls_verify: f(Type.Boolean({ default: true, description: "verify the certificate chain and host name" }), TLS_VERIFY, BOOL),
  ssl_expiry_warn_days: f(nullable(Type.Integer({ minimum: 1, maximum: 365 }), "days of notice for certificate expiry; null means 14"), CERT_EXPIRY, "must be an integer from 1 to 365, or null for the default of 14"),
  ssl_expiry_last_not_after: ro(isoOrNull("certificate expiry seen by the last check"), CERT_EXPIRY),
  ssl_last_issuer: ro(nullable(Type.String(), "extension: who issued that certificate (its issuer's organisation, else its common name)"), CERT_EXPIRY),
  // dns (docs/monitors.md "TCP, DNS, SSL and ping attributes")
  dns_record_type: f(enumOf(DNS_RECORD_TYPES, { default: "A" }), ["dns"], oneOf(DNS_RECORD_TYPES)),
  dns_resolver: f(nullable(Type.String({ maxLength: 100 }), "ip[:port]; null means the system's first nameserver, which an account that may not reach private targets may not use"), ["dns"], "must be an IP address with an optional port, or null"),
  dns_expected_answer: f(nullable(Type.String({ minLength: 1, maxLength: 500 }), "null: any answer is up; otherwise one answer must equal it"), ["dns"], "must be a string of 1 to 500 characters, or null"),
  // websocket, grpc, smtp (docs/monitors.md "WebSocket, gRPC and SMTP attributes")
  ws_send: f(nullable(Type.String({ minLength: 1, maxLength: 65536 }), "text message sent once the connection is open; null sends nothing"), ["websocket"], "must be a string of 1 to 65536 characters, or null"),
  ws_expect: f(nullable(Type.String({ minLength: 1, maxLength: 1000 }), "text the first message from the server must contain; null: the open connection is enough"), ["websocket"], "must be a string of 1 to 1000 characters, or null"),
  grpc_service: f(Type.String({ maxLength: 200, default: "", description: 'service name asked of grpc.health.v1.Health/Check; "" asks about the server as a whole' }), ["grpc"], 'must be a string of at most 200 characters ("" for the server as a whole)'),
  grpc_tls: f(Type.Boolean({ default: false, description: "connect with TLS (false: plaintext)" }), ["grpc"], BOOL),
  smtp_security: f(enumOf(SMTP_SECURITY, { default: "none", description: "none: plain; starttls: upgrade after EHLO; tls: TLS from the first byte" }), ["smtp"], oneOf(SMTP_SECURITY)),
  // postgres, mysql, redis (docs/monitors.md "Database attributes")
  db_password: secret("write-only: the password sent when logging in (redis: AUTH); null removes it", PASSWORD),
  db_query: f(nullable(Type.String({ minLength: 1, maxLength: 10000 }), "query run after logging in; null runs SELECT 1"), SQL_DB, "must be a string of 1 to 10000 characters, or null for SELECT 1"),
  db_tls: f(Type.Boolean({ default: false, description: "connect with TLS, the certificate verified" }), SQL_DB, BOOL),
  redis_username: f(nullable(Type.String({ minLength: 1, maxLength: 200 }), "user name for AUTH (Redis 6 ACLs); null logs in with the password alone"), ["redis"], "must be a string of 1 to 200 characters, or null"),
  // docker, domain (docs/monitors.md "Docker and domain attributes")
  docker_host: f(nullable(Type.String({ maxLength: 500 }), "unix:///path, tcp://host:port or http://host:port of the Docker Engine API; null means unix:///var/run/docker.sock"), ["docker"], "must be unix:///path/to/docker.sock, tcp://host:port or http://host:port, or null for unix:///var/run/docker.sock"),
  domain_expiry_warn_days: f(Type.Integer({ minimum: 1, maximum: 365, default: 30, description: "days before the registration expires from which a check is degraded" }), ["domain"], "must be an integer from 1 to 365"),
  domain_expires_at: ro(isoOrNull("registration expiry the last check found (RDAP)"), ["domain"]),
  // heartbeat (docs/heartbeats.md "Heartbeat attributes")
  heartbeat_token: ro(nullable(Type.String(), "secret token of the ping URL {heartbeat_url}/h/<token>"), HEARTBEAT),
  heartbeat_period_sec: f(nullable(Type.Integer({ minimum: 1, maximum: MAX_HEARTBEAT_SEC }), "expected window between pings; null means interval_sec"), HEARTBEAT, `must be an integer of at least 1 (at most ${MAX_HEARTBEAT_SEC}), or null to use interval_sec`),
  heartbeat_grace_sec: f(nullable(Type.Integer({ minimum: 0, maximum: MAX_HEARTBEAT_SEC }), "extra tolerance before down; null means 0"), HEARTBEAT, `must be an integer of at least 0 (at most ${MAX_HEARTBEAT_SEC}), or null for 0`),
  heartbeat_notify_on_late: f(Type.Boolean({ default: false }), HEARTBEAT, BOOL),
  heartbeat_payload_policy: f(enumOf(PAYLOAD_POLICIES, { default: "none" }), HEARTBEAT, oneOf(PAYLOAD_POLICIES)),
  heartbeat_payload_status_key: f(nullable(Type.String({ maxLength: 200, pattern: "^[^.]+(\\.[^.]+)*$" }), "JSON key checked under status_ok, dot notation; null means status"), HEARTBEAT, "must be a key such as status or result.state (dot notation), or null for status"),
  heartbeat_last_ping_at: ro(isoOrNull("time of the last accepted ping"), HEARTBEAT),
  heartbeat_schedule: f(nullable(Type.String({ minLength: 1, maxLength: 200 }), "extension: cron expression of when runs are expected; null uses heartbeat_period_sec"), HEARTBEAT, "must be a cron expression such as */5 * * * *, or null"),
  heartbeat_timezone: f(nullable(Type.String({ minLength: 1, maxLength: 64, default: "UTC" }), "extension: IANA time zone of heartbeat_schedule; null is stored as UTC"), HEARTBEAT, "must be an IANA time zone name such as UTC or Europe/Paris, or null for UTC"),
} satisfies Record<string, MonitorField>;

export type MonitorAttributeName = keyof typeof MONITOR_FIELDS;
export const MONITOR_ATTRIBUTE_NAMES = Object.keys(MONITOR_FIELDS) as MonitorAttributeName[];

/**
 * Ignored on write so a client can send back what it read (docs/api-rules.md "Read-only and
 * write-only attributes").
 */
export const READ_ONLY_ATTRIBUTES = ["id", ...MONITOR_ATTRIBUTE_NAMES.filter((n) => MONITOR_FIELDS[n].access === "ro")];
/** The http monitor's authentication secrets, one per api_auth_type. */
export const AUTH_SECRET_ATTRIBUTES = ["api_auth_bearer_token", "api_auth_basic_pass", "api_auth_api_key_value"] as const;
/** Every write-only secret: never returned, sealed at rest, bound to where it was given. */
export const SECRET_ATTRIBUTES = [...AUTH_SECRET_ATTRIBUTES, "db_password"] as const;
export type SecretAttribute = (typeof SECRET_ATTRIBUTES)[number];

export function fieldApplies(name: MonitorAttributeName, type: MonitorType): boolean {
  const t = (MONITOR_FIELDS[name] as MonitorField).types;
  return t === "all" || t.includes(type);
}

/** Attribute names a monitor of `type` returns (never the write-only secrets). */
export function responseAttributes(type: MonitorType): MonitorAttributeName[] {
  return MONITOR_ATTRIBUTE_NAMES.filter((n) => MONITOR_FIELDS[n].access !== "wo" && fieldApplies(n, type));
}

function typesNote(field: MonitorField): string {
  return field.types === "all" ? "" : ` [${field.types.join(", ")} monitors only]`;
}

function documented(field: MonitorField): TSchema {
  const description = [(field.schema as { description?: string }).description, typesNote(field).trim()].filter(Boolean).join(" ");
  return { ...field.schema, description } as TSchema;
}

/** Attributes every monitor's response has, whatever its type. */
const ALWAYS_PRESENT = [
  "name", "monitor_type", "target", "method", "interval_sec", "timeout_ms", "group_id", "is_paused", "is_in_maintenance", "last_status", "last_checked_at", "next_run_at",
  "created_at", "updated_at", "synthetic_trace_body_detail", "regions", "notification_channel_ids",
  "tags", "depends_on_ids", "alert_repeat_minutes", "escalation_channel_ids", "escalate_after_minutes",
] as const satisfies readonly MonitorAttributeName[];

type ValueOf<K extends MonitorAttributeName> = Static<(typeof MONITOR_FIELDS)[K]["schema"]>;

/**
 * A monitor as responses show it: the common attributes always, the others when they belong to its
 * type, the write-only secrets never.
 */
export type MonitorAttributes = { [K in (typeof ALWAYS_PRESENT)[number]]: ValueOf<K> } & {
  [K in Exclude<MonitorAttributeName, (typeof ALWAYS_PRESENT)[number] | SecretAttribute>]?: ValueOf<K>;
};

/** What a POST must hold, whatever the type; all but heartbeat monitors need a `target` too. */
export const REQUIRED_ON_CREATE = ["name", "monitor_type", "interval_sec", "timeout_ms"] as const satisfies readonly MonitorAttributeName[];
export const requiredOnCreate = (type: MonitorType): MonitorAttributeName[] => [...REQUIRED_ON_CREATE, ...(type === "heartbeat" ? [] : (["target"] as const))];

const TYPE_DESCRIPTION = MONITOR_FIELDS.monitor_type.schema.description;
const typeLiteral = (type: MonitorType) => Type.Literal(type, { description: TYPE_DESCRIPTION });

/**
 * A monitor of `type` as responses show it (the OpenAPI document's per-type schemas): every
 * attribute of its type, always there, null when unset; the others never.
 */
export function monitorResponseSchema(type: MonitorType): TSchema {
  return Type.Object(Object.fromEntries(responseAttributes(type).map((n) => [n, n === "monitor_type" ? typeLiteral(type) : MONITOR_FIELDS[n].schema])), { description: `a ${type} monitor` });
}

/**
 * What a POST of a `type` monitor takes: the attributes of its type, those of requiredOnCreate
 * required; read-only ones are accepted and ignored, so a client can send back what it read.
 */
export function monitorCreateSchema(type: MonitorType): TSchema {
  const required = new Set<string>(requiredOnCreate(type));
  const props: Record<string, TSchema> = {};
  for (const n of MONITOR_ATTRIBUTE_NAMES) {
    const field = MONITOR_FIELDS[n] as MonitorField;
    if (!fieldApplies(n, type)) continue;
    if (n === "monitor_type") props[n] = typeLiteral(type);
    else if (field.access === "ro") props[n] = Type.Optional(Type.Any({ readOnly: true, description: "read-only: ignored on write" }));
    else props[n] = required.has(n) ? notNull(field.schema) : Type.Optional(field.schema);
  }
  return Type.Object(props, { additionalProperties: false, description: `a new ${type} monitor` });
}

/**
 * Writable attributes of a PATCH: every one optional, as only those sent change. Attributes of
 * another monitor type are a 422; read-only attributes (and id) are ignored.
 */
export const MonitorUpdateAttributesSchema = Type.Object(
  Object.fromEntries(
    MONITOR_ATTRIBUTE_NAMES.map((n) => {
      const field = MONITOR_FIELDS[n];
      if (field.access === "ro") return [n, Type.Optional(Type.Any({ readOnly: true, description: "read-only: ignored on write" }))];
      return [n, Type.Optional(documented(field))];
    }),
  ),
  {
    additionalProperties: false,
    description: "Only the attributes sent change. Attributes of another monitor type are a 422; read-only attributes (and id) are ignored.",
  },
);
