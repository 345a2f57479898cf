/**
 * Validation of monitor writes (docs/monitors.md "Types and attributes", docs/api-rules.md
 * "Validation errors"): pure, so the API, the CLI and tests share it. Every problem is collected per
 * attribute in one pass, with a message a person can act on; secret values are never echoed.
 */
import { Value } from "@sinclair/typebox/value";
import { expectedCodesProblems, expectedRedirects } from "./expected-codes.ts";
import { isValidTimezone, scheduleProblem } from "./heartbeat-rules.ts";
import { MONITOR_TYPES, type MonitorType } from "./monitor.ts";
import {
  AUTH_SECRET_ATTRIBUTES,
  fieldApplies,
  MONITOR_ATTRIBUTE_NAMES,
  MONITOR_FIELDS,
  READ_ONLY_ATTRIBUTES,
  REQUIRED_ON_CREATE,
  type MonitorAttributeName,
  type MonitorField,
  type SecretAttribute,
} from "./monitor-schema.ts";
import { escalationRules } from "./alerting-rules.ts";
import { dockerHostProblem, resolverProblem, targetProblem } from "./monitor-targets.ts";
import { holdsNul, NUL_MESSAGE } from "./text-rules.ts";
import { normalTags, tagsProblems } from "./tags.ts";
import { assertionProblems, headerProblems, scenarioProblems } from "./synthetic-schema.ts";
import { newDetails } from "./details.ts";
import { BODY_CHECKS, bodyCheckOnHeadProblem, bodyChecksOnHead } from "./body-checks.ts";
import { databaseOrigin, newOrigins, secretOrigins } from "./secret-origins.ts";

export type Details = Record<string, string[]>;
export type MonitorChanges = Partial<Record<MonitorAttributeName, unknown>>;

/** The stored monitor a PATCH applies to, in API terms. */
export interface ExistingMonitor {
  type: MonitorType;
  /** attribute values as the API returns them */
  values: Record<string, unknown>;
  /** which write-only secrets are stored */
  secrets: Record<SecretAttribute, boolean>;
}

export interface MonitorWriteResult {
  /** null when a create named no valid monitor_type */
  type: MonitorType | null;
  /** normalised values to store; secrets are plaintext, null clears one */
  changes: MonitorChanges;
  details: Details;
}

/** Defaults filled in on create (docs/monitors.md "Types and attributes"), per attribute. */
export const MONITOR_DEFAULTS: MonitorChanges = {
  method: "GET",
  group_id: null,
  is_paused: false,
  is_in_maintenance: false,
  synthetic_trace_body_detail: "truncated",
  regions: null,
  tags: [],
  editor_ui_profile: null,
  port: null,
  expected_http_codes: null,
  keyword: null,
  api_expected_content_type: null,
  api_expected_body_contains: null,
  api_max_latency_ms: null,
  synthetic_enabled: false,
  api_json_assertions_json: null,
  api_headers_json: null,
  api_body: null,
  synthetic_steps_json: null,
  api_auth_type: "none",
  api_auth_basic_user: null,
  api_auth_api_key_header: null,
  follow_redirects: true,
  tls_verify: true,
  ssl_expiry_warn_days: null,
  dns_record_type: "A",
  dns_resolver: null,
  dns_expected_answer: null,
  ws_send: null,
  ws_expect: null,
  grpc_service: "",
  grpc_tls: false,
  smtp_security: "none",
  db_query: null,
  db_tls: false,
  redis_username: null,
  docker_host: null,
  domain_expiry_warn_days: 30,
  heartbeat_period_sec: null,
  heartbeat_grace_sec: null,
  heartbeat_notify_on_late: false,
  heartbeat_payload_policy: "none",
  heartbeat_payload_status_key: null,
  heartbeat_schedule: null,
  heartbeat_timezone: "UTC",
  alert_repeat_minutes: null,
  escalate_after_minutes: null,
};

/** monitor_type is checked on its own, target by the type's target rule */
const REQUIRED = REQUIRED_ON_CREATE.filter((n) => n !== "monitor_type");

type AuthSecret = (typeof AUTH_SECRET_ATTRIBUTES)[number];
/** What each auth type needs: the secret and, for basic and api_key, a plain companion. */
const AUTH_NEEDS: Record<string, { secret: AuthSecret; plain?: MonitorAttributeName }> = {
  bearer: { secret: "api_auth_bearer_token" },
  basic: { secret: "api_auth_basic_pass", plain: "api_auth_basic_user" },
  api_key: { secret: "api_auth_api_key_value", plain: "api_auth_api_key_header" },
};
const SECRET_OWNER: Record<AuthSecret, string> = { api_auth_bearer_token: "bearer", api_auth_basic_pass: "basic", api_auth_api_key_value: "api_key" };

/** Types that log in with `db_password`, bound to their target's host and port. */
const PASSWORD_TYPES: readonly MonitorType[] = ["postgres", "mysql", "redis"];

/** Structured attributes get specific messages (which rule, which step) instead of the generic one. */
const STRUCTURED: Partial<Record<MonitorAttributeName, (v: unknown) => string[]>> = {
  api_json_assertions_json: (v) => assertionProblems(v),
  api_headers_json: (v) => headerProblems(v),
  synthetic_steps_json: (v) => scenarioProblems(v),
  tags: (v) => tagsProblems(v),
};

/** Per-attribute checks beyond the schema, on a value that already matches it. */
function valueProblems(name: MonitorAttributeName, value: unknown): string[] {
  if (value === null) return [];
  switch (name) {
    case "name":
      return (value as string).trim() === "" ? ["must not be blank"] : [];
    case "expected_http_codes":
      return expectedCodesProblems(value as string);
    case "dns_resolver": {
      const p = resolverProblem(value as string);
      return p ? [p] : [];
    }
    case "heartbeat_timezone":
      return isValidTimezone(value as string) ? [] : [(MONITOR_FIELDS.heartbeat_timezone as MonitorField).message];
    case "docker_host": {
      const p = dockerHostProblem(value as string);
      return p ? [p] : [];
    }
    default:
      return [];
  }
}

function normalise(name: MonitorAttributeName, value: unknown): unknown {
  if (name === "heartbeat_timezone" && value === null) return "UTC";
  if (name === "tags") return normalTags(value as string[]);
  if (typeof value !== "string") return value;
  if (name === "name" || name === "target" || name === "dns_resolver" || name === "heartbeat_schedule" || name === "expected_http_codes" || name === "docker_host") return value.trim();
  return value;
}

/**
 * Validates a create (no `existing`) or a partial update of `existing`, returning the normalised
 * changes and the 422 details. Ownership of referenced ids (notification channels) needs the
 * database and is checked by the caller.
 */
export function validateMonitorWrite(input: Record<string, unknown>, existing?: ExistingMonitor): MonitorWriteResult {
  const details: Details = newDetails();
  const add = (attr: string, message: string) => void (details[attr] ??= []).push(message);
  const changes: MonitorChanges = {};

  let type: MonitorType | null;
  if (existing) {
    type = existing.type;
    if ("monitor_type" in input && input.monitor_type !== existing.type) add("monitor_type", `cannot be changed after creation (this monitor is ${existing.type}); create a new monitor instead`);
  } else if (!("monitor_type" in input) || input.monitor_type === null) {
    type = null;
    add("monitor_type", `is required: one of ${MONITOR_TYPES.join(", ")}`);
  } else if (!(MONITOR_TYPES as readonly unknown[]).includes(input.monitor_type)) {
    type = null;
    add("monitor_type", MONITOR_FIELDS.monitor_type.message);
  } else {
    type = input.monitor_type as MonitorType;
    changes.monitor_type = type;
  }

  for (const [key, value] of Object.entries(input)) {
    if (READ_ONLY_ATTRIBUTES.includes(key) || key === "monitor_type") continue;
    if (!Object.hasOwn(MONITOR_FIELDS, key)) { // `in` would accept inherited names such as toString
      add(key, "is not a monitor attribute; see the monitor fields in /api/v1/openapi.json");
      continue;
    }
    const name = key as MonitorAttributeName;
    const field = MONITOR_FIELDS[name] as MonitorField;
    if (type && !fieldApplies(name, type)) {
      add(name, `does not apply to ${type} monitors; it is for ${(field.types as readonly string[]).join(", ")} monitors`);
      continue;
    }
    if (holdsNul(value)) {
      add(name, NUL_MESSAGE);
      continue;
    }
    const structured = STRUCTURED[name];
    const problems = structured && value !== null ? structured(value) : Value.Check(field.schema, value) ? valueProblems(name, value) : [field.message];
    if (problems.length) for (const p of problems) add(name, p);
    else changes[name] = normalise(name, value);
  }

  if (!existing) {
    for (const name of REQUIRED) if (!(name in input) || input[name] === null) if (!details[name]) details[name] = ["is required"];
    if (type) for (const name of MONITOR_ATTRIBUTE_NAMES) if (name in MONITOR_DEFAULTS && !(name in changes) && fieldApplies(name, type)) changes[name] = MONITOR_DEFAULTS[name];
  }
  if (type) crossFieldRules(type, changes, existing, details, add);
  return { type, changes, details };
}

function crossFieldRules(type: MonitorType, changes: MonitorChanges, existing: ExistingMonitor | undefined, details: Details, add: (a: string, m: string) => void): void {
  const merged: Record<string, unknown> = { ...existing?.values, ...changes };
  // A rule runs on create, or when one of its inputs changes; an untouched stored value is not re-judged.
  const touched = (...names: string[]) => !existing || names.some((n) => n in changes);
  const clean = (...names: string[]) => names.every((n) => !details[n]);

  if (touched("interval_sec", "timeout_ms") && clean("interval_sec", "timeout_ms") && typeof merged.interval_sec === "number" && typeof merged.timeout_ms === "number") {
    if (merged.timeout_ms >= merged.interval_sec * 1000) add("timeout_ms", `must be below interval_sec × 1000 (${merged.interval_sec * 1000} ms for an interval of ${merged.interval_sec} s)`);
  }
  if (touched("target", "port") && clean("target", "port")) {
    const p = targetProblem(type, (merged.target as string | null) ?? null, (merged.port as number | null) ?? null);
    if (p) add("target", p);
  }
  if (type === "http") authRules(changes, existing, merged, touched, add);
  if (type === "http" && existing) secretBindingRules(changes, existing, merged, add);
  if (PASSWORD_TYPES.includes(type) && existing && clean("target")) passwordBindingRule(changes, existing, merged, add);
  if (type === "http" && touched("expected_http_codes", "follow_redirects") && clean("expected_http_codes", "follow_redirects") && merged.follow_redirects !== false) {
    const redirects = expectedRedirects(merged.expected_http_codes as string | null);
    if (redirects.length) {
      const msg = `expects ${redirects.join(", ")}, which is never the answer while follow_redirects is true (the redirect is followed); set follow_redirects to false to judge the redirect itself`;
      add("expected_http_codes", msg);
      add("follow_redirects", msg);
    }
  }
  if (type === "http" && touched("method", ...BODY_CHECKS) && clean("method", ...BODY_CHECKS)) {
    const onHead = bodyChecksOnHead(merged);
    for (const a of onHead) add(a, bodyCheckOnHeadProblem(a));
    if (onHead.length) add("method", `is HEAD, whose answer has no body, so ${onHead.join(" and ")} can never be met; use GET, or remove ${onHead.length > 1 ? "them" : "it"}`);
  }
  if (type === "http" && touched("synthetic_enabled", "synthetic_steps_json") && clean("synthetic_steps_json") && merged.synthetic_enabled === true && !merged.synthetic_steps_json) {
    add("synthetic_steps_json", 'is required when synthetic_enabled is true: {"steps": [{"url": "..."}]}');
  }
  escalationRules(merged, touched, clean, add);
  if (type === "heartbeat" && touched("heartbeat_schedule", "heartbeat_timezone") && clean("heartbeat_schedule", "heartbeat_timezone") && typeof merged.heartbeat_schedule === "string") {
    // one rule for the API and the heartbeat timers: a schedule croner parses and that fires again
    const p = scheduleProblem(merged.heartbeat_schedule, (merged.heartbeat_timezone as string) ?? "UTC");
    if (p) add(p.attribute, p.message);
  }
}

/**
 * api_auth_type selects the secret (docs/monitors.md "Authentication secrets"): the selected one must
 * exist, others must not be sent.
 */
function authRules(changes: MonitorChanges, existing: ExistingMonitor | undefined, merged: Record<string, unknown>, touched: (...n: string[]) => boolean, add: (a: string, m: string) => void): void {
  if (!touched("api_auth_type", "api_auth_basic_user", "api_auth_api_key_header", ...AUTH_SECRET_ATTRIBUTES)) return;
  const authType = (merged.api_auth_type as string) ?? "none";
  const need = AUTH_NEEDS[authType];
  for (const s of AUTH_SECRET_ATTRIBUTES) {
    if (SECRET_OWNER[s] === authType) continue;
    if (changes[s] !== undefined && changes[s] !== null) {
      add(s, `is used only when api_auth_type is ${SECRET_OWNER[s]}; set api_auth_type to ${SECRET_OWNER[s]} or leave it out`);
      delete changes[s];
    } else if (existing?.secrets[s] && "api_auth_type" in changes) {
      changes[s] = null; // a secret the selected auth type no longer uses is not kept around
    }
  }
  if (!need) return;
  const hasSecret = need.secret in changes ? changes[need.secret] !== null : existing?.secrets[need.secret] === true;
  if (!hasSecret) add(need.secret, `is required when api_auth_type is ${authType} (write-only: it is stored encrypted and never returned)`);
  if (need.plain && (merged[need.plain] === null || merged[need.plain] === undefined)) add(need.plain, `is required when api_auth_type is ${authType}`);
}

/**
 * Stored secrets stay bound to the origins they were given for (secret-origins.ts): a write that
 * would send them to a new origin must send them again (422 naming each), or clear them.
 */
function secretBindingRules(changes: MonitorChanges, existing: ExistingMonitor, merged: Record<string, unknown>, add: (a: string, m: string) => void): void {
  const kept = AUTH_SECRET_ATTRIBUTES.filter((s) => existing.secrets[s] && !(s in changes));
  if (kept.length === 0) return;
  const moved = newOrigins(existing.values, merged);
  if (moved.length === 0) return;
  const bound = [...secretOrigins(existing.values)].join(", ") || "none";
  for (const s of kept) {
    add(s, `must be sent again (or set to null) with this change: it would send requests to ${moved.join(", ")}, and a stored secret goes only to the origins it was given for (${bound})`);
  }
}

/**
 * The same binding for `db_password` (secret-origins.ts): a target moved to another host or port
 * must bring the password again (or clear it); a new user or database on the same server need not.
 */
function passwordBindingRule(changes: MonitorChanges, existing: ExistingMonitor, merged: Record<string, unknown>, add: (a: string, m: string) => void): void {
  if (!existing.secrets.db_password || "db_password" in changes) return;
  const before = databaseOrigin(existing.values.target);
  const after = databaseOrigin(merged.target);
  if (after === null || after === before) return;
  add("db_password", `must be sent again (or set to null) with this change: it would be sent to ${after}, and a stored password goes only to the server it was given for (${before ?? "none"})`);
}
