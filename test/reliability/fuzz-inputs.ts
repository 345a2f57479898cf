/**
 * fast-check arbitraries for the fuzz test: malformed and hostile requests aimed at one endpoint
 * (an API route, the ping URL or a peer endpoint). Bodies are bytes, so they can be invalid UTF-8,
 * truncated, huge or nested 100,000 levels deep.
 */
import fc from "fast-check";
import type { TSchema } from "@sinclair/typebox";

export interface FuzzRequest {
  method: string;
  path: string;
  /** raw query string without "?", possibly malformed */
  query: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  /** what kind of body, for the failure report */
  bodyKind: string;
}

const enc = new TextEncoder();

/** encodeURIComponent, but a lone surrogate becomes its (invalid) UTF-8 bytes instead of a throw. */
export function uriEncode(s: string): string {
  return s.split(/([\uD800-\uDFFF])/).map((part) => (/^[\uD800-\uDFFF]$/.test(part) ? "%ED%A0%80" : encodeURIComponent(part))).join("");
}
const bytes = (s: string) => enc.encode(s);

/** Attribute names a route's body schema declares (a union of flat and JSON:API forms included). */
export function schemaKeys(schema: TSchema | undefined): string[] {
  const out = new Set<string>();
  const visit = (s: any, depth: number) => {
    if (!s || depth > 4) return;
    for (const k of Object.keys(s.properties ?? {})) if (k !== "data") out.add(k);
    for (const sub of [...(s.anyOf ?? []), ...(s.allOf ?? []), ...(s.oneOf ?? [])]) visit(sub, depth + 1);
    if (s.properties?.data?.properties?.attributes) visit(s.properties.data.properties.attributes, depth + 1);
  };
  visit(schema, 0);
  return [...out];
}

/** Deep nesting built as text: JSON.stringify of such a value would itself overflow the stack. */
export function deepJson(depth: number, kind: "array" | "object"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

const weirdStrings = fc.constantFrom(
  "", " ", "null", "true", "0", "-1", "1e309", "NaN", "Infinity", "\u0000", "\uFFFF", "\uD800", "💥", "%", "%zz", "%00", "../../etc/passwd",
  "<script>alert(1)</script>", "' OR 1=1 --", "${jndi:ldap://x}", "a".repeat(5000), "(a+)+$", "[", "*", "\\", "\r\n\r\n",
);

/** Any JSON value, with extremes mixed in: what "wrong types per attribute" draws from. */
export const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: weirdStrings },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, 0, -0, -1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, -1e308, [], {}) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 50 }) },
  { weight: 1, arbitrary: fc.integer() },
);

/**
 * A body for a route: mostly its own valid attributes with a few replaced by wrong types, plus
 * random JSON, JSON:API wrappers, truncated text, invalid UTF-8, deep nesting and (rarely) 1 MiB+.
 */
export function bodyArb(base: Record<string, unknown>, keys: string[], resourceType: string, maxBytes: number): fc.Arbitrary<{ body: Uint8Array; kind: string }> {
  const attrNames = keys.length ? fc.constantFrom(...keys) : fc.string({ maxLength: 20 });
  const mutated = fc
    .dictionary(fc.oneof({ weight: 4, arbitrary: attrNames }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) }), anyJsonValue, { minKeys: 1, maxKeys: 4 })
    .chain((changes) => fc.boolean().map((wrap) => ({ changes, wrap })))
    .map(({ changes, wrap }) => {
      const attrs = { ...base, ...changes };
      const value = wrap ? { data: { type: resourceType, attributes: attrs } } : attrs;
      return { body: bytes(JSON.stringify(value)), kind: wrap ? "json:api with wrong types" : "wrong types" };
    });
  const deep = fc
    .record({ depth: fc.constantFrom(64, 1000, 100_000), kind: fc.constantFrom("array" as const, "object" as const), where: fc.constantFrom("top", "attribute", "jsonapi") , key: attrNames })
    .map(({ depth, kind, where, key }) => {
      const d = deepJson(depth, kind);
      const text =
        where === "top" ? d : where === "attribute" ? `{${JSON.stringify(key)}:${d}${Object.keys(base).length ? "," + JSON.stringify(base).slice(1) : "}"}` : `{"data":{"type":${JSON.stringify(resourceType)},"attributes":{${JSON.stringify(key)}:${d}}}}`;
      return { body: bytes(text), kind: `deep ${kind} ${depth} (${where})` };
    });
  const invalidUtf8 = fc
    .record({ prefix: fc.constantFrom('{"name":"', '{"', "", '{"data":{"attributes":{"name":"'), junk: fc.uint8Array({ minLength: 1, maxLength: 16 }) })
    .map(({ prefix, junk }) => {
      const bad = new Uint8Array([...bytes(prefix), 0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, ...junk, ...bytes('"}')]);
      return { body: bad, kind: "invalid utf-8" };
    });
  const truncated = fc
    .tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat())
    .map(([v, n]) => {
      const t = JSON.stringify({ ...base, x: v });
      return { body: bytes(t.slice(0, n % Math.max(1, t.length))), kind: "truncated json" };
    });
  const randomJson = fc.jsonValue({ maxDepth: 4 }).map((v) => ({ body: bytes(JSON.stringify(v) ?? "null"), kind: "random json" }));
  const randomBytes = fc.uint8Array({ maxLength: 200 }).map((b) => ({ body: b, kind: "random bytes" }));
  const huge = fc.constantFrom("string", "array").map((k) => {
    const n = maxBytes + 1024;
    const text = k === "string" ? JSON.stringify({ ...base, name: "x".repeat(n) }) : "[" + "0,".repeat(n / 2) + "0]";
    return { body: bytes(text), kind: `over the limit (${k})` };
  });
  const manyKeys = fc.nat({ max: 20_000 }).map((n) => {
    const o: Record<string, number> = {};
    for (let i = 0; i < n; i++) o[`k${i}`] = i;
    return { body: bytes(JSON.stringify({ ...base, ...o })), kind: `${n} unknown keys` };
  });
  return fc.oneof(
    { weight: 10, arbitrary: mutated },
    { weight: 3, arbitrary: randomJson },
    { weight: 2, arbitrary: deep },
    { weight: 2, arbitrary: invalidUtf8 },
    { weight: 2, arbitrary: truncated },
    { weight: 2, arbitrary: randomBytes },
    { weight: 1, arbitrary: manyKeys },
    { weight: 1, arbitrary: fc.constant({ body: new Uint8Array(0), kind: "empty" }) },
    { weight: 1, arbitrary: huge },
  );
}

/** A query string: the route's own parameters with odd values, unknown ones, and broken escapes. */
export function queryArb(names: string[]): fc.Arbitrary<string> {
  const name = fc.oneof({ weight: 3, arbitrary: names.length ? fc.constantFrom(...names) : fc.constant("page") }, { weight: 1, arbitrary: fc.string({ maxLength: 10 }) });
  const value = fc.oneof(
    weirdStrings,
    fc.integer().map(String),
    fc.constantFrom("1", "2", "100", "101", "0", "-5", "1.5", "99999999999999999999", "2026-11-21", "2026-11-21T10:00:00Z", "1700000000", "true", "false", "up", "http"),
    fc.string({ maxLength: 30 }),
  );
  const pair = fc.oneof(
    { weight: 5, arbitrary: fc.tuple(name, value).map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`) },
    { weight: 1, arbitrary: fc.constantFrom("%", "a=%zz", "=", "&&&", "page", "page=1&page=2", "q=%F0%9F%92", "x=%C0%80", "a[b]=1", "__proto__=1", "constructor[prototype]=1") },
  );
  return fc.array(pair, { maxLength: 5 }).map((ps) => ps.join("&"));
}

/** Header sets: the right token most of the time, and every kind of wrong Authorization / Content-Type. */
export function headersArb(goodAuth: string[], hasBody: boolean): fc.Arbitrary<Record<string, string>> {
  const auth = fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(...goodAuth.map((t) => `Bearer ${t}`)) },
    { weight: 1, arbitrary: fc.constantFrom("", "Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Bearer vgl_" + "A".repeat(40), "bearer x", "Bearer a b", "Bearer " + "x".repeat(5000), "Token abc") },
    { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(..."abcXYZ019 ._~+/=-:"), maxLength: 60 }) },
  );
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant("application/json") },
    { weight: 2, arbitrary: fc.constantFrom("application/json; charset=utf-8", "application/vnd.api+json", "APPLICATION/JSON", "application/json;charset=latin1") },
    { weight: 2, arbitrary: fc.constantFrom("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx", "*/*", ";;;") },
  );
  const extra = fc.dictionary(
    fc.constantFrom("x-request-id", "x-forwarded-for", "accept", "accept-encoding", "x-vigil-version", "origin", "cookie", "range", "if-none-match"),
    fc.string({ unit: fc.constantFrom(..."abc019 ,;=./:-_<>\"'*"), maxLength: 300 }),
    { maxKeys: 3 },
  );
  return fc.record({ auth, contentType, extra, withType: fc.boolean() }).map(({ auth, contentType, extra, withType }) => {
    const h: Record<string, string> = { ...extra };
    if (auth) h.authorization = auth;
    if (hasBody || withType) h["content-type"] = contentType;
    return h;
  });
}

/** A path segment standing for an id: real ones, numbers of every size, and garbage. */
export function idArb(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...real) },
    { weight: 2, arbitrary: fc.integer({ min: 100_000, max: 1_000_000_000 }).map(String) },
    { weight: 2, arbitrary: fc.constantFrom("0", "-1", "1e3", "0x10", "99999999999999999999", "9007199254740993", "%00", "%zz", "%2e%2e", "NaN", "1.0", "01", "%20 1".replace(" ", ""), "a".repeat(3000)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 20 }).map(uriEncode) },
  );
}

export const METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS", "PROPFIND", "FOO"];
