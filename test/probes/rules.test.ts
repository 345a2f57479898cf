/** Pure rules used by the probes: expected codes, JSON paths, expiry, private ranges, masking. */
import { describe, expect, test } from "bun:test";
import { expectedCodesProblems, parseExpectedCodes } from "../../src/domain/expected-codes.ts";
import { getJsonPath, MISSING } from "../../src/domain/json-path.ts";
import { certExpiryVerdict, latencyReason } from "../../src/domain/cert-expiry.ts";
import { isPrivateAddress } from "../../src/domain/ip-ranges.ts";
import { authHeaders, maskHeaders, maskText, secretsOf } from "../../src/probes/request-auth.ts";
import { splitHostPort } from "../../src/net/resolve-host.ts";
import { monitor } from "./fixtures.ts";

describe("expected codes", () => {
  test.each([
    [null, 200, true], [null, 299, true], [null, 300, false], [null, 199, false],
    ["200,201,204", 204, true], ["200,201,204", 202, false],
    ["200-299", 250, true], ["200-299", 301, false],
    ["2xx", 204, true], ["2XX", 302, false],
    ["200, 3xx ,404-405", 405, true], ["200, 3xx ,404-405", 403, false],
  ] as [string | null, number, boolean][])("%p with %i → %p", (spec, status, ok) => {
    expect(parseExpectedCodes(spec).matches(status)).toBe(ok);
  });

  test("text for messages and validation problems", () => {
    expect(parseExpectedCodes(null).text).toBe("200-299");
    expect(parseExpectedCodes(" 200 , 3xx").text).toBe("200,3xx");
    expect(expectedCodesProblems("200,abc,300-200")).toEqual(['"abc" is not a code, range (200-299) or class (2xx)', '"300-200" is not a code, range (200-299) or class (2xx)']);
    expect(expectedCodesProblems("2xx,204")).toEqual([]);
    // a value with no usable code must not accept everything
    expect(parseExpectedCodes("junk").matches(500)).toBe(false);
  });
});

describe("json paths", () => {
  const doc = { a: { b: [{ c: 1 }, { c: null }] }, "x": 0 };
  test.each([
    ["a.b.0.c", 1], ["a.b[1].c", null], ["$.a.b[0].c", 1], ["x", 0], ["", doc],
  ])("%p finds %p", (path, value) => expect(getJsonPath(doc, path as string)).toEqual(value));
  test.each(["a.b.2.c", "a.z", "x.y", "a.b.c"])("%p is missing", (path) => expect(getJsonPath(doc, path)).toBe(MISSING));
});

describe("certificate expiry", () => {
  const now = Date.UTC(2026, 0, 1);
  const day = 86_400_000;
  test("ok, expiring inside the window, expired", () => {
    expect(certExpiryVerdict(now + 30 * day, now, null)).toEqual({ kind: "ok" });
    expect(certExpiryVerdict(now + 14 * day, now, null).kind).toBe("expiring");
    expect(certExpiryVerdict(now + 10 * day, now, 7)).toEqual({ kind: "ok" });
    expect(certExpiryVerdict(now + 5 * day + 1000, now, null)).toEqual({ kind: "expiring", reason: "certificate expires in 5 days (2026-01-06T00:00:01.000Z), within the 14-day warning window" });
    expect(certExpiryVerdict(now - 1, now, null)).toEqual({ kind: "expired", reason: "certificate expired at 2025-12-31T23:59:59.999Z" });
  });
  test("latency rule is strictly above", () => {
    expect(latencyReason(500, 500)).toBeNull();
    expect(latencyReason(812, 500)).toBe("latency 812 ms above 500 ms");
    expect(latencyReason(812, null)).toBeNull();
  });
});

test.each([
  ["127.0.0.1", true], ["10.1.2.3", true], ["172.16.0.1", true], ["172.32.0.1", false], ["192.168.1.1", true],
  ["169.254.169.254", true], ["100.64.0.1", true], ["8.8.8.8", false], ["::1", true], ["fd00::1", true],
  ["fe80::1", true], ["::ffff:10.0.0.1", true], ["2606:4700::1111", false],
  // IPv6 notations of an IPv4 address are judged as that address
  ["::ffff:127.0.0.1", true], ["::ffff:7f00:1", true], ["0:0:0:0:0:ffff:127.0.0.1", true], ["::FFFF:7F00:1", true],
  ["::127.0.0.1", true], ["::7f00:1", true], ["::a00:1", true], ["::ffff:0:7f00:1", true],
  ["64:ff9b::7f00:1", true], ["64:ff9b::a9fe:a9fe", true], ["64:ff9b::808:808", false],
  ["2002:7f00:1::1", true], ["2002:c0a8:101::", true], ["2002:808:808::1", false], ["::ffff:8.8.8.8", false],
  ["2001:0:4136:e378:8000:63bf:3fff:fdd2", true], ["fe80::1%eth0", true], ["ff02::1", true], ["::", true],
  ["0.0.0.0", true], ["255.255.255.255", true], ["224.0.0.251", true], ["198.18.0.1", true], ["240.0.0.1", true],
  // documentation ranges count as public (nothing internal lives there)
  ["192.0.2.10", false], ["198.51.100.7", false], ["2001:db8::1", false],
  // whatever is not a literal address fails closed
  ["localhost", true], ["", true],
] as [string, boolean][])("private address %s → %p", (ip, priv) => expect(isPrivateAddress(ip)).toBe(priv));

test.each([
  ["example.com:8080", null, "example.com", 8080], ["example.com", 22, "example.com", 22], ["[::1]:25", null, "::1", 25],
  ["::1", 25, "::1", 25], ["[2001:db8::1]", 443, "2001:db8::1", 443], ["host", null, "host", null],
] as [string, number | null, string, number | null][])("splitHostPort(%p, %p)", (target, fallback, host, port) => {
  expect(splitHostPort(target, fallback)).toEqual({ host, port });
});

describe("secret masking", () => {
  const m = monitor({ api_auth_type: "basic", api_auth_basic_user: "ann", api_auth_basic_pass: "p@ss word" });
  test("basic auth header and every form of the secret are masked", () => {
    const header = authHeaders(m).Authorization;
    expect(header).toBe(`Basic ${Buffer.from("ann:p@ss word").toString("base64")}`);
    const secrets = secretsOf(m);
    expect(maskText(`got ${header} and p@ss word and p%40ss%20word`, secrets)).toBe("got Basic *** and *** and ***");
    expect(maskHeaders({ Authorization: header, "X-Other": "has p@ss word", Accept: "*/*" }, [], secrets)).toEqual({ Authorization: "***", "X-Other": "has ***", Accept: "*/*" });
  });
  test("api key header is masked by name", () => {
    const k = monitor({ api_auth_type: "api_key", api_auth_api_key_header: "X-Token", api_auth_api_key_value: "abc" });
    expect(authHeaders(k)).toEqual({ "X-Token": "abc" });
    expect(maskHeaders({ "x-token": "abc" }, ["x-token"], secretsOf(k))).toEqual({ "x-token": "***" });
  });
  test("the database password is a secret, in every form", () => {
    const d = monitor({ db_password: 'db p@ss"' });
    expect(secretsOf(d)).toEqual(['db p@ss"']);
    expect(maskText('near \'db p@ss"\', db%20p%40ss%22 and "db p@ss\\""', secretsOf(d))).toBe("near '***', *** and \"***\"");
  });
});
