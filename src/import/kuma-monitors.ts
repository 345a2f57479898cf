/**
 * Uptime Kuma's monitors as Vigil monitors (README "Coming from Uptime Kuma"): one lookup table from
 * Kuma's monitor type to the Vigil attributes, with what was not kept said in notes, or the reason
 * the monitor cannot be one. The columns read exist in both 1.23 and 2.x unless said otherwise; a
 * column a version lacks reads as undefined.
 */
import { expectedRedirects } from "../domain/expected-codes.ts";
import type { KumaRow } from "../store/uptime-kuma-file.ts";
import { MAX_REDIRECTS } from "../domain/monitor.ts";
import { dropBodyChecksOnHead, fitInterval, fitTimeout, hostPort } from "./plan.ts";

type Mapped = { attributes: Record<string, unknown>; notes: string[] } | { skip: string };
type TypeMap = (m: KumaRow, ctx: MonitorContext, notes: string[]) => Record<string, unknown> | string;

/** What a monitor's mapping needs besides its own row. */
export interface MonitorContext {
  dockerHosts: Map<number, KumaRow>;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : null);
const flag = (v: unknown): boolean => v === 1 || v === true || v === "1";

/** Kuma's accepted status codes (["200-299", "301"]) as a list Vigil reads ("200-299", "301"). */
function acceptedCodes(m: KumaRow, notes: string[]): string[] {
  let list: unknown;
  try {
    list = JSON.parse(String(m.accepted_statuscodes_json ?? '["200-299"]'));
  } catch {
    list = null;
  }
  if (!Array.isArray(list)) return [];
  const codes = list.map(String).filter((c) => /^\d{3}(-\d{3})?$/.test(c));
  if (codes.length !== list.length) notes.push(`accepted status codes ${list.filter((c) => !codes.includes(String(c))).join(", ")} not kept`);
  return codes;
}

/** "200-399" without its 3xx part: "200-299"; a code or range wholly in 3xx is gone. */
function without3xx(code: string): string[] {
  const [from, to = from] = code.split("-").map(Number) as [number, number?];
  const text = (a: number, b: number) => (a === b ? String(a) : `${a}-${b}`);
  return [...(from < 300 ? [text(from, Math.min(to, 299))] : []), ...(to > 399 ? [text(Math.max(from, 400), to)] : [])];
}

/**
 * Kuma's maxredirects and accepted codes as follow_redirects and expected_http_codes. Kuma judges the
 * answer after the redirects it follows, so a 3xx it accepts there is never that answer, and Vigil
 * refuses to expect one while following (domain/expected-codes.ts): the 3xx codes are dropped, said
 * in a note (README "Coming from Uptime Kuma").
 */
function redirectsAndCodes(m: KumaRow, a: Record<string, unknown>, notes: string[]): void {
  let codes = acceptedCodes(m, notes);
  const redirects = Number(m.maxredirects ?? 10);
  a.follow_redirects = redirects > 0;
  if (a.follow_redirects && expectedRedirects(codes.join(",")).length) {
    const kept = codes.flatMap(without3xx);
    notes.push(`3xx codes dropped from the accepted status codes (${codes.join(", ")} → ${kept.join(", ") || "200-299, the default"}): Kuma follows redirects here, so a redirect is never the answer it judges, nor Vigil's, which follows them too`);
    codes = kept;
  }
  if (a.follow_redirects && redirects !== MAX_REDIRECTS) notes.push(`follows up to ${MAX_REDIRECTS} redirects (Kuma: ${redirects})`);
  if (codes.length && !(codes.length === 1 && codes[0] === "200-299")) a.expected_http_codes = codes.join(",");
}

/** Kuma's JSONata path as a Vigil dot path, when it is a plain path (a.b, a[0].b, $.a). */
function dotPath(expr: string): string | null {
  const e = expr.trim().replace(/^\$\.?/, "");
  return /^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*|\[\d+\])*$/.test(e) || e === "" ? e : null;
}

const JSON_OPS: Record<string, string> = { "==": "equals", "!=": "not_equals", "<": "less_than", ">": "greater_than", contains: "contains" };

function http(m: KumaRow, _ctx: MonitorContext, notes: string[]): Record<string, unknown> | string {
  const a: Record<string, unknown> = { monitor_type: "http", target: str(m.url), method: (str(m.method) ?? "GET").toUpperCase() };
  redirectsAndCodes(m, a, notes);
  a.tls_verify = !flag(m.ignore_tls);
  const headers: Record<string, string> = {};
  if (str(m.headers)) {
    try {
      const parsed = JSON.parse(String(m.headers)) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) for (const [k, v] of Object.entries(parsed)) headers[k] = String(v);
      else notes.push("headers not kept: they are not a JSON object");
    } catch {
      notes.push("headers not kept: they are not valid JSON");
    }
  }
  const body = str(m.body);
  if (body) {
    a.api_body = body;
    // Kuma sets the content type from the body encoding; Vigil sends the headers it is given
    const type = ({ json: "application/json", form: "application/x-www-form-urlencoded", xml: "text/xml; charset=utf-8" } as Record<string, string>)[str(m.http_body_encoding) ?? "json"];
    if (type && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) headers["Content-Type"] = type;
  }
  if (Object.keys(headers).length) a.api_headers_json = headers;
  const auth = str(m.auth_method) ?? (str(m.basic_auth_user) ? "basic" : null);
  if (auth === "basic") {
    a.api_auth_type = "basic";
    a.api_auth_basic_user = str(m.basic_auth_user);
    a.api_auth_basic_pass = str(m.basic_auth_pass);
    if (!a.api_auth_basic_user || !a.api_auth_basic_pass) return "basic authentication without a user name or password";
  } else if (auth === "bearer") {
    if (!str(m.bearer_token)) return "bearer authentication without a token";
    a.api_auth_type = "bearer";
    a.api_auth_bearer_token = str(m.bearer_token);
  } else if (auth && auth !== "none") {
    return `it logs in with ${auth === "oauth2-cc" ? "OAuth2 client credentials" : auth === "mtls" ? "a TLS client certificate" : auth.toUpperCase()}, which Vigil's http monitor cannot do (it has basic, bearer and API key)`;
  }
  if (m.type === "keyword") {
    const keyword = typeof m.keyword === "string" && m.keyword !== "" ? m.keyword : null;
    if (!keyword) notes.push("empty keyword not kept");
    else if (flag(m.invert_keyword)) notes.push(`inverted keyword "${keyword}" not kept: Vigil's keyword must be present`);
    else a.keyword = keyword.slice(0, 1000);
  }
  if (m.type === "json-query") {
    const path = dotPath(String(m.json_path ?? ""));
    const op = JSON_OPS[str(m.json_path_operator) ?? "=="];
    if (path === null) notes.push(`JSON query "${m.json_path}" not kept: Vigil's assertions take a plain path such as data.status or items[0].id`);
    else if (!op) notes.push(`JSON query operator ${m.json_path_operator} not kept: Vigil compares with ==, !=, <, > and contains`);
    else a.api_json_assertions_json = [{ path: path === "" ? "$" : path, op, value: String(m.expected_value ?? "") }];
  }
  if (m.proxy_id) notes.push("proxy not kept: Vigil connects directly");
  dropBodyChecksOnHead(a, notes);
  return a;
}

/** Kuma's database connection string split into a target without the password, and the password. */
function databaseTarget(m: KumaRow, scheme: "postgres" | "mysql" | "redis", a: Record<string, unknown>, notes: string[]): string | null {
  const text = str(m.database_connection_string);
  if (!text) return "it has no connection string";
  let u: URL;
  try {
    u = new URL(text.replace(/^postgresql:/, "postgres:").replace(/^mariadb:/, "mysql:"));
  } catch {
    return "its connection string is not a URL";
  }
  const password = decodeURIComponent(u.password);
  if (password) a.db_password = password;
  u.password = "";
  if (scheme === "redis") {
    if (!/^rediss?:$/.test(u.protocol)) return `its connection string is not a redis:// URL`;
    if (u.username && u.username !== "default") a.redis_username = decodeURIComponent(u.username);
    u.username = "";
  } else {
    if (u.protocol !== `${scheme}:`) return `its connection string is not a ${scheme}:// URL`;
    const ssl = u.searchParams.get("sslmode") ?? u.searchParams.get("ssl");
    if (ssl && ssl !== "disable" && ssl !== "false") a.db_tls = true;
    if ([...u.searchParams.keys()].some((k) => k !== "sslmode" && k !== "ssl")) notes.push(`connection options ${[...u.searchParams.keys()].join(", ")} not kept`);
    u.search = "";
    if (str(m.database_query)) a.db_query = str(m.database_query);
  }
  a.target = u.toString().replace(/\/$/, "");
  return null;
}

const database = (scheme: "postgres" | "mysql" | "redis"): TypeMap => (m, _ctx, notes) => {
  const a: Record<string, unknown> = { monitor_type: scheme };
  return databaseTarget(m, scheme, a, notes) ?? a;
};

const DNS_TYPES = ["A", "AAAA", "CNAME", "MX", "TXT", "NS"];

const TYPES: Record<string, TypeMap> = {
  http,
  keyword: http,
  "json-query": http,
  port: (m, _ctx, notes) => {
    if (!str(m.hostname) || !m.port) return "it has no host or port";
    // 2.x keeps a port monitor's TLS choice in the smtp monitor's column
    const tls = ({ secure: "SSL", starttls: "STARTTLS" } as Record<string, string>)[str(m.smtp_security) ?? ""];
    if (tls) notes.push(`${tls} not kept: Vigil's tcp monitor only opens the connection (an ssl monitor watches a certificate)`);
    return { monitor_type: "tcp", target: hostPort(str(m.hostname)!, Number(m.port)) };
  },
  ping: (m) => (str(m.hostname) ? { monitor_type: "ping", target: str(m.hostname) } : "it has no host"),
  dns: (m, _ctx, notes) => {
    const type = str(m.dns_resolve_type) ?? "A";
    if (!DNS_TYPES.includes(type)) return `Vigil's dns monitor asks for ${DNS_TYPES.join(", ")}, not ${type}`;
    const a: Record<string, unknown> = { monitor_type: "dns", target: str(m.hostname), dns_record_type: type };
    const servers = (str(m.dns_resolve_server) ?? "").split(",").map((s) => s.trim()).filter(Boolean);
    if (servers.length) {
      const port = Number(m.port) || 53;
      a.dns_resolver = port === 53 ? servers[0] : hostPort(servers[0]!, port);
      if (servers.length > 1) notes.push(`resolvers ${servers.slice(1).join(", ")} not kept: Vigil asks one`);
    }
    const conditions = parseConditions(m.conditions);
    const single = conditions.length === 1 ? conditions[0] : null;
    if (single && single.variable === "record" && single.operator === "equals") a.dns_expected_answer = single.value;
    else if (conditions.length) notes.push("DNS conditions not kept: Vigil can only require one answer to equal a value");
    return a;
  },
  push: () => ({ monitor_type: "heartbeat" }),
  docker: (m, ctx) => {
    if (!str(m.docker_container)) return "it names no container";
    const a: Record<string, unknown> = { monitor_type: "docker", target: str(m.docker_container) };
    const host = m.docker_host ? ctx.dockerHosts.get(Number(m.docker_host)) : undefined;
    const daemon = host ? str(host.docker_daemon) : null;
    if (daemon) {
      if (host!.docker_type === "socket") a.docker_host = daemon.startsWith("unix://") ? daemon : `unix://${daemon}`;
      else if (/^(tcp|http):\/\//.test(daemon)) a.docker_host = daemon;
      else return `its Docker host ${daemon} is not a socket, tcp:// or http:// address (Vigil does not speak TLS to the Docker API)`;
    }
    return a;
  },
  postgres: database("postgres"),
  mysql: database("mysql"),
  redis: database("redis"),
  "grpc-keyword": (m, _ctx, notes) => {
    if (!str(m.grpc_url)) return "it has no gRPC address";
    notes.push(`Vigil asks grpc.health.v1.Health/Check instead of calling ${str(m.grpc_service_name) ?? "the service"}/${str(m.grpc_method) ?? "method"} and looking for "${m.keyword ?? ""}"`);
    return { monitor_type: "grpc", target: str(m.grpc_url)!.replace(/^grpcs?:\/\//, ""), grpc_tls: flag(m.grpc_enable_tls) };
  },
  smtp: (m) => {
    if (!str(m.hostname)) return "it has no host";
    const security = ({ secure: "tls", starttls: "starttls" } as Record<string, string>)[str(m.smtp_security) ?? ""] ?? "none";
    return { monitor_type: "smtp", target: m.port ? hostPort(str(m.hostname)!, Number(m.port)) : str(m.hostname), smtp_security: security, tls_verify: !flag(m.ignore_tls) };
  },
  "websocket-upgrade": (m, _ctx, notes) => {
    if (str(m.ws_subprotocol)) notes.push(`subprotocol ${m.ws_subprotocol} not kept`);
    return { monitor_type: "websocket", target: str(m.url), tls_verify: !flag(m.ignore_tls) };
  },
};

interface Condition {
  variable: string;
  operator: string;
  value: string;
}

/**
 * Kuma 2.x's conditions (JSON: expressions `{type: "expression", variable, operator, value}` and
 * groups `{type: "group", children}`), top level only; a group reads as one condition nothing matches.
 */
function parseConditions(json: unknown): Condition[] {
  try {
    const list = JSON.parse(String(json ?? "[]")) as unknown;
    if (!Array.isArray(list)) return [];
    return list.map((c) => c as Condition & { type?: string }).map((c) => (c.type === "group" ? { variable: "", operator: "group", value: "" } : c));
  } catch {
    return [];
  }
}

/** The monitor a Kuma monitor row becomes (attributes without references), or why it cannot be one. */
export function mapKumaMonitor(m: KumaRow, ctx: MonitorContext): Mapped {
  const type = String(m.type ?? "");
  const map = TYPES[type];
  if (!map) return { skip: type === "group" ? "a group monitor" : `Vigil has no ${type || "untyped"} monitor` };
  if (flag(m.upside_down)) return { skip: "it is in upside-down mode (up when the target fails), which Vigil has no way to express" };
  const notes: string[] = [];
  const mapped = map(m, ctx, notes);
  if (typeof mapped === "string") return { skip: mapped };
  const interval = fitInterval(Number(m.interval) || 60, notes);
  const a: Record<string, unknown> = { ...mapped, interval_sec: interval };
  if (type === "push") {
    a.timeout_ms = Math.min(10_000, interval * 1000 - 1000);
    a.heartbeat_period_sec = interval;
  } else {
    // Kuma's timeout is in seconds; 0 or none means 80 % of the interval, as Kuma runs it
    const sec = Number(m.timeout);
    a.timeout_ms = fitTimeout(sec > 0 ? sec * 1000 : interval * 800, interval, notes);
  }
  if (!flag(m.active ?? 1)) a.is_paused = true;
  if (str(m.description)) notes.push("description not kept");
  // Kuma repeats the down alert every resend_interval checks; Vigil every alert_repeat_minutes
  const resend = Number(m.resend_interval);
  if (resend > 0) {
    const minutes = Math.round((resend * interval) / 60);
    a.alert_repeat_minutes = Math.min(1440, Math.max(5, minutes));
    if (a.alert_repeat_minutes !== minutes) notes.push(`down alert repeated every ${a.alert_repeat_minutes} minutes (Kuma: every ${resend} checks, ${minutes} minutes; Vigil takes 5 to 1440)`);
  }
  return { attributes: a, notes };
}
