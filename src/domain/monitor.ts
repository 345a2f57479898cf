/**
 * The monitor as the rest of the system sees it: one flat record whose fields depend on
 * `monitor_type` (docs/monitors.md "Types and attributes"). Secrets are held decrypted only in
 * memory, never serialised by the API mappers.
 */
export const MONITOR_TYPES = ["http", "tcp", "dns", "ssl", "heartbeat", "ping", "websocket", "grpc", "smtp", "postgres", "mysql", "redis", "docker", "domain"] as const;
export type MonitorType = (typeof MONITOR_TYPES)[number];

export const MONITOR_STATES = ["up", "down", "degraded", "unknown"] as const;
export type MonitorState = (typeof MONITOR_STATES)[number];

export const HTTP_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/**
 * Redirects an http monitor follows at most: as many as Nagios' check_http and check_curl, so a
 * chain they follow is not a failure here, while a loop still ends quickly (docs/monitors.md, "HTTP answers").
 */
export const MAX_REDIRECTS = 15;

export const AUTH_TYPES = ["none", "bearer", "basic", "api_key"] as const;
export type AuthType = (typeof AUTH_TYPES)[number];

export const DNS_RECORD_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "NS"] as const;
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

/** How an SMTP connection is secured: the smtp monitor's `smtp_security` and the email channel's alike. */
export const SMTP_SECURITY = ["none", "starttls", "tls"] as const;
export type SmtpSecurity = (typeof SMTP_SECURITY)[number];

export const TRACE_BODY_DETAILS = ["none", "truncated", "full"] as const;
export type TraceBodyDetail = (typeof TRACE_BODY_DETAILS)[number];

export const JSON_ASSERTION_OPS = [
  "equals", "not_equals", "contains", "not_contains", "greater_than", "less_than", "is_null", "is_not_null", "regex",
] as const;
export type JsonAssertionOp = (typeof JSON_ASSERTION_OPS)[number];

export interface JsonAssertion {
  path: string;
  op: JsonAssertionOp;
  value?: string;
}

/** What a probe needs to run one check. Secrets are plaintext here; only the store encrypts. */
export interface ProbeMonitor {
  id: number;
  monitor_type: MonitorType;
  target: string | null;
  method: HttpMethod;
  timeout_ms: number;
  interval_sec: number;
  port: number | null;
  // http
  expected_http_codes: string | null;
  keyword: string | null;
  api_expected_content_type: string | null;
  api_expected_body_contains: string | null;
  api_max_latency_ms: number | null;
  api_json_assertions_json: JsonAssertion[] | null;
  api_headers_json: Record<string, string> | null;
  api_body: string | null;
  api_auth_type: AuthType;
  api_auth_basic_user: string | null;
  api_auth_api_key_header: string | null;
  api_auth_bearer_token: string | null;
  api_auth_basic_pass: string | null;
  api_auth_api_key_value: string | null;
  synthetic_enabled: boolean;
  synthetic_steps_json: SyntheticScenario | null;
  synthetic_trace_body_detail: TraceBodyDetail;
  tls_verify: boolean;
  follow_redirects: boolean;
  ssl_expiry_warn_days: number | null;
  // dns
  dns_record_type: DnsRecordType;
  dns_resolver: string | null;
  dns_expected_answer: string | null;
  // websocket (also uses api_headers_json and tls_verify)
  ws_send: string | null;
  ws_expect: string | null;
  // grpc (also tls_verify)
  grpc_service: string;            // "" = the server as a whole
  grpc_tls: boolean;
  // smtp (also tls_verify, ssl_expiry_warn_days)
  smtp_security: SmtpSecurity;
  // postgres, mysql (db_password also redis)
  db_password: string | null;      // write-only secret, plaintext here only
  db_query: string | null;         // null = SELECT 1
  db_tls: boolean;
  redis_username: string | null;
  // docker
  docker_host: string | null;      // null = unix:///var/run/docker.sock
  // domain
  domain_expiry_warn_days: number; // 1-365, default 30
  /** the owning account's private-target rule: refuse private, loopback and link-local addresses */
  block_private_targets: boolean;
}

/** Declarative multi-step scenario (`synthetic_steps_json`); the schema is documented in the README. */
export interface SyntheticScenario {
  steps: SyntheticStep[];
}

export interface SyntheticStep {
  name?: string;
  method?: HttpMethod;
  url: string;
  headers?: Record<string, string>;
  body?: string;
  expected_http_codes?: string;
  extract?: SyntheticExtraction[];
  assertions?: JsonAssertion[];
}

export interface SyntheticExtraction {
  /** variable name, used later as {{name}} */
  name: string;
  from: "json" | "header" | "regex";
  /** dot path for json, header name for header, pattern with one capture group for regex */
  path: string;
}

/** Days of notice before certificate expiry degrades a check, when ssl_expiry_warn_days is null. */
export const DEFAULT_SSL_EXPIRY_WARN_DAYS = 14;
/** Days of notice before a domain's registration expiry degrades a check, when domain_expiry_warn_days is null. */
export const DEFAULT_DOMAIN_EXPIRY_WARN_DAYS = 30;
