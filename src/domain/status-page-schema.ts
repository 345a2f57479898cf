/**
 * Status page attributes (docs/api-rules.md "Status page attributes", README "Status pages"):
 * TypeBox schemas for the OpenAPI document and the pure validation of writes. Uniqueness (slug,
 * custom_domain) and ownership (monitor_ids) need the store; the API checks them.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { isIP } from "node:net";
import { isHostname } from "./monitor-targets.ts";
import { SLUG_MAX, SLUG_PATTERN, isValidSlug } from "./slug.ts";
import { newDetails } from "./details.ts";
import { breaksLine, holdsNul, NUL_MESSAGE, ONE_LINE_MESSAGE } from "./text-rules.ts";
import { EXTERNAL_ID_MESSAGE, EXTERNAL_ID_SCHEMA, nullable } from "./schema-parts.ts";

/** At least 16 characters (README "Status pages"); tokens set before this rule keep working. */
export const ACCESS_TOKEN_MIN = 16;
export const ACCESS_TOKEN_PATTERN = `^[A-Za-z0-9._~-]{${ACCESS_TOKEN_MIN},128}$`;

const BOOL = "must be true or false";

interface PageField<S extends TSchema = TSchema> {
  schema: S;
  message: string;
}

export const STATUS_PAGE_FIELDS = {
  name: { schema: Type.String({ minLength: 1, maxLength: 200 }), message: "must be a string of 1 to 200 characters" },
  slug: {
    schema: Type.String({ pattern: SLUG_PATTERN, maxLength: SLUG_MAX, description: "unique across the instance; generated from name on POST when omitted" }),
    message: `must be 1 to ${SLUG_MAX} lowercase letters and digits in groups joined by single hyphens, e.g. acme-status`,
  },
  headline: { schema: nullable(Type.String({ maxLength: 200 })), message: "must be a string of at most 200 characters, or null" },
  description: { schema: nullable(Type.String({ maxLength: 5000 })), message: "must be a string of at most 5000 characters, or null" },
  external_id: { schema: EXTERNAL_ID_SCHEMA, message: EXTERNAL_ID_MESSAGE },
  is_public: { schema: Type.Boolean({ default: true }), message: BOOL },
  is_enabled: { schema: Type.Boolean({ default: true }), message: BOOL },
  is_token_protected: { schema: Type.Boolean({ default: false, description: "turning it on without access_token generates one" }), message: BOOL },
  access_token: {
    schema: nullable(Type.String({ pattern: ACCESS_TOKEN_PATTERN }), "token visitors need when is_token_protected is true"),
    message: `must be ${ACCESS_TOKEN_MIN} to 128 characters of letters, digits, '.', '_', '~' and '-', or null (leave it out to have one generated)`,
  },
  public_theme: { schema: Type.Union([Type.Literal("light"), Type.Literal("dark")], { default: "light" }), message: "must be one of light, dark" },
  custom_domain: {
    schema: nullable(Type.String({ maxLength: 253 }), "extension: a host name that serves this page at / once verified (custom_domain_verification); a name another page verified is taken"),
    message: "must be a host name such as status.example.com, or null",
  },
  monitor_ids: {
    schema: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: 500, uniqueItems: true, description: "this account's monitors shown on the page, in this order" }),
    message: "must be a list of distinct monitor ids (positive integers), at most 500",
  },
} satisfies Record<string, PageField>;

export type StatusPageAttributeName = keyof typeof STATUS_PAGE_FIELDS;

/** The DNS name whose TXT record proves that a custom domain is the page owner's (README "Custom domains"). */
export const challengeName = (domain: string) => `_vigil-challenge.${domain}`;

/** Read-only: whether `custom_domain` serves the page, and what proves it is the owner's. */
const CUSTOM_DOMAIN_STATE = {
  custom_domain_verified_at: nullable(Type.String({ format: "date-time" }), "when custom_domain was verified: it serves the page at / since; null while it does not"),
  custom_domain_verification: nullable(
    Type.Object({
      record_type: Type.Literal("TXT"),
      record_name: Type.String({ description: "_vigil-challenge.<custom_domain>" }),
      record_value: Type.String({ description: "what the record must hold; a new one each time custom_domain changes" }),
    }),
    "the DNS record that proves custom_domain is yours: publish it, then POST .../custom-domain/verify; null without custom_domain",
  ),
};

/** A status page as responses show it (StatusPageAttributesSchema's type). */
export type StatusPageAttributes = { [K in StatusPageAttributeName]: Static<(typeof STATUS_PAGE_FIELDS)[K]["schema"]> } & {
  [K in keyof typeof CUSTOM_DOMAIN_STATE]: Static<(typeof CUSTOM_DOMAIN_STATE)[K]>;
} & { created_at: string; updated_at: string };

export const STATUS_PAGE_READ_ONLY = ["id", "created_at", "updated_at", ...Object.keys(CUSTOM_DOMAIN_STATE)];

export const STATUS_PAGE_DEFAULTS: Record<string, unknown> = {
  headline: null,
  description: null,
  external_id: null,
  is_public: true,
  is_enabled: true,
  is_token_protected: false,
  access_token: null,
  public_theme: "light",
  custom_domain: null,
  monitor_ids: [],
};

export const StatusPageAttributesSchema = Type.Object({
  ...Object.fromEntries(Object.entries(STATUS_PAGE_FIELDS).map(([k, f]) => [k, f.schema])),
  ...CUSTOM_DOMAIN_STATE,
  created_at: Type.String({ format: "date-time" }),
  updated_at: Type.String({ format: "date-time" }),
});

/** What a POST must hold. */
export const STATUS_PAGE_REQUIRED = ["name"] as const;

export const StatusPageWriteAttributesSchema = Type.Object(
  Object.fromEntries(Object.entries(STATUS_PAGE_FIELDS).map(([k, f]) => [k, Type.Optional(f.schema)])),
  { additionalProperties: false, description: "id, created_at, updated_at, custom_domain_verified_at and custom_domain_verification are ignored." },
);

/** What status page writes are checked against besides their own attributes. */
export interface StatusPageRules {
  /** host names that reach the instance itself (config: base and heartbeat URL hosts, the machine's names) */
  ownHostNames: readonly string[];
}

const normalDomain = (v: string) => v.trim().toLowerCase().replace(/\.$/, "");

/**
 * Whether a host name reaches the instance itself rather than one status page: one of its own
 * names, or localhost and its subdomains (RFC 6761), which always mean this machine.
 */
export function isInstanceHost(host: string, ownHostNames: readonly string[]): boolean {
  const d = normalDomain(host);
  return d === "localhost" || d.endsWith(".localhost") || ownHostNames.includes(d);
}

export const INSTANCE_HOST_MESSAGE = "is a host name of this Vigil instance itself (or localhost); use a host name that serves this page alone, such as status.example.com";

/** An IP address, or a name a URL parser reads as one ("127.1", "0x7f.1"): no top-level domain is numeric. */
const looksLikeIp = (d: string) => isIP(d) !== 0 || /^(\d+|0x[0-9a-f]*)$/i.test(d.slice(d.lastIndexOf(".") + 1));

function domainProblem(v: string, rules: StatusPageRules): string | null {
  const d = normalDomain(v);
  // one trailing dot (the fully qualified form) was dropped; another is an empty label ("x.test..")
  if (!isHostname(d) || d.endsWith(".") || !d.includes(".") || looksLikeIp(d) || d.includes("_")) return STATUS_PAGE_FIELDS.custom_domain.message;
  if (isInstanceHost(d, rules.ownHostNames)) return INSTANCE_HOST_MESSAGE;
  return null;
}

/** Validates a create (no `existing`) or a partial update; returns normalised changes and details. */
export function validateStatusPageWrite(input: Record<string, unknown>, rules: StatusPageRules, existing?: Record<string, unknown>): { changes: Record<string, unknown>; details: Record<string, string[]> } {
  const details: Record<string, string[]> = newDetails();
  const add = (k: string, m: string) => void (details[k] ??= []).push(m);
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (STATUS_PAGE_READ_ONLY.includes(key)) continue;
    const field: PageField | undefined = Object.hasOwn(STATUS_PAGE_FIELDS, key) ? STATUS_PAGE_FIELDS[key as StatusPageAttributeName] : undefined; // not inherited names such as toString
    if (!field) {
      add(key, "is not a status page attribute; see the status page fields in /api/v1/openapi.json");
      continue;
    }
    if (holdsNul(value)) {
      add(key, NUL_MESSAGE);
      continue;
    }
    // a page's own token sent back unchanged passes, though it may be shorter than today's minimum
    const unchangedToken = key === "access_token" && existing !== undefined && value === existing.access_token;
    if (!unchangedToken && !Value.Check(field.schema, value)) {
      add(key, field.message);
      continue;
    }
    if (key === "name" && (value as string).trim() === "") add(key, "must not be blank");
    // the name is stored trimmed, so only what is kept is asked about
    else if ((key === "name" || key === "headline") && typeof value === "string" && breaksLine(key === "name" ? value.trim() : value)) add(key, ONE_LINE_MESSAGE);
    else if (key === "slug" && !isValidSlug(value as string)) add(key, field.message);
    else if (key === "custom_domain" && value !== null && domainProblem(value as string, rules)) add(key, domainProblem(value as string, rules)!);
    else changes[key] = key === "name" ? (value as string).trim() : key === "custom_domain" && value !== null ? normalDomain(value as string) : value;
  }
  if (!existing) {
    for (const k of STATUS_PAGE_REQUIRED) if (!(k in input) || input[k] === null) details[k] ??= ["is required"];
    for (const [k, v] of Object.entries(STATUS_PAGE_DEFAULTS)) if (!(k in changes) && !details[k]) changes[k] = v;
  }
  return { changes, details };
}

/** Whether the merged page is protected but has no token, so one must be generated. */
export function needsAccessToken(changes: Record<string, unknown>, existing?: Record<string, unknown>): boolean {
  const merged = { ...existing, ...changes };
  return merged.is_token_protected === true && (merged.access_token === null || merged.access_token === undefined);
}
