/**
 * Gatus conditions, one by one, as Vigil's checks (README "Coming from Gatus"): a table of
 * condition, endpoint kind, and what it becomes, or that it is reported as not kept.
 */
import { describe, expect, test } from "bun:test";
import { codesText, mapConditions, type EndpointKind } from "../../src/import/gatus-conditions.ts";

type Expect = Partial<Omit<ReturnType<typeof mapConditions>, "codes">> & { codes?: string };

const CASES: [string, EndpointKind, Expect][] = [
  ["[STATUS] == 200", "http", { codes: "200" }],
  ["[STATUS] == any(200, 429)", "http", { codes: "200,429" }],
  ["[STATUS] < 300", "http", { codes: "100-299" }],
  ["[STATUS] <= 299", "http", { codes: "100-299" }],
  ["[STATUS] > 400", "http", { codes: "401-599" }],
  ["[STATUS] >= 200", "http", { codes: "200-599" }],
  ["[STATUS] != 500", "http", { codes: "100-499,501-599" }],
  ["[STATUS] == pat(2*)", "http", { codes: "200-299" }],
  ["[RESPONSE_TIME] < 300", "http", { maxLatencyMs: 299 }],
  ["[RESPONSE_TIME] <= 300", "tcp", { maxLatencyMs: 300 }],
  ["[BODY].status == UP", "http", { assertions: [{ path: "status", op: "equals", value: "UP" }] }],
  ["[BODY].data[0].id != 0", "http", { assertions: [{ path: "data[0].id", op: "not_equals", value: "0" }] }],
  ["[BODY].count > 5", "http", { assertions: [{ path: "count", op: "greater_than", value: "5" }] }],
  ["[BODY].load < 0.8", "http", { assertions: [{ path: "load", op: "less_than", value: "0.8" }] }],
  ["[BODY].name == pat(john*)", "http", { assertions: [{ path: "name", op: "regex", value: "^john.*$" }] }],
  ["[BODY].id == any(1, 2)", "http", { assertions: [{ path: "id", op: "regex", value: "^(1|2)$" }] }],
  ["has([BODY].errors) == false", "http", { assertions: [{ path: "errors", op: "is_null" }] }],
  ["has([BODY].users) == true", "http", { assertions: [{ path: "users", op: "is_not_null" }] }],
  ["[BODY] == pat(*healthy*)", "http", { bodyContains: "healthy" }],
  ["[BODY] == pat(*served by*)", "websocket", { wsExpect: "served by" }],
  ["[BODY] == 93.184.215.14", "dns", { dnsAnswer: "93.184.215.14" }],
  ["[CERTIFICATE_EXPIRATION] > 48h", "http", { certWarnDays: 2 }],
  ["[CERTIFICATE_EXPIRATION] > 240h", "ssl", { certWarnDays: 10 }],
  ["[CONNECTED] == true", "tcp", {}],
  ["[CONNECTED] == true", "ping", {}],
  ["[DNS_RCODE] == NOERROR", "dns", {}],
  ["[BODY].status == SERVING", "grpc", {}],
];

const UNSUPPORTED: [string, EndpointKind, string][] = [
  ["[IP] == 127.0.0.1", "http", "does not check the resolved address"],
  ["len([BODY].data) < 5", "http", "no length comparison"],
  ["[DOMAIN_EXPIRATION] > 720h", "http", "domain monitor"],
  ["[BODY].age == [BODY].id", "http", "not with another path"],
  ["[BODY].n >= 3", "http", "not >="],
  ["[BODY] == 1", "http", "contain a text"],
  ["[RESPONSE_TIME] > 10", "http", "from above"],
  ["[STATUS] == 200", "tcp", "no status code"],
  ["[CONNECTED] == false", "tcp", "failed connection as down"],
  ["[DNS_RCODE] == NXDOMAIN", "dns", "up on an answer"],
  ["[CERTIFICATE_EXPIRATION] > 48h", "tcp", "certificate expiry"],
  ["[BODY].name != pat(x*)", "http", "must not match"],
  ["not a condition", "http", "not a comparison"],
  // a rule's value holds 1000 characters: a longer list is noted, and the endpoint imported without it
  [`[BODY].id == any(${Array.from({ length: 300 }, (_, i) => i).join(", ")})`, "http", "longer than the 1000 characters of a rule's value"],
];

describe("conditions Vigil can express", () => {
  test.each(CASES)("%p on %s", (condition, kind, expected) => {
    const o = mapConditions([condition], kind);
    expect(o.unsupported).toEqual([]);
    const { codes, ...rest } = expected;
    if (codes !== undefined) expect(codesText(o.codes!)).toBe(codes);
    else expect(o.codes).toBeNull();
    expect(o).toMatchObject({ assertions: [], maxLatencyMs: null, bodyContains: null, certWarnDays: null, dnsAnswer: null, wsExpect: null, ...rest });
  });

  test("several [STATUS] conditions narrow one another", () => {
    expect(codesText(mapConditions(["[STATUS] >= 200", "[STATUS] < 300", "[STATUS] != 204"], "http").codes!)).toBe("200-203,205-299");
  });
});

describe("conditions Vigil cannot express are reported with why", () => {
  test.each(UNSUPPORTED)("%p on %s", (condition, kind, why) => {
    const o = mapConditions([condition], kind);
    expect(o.unsupported).toHaveLength(1);
    expect(o.unsupported[0]).toContain(condition);
    expect(o.unsupported[0]).toContain(why);
  });
});
