import { afterAll, beforeAll, expect, test } from "bun:test";
import { rowToProbeMonitor } from "../../src/engine/probe-monitor.ts";
import { randomToken } from "../../src/lib/tokens.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { httpAttrs } from "./fixtures.ts";
import { databaseAtRest } from "../helpers/engine.ts";

// Write-only secrets (docs/monitors.md "Authentication secrets"): accepted on write, sealed with
// AES-256-GCM at rest, and never in any response, log line or error message.
let s: TestServer;
const secret = (kind: string) => `s3cr3t-${kind}-${randomToken(12)}`;
const bearer = secret("bearer");
const pass = secret("basic");
const apiKey = secret("apikey");
const rotated = secret("rotated");
const inErrors = secret("error");
const bodies: string[] = [];

beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.stop());

async function call(method: string, path: string, body?: unknown) {
  const res = await s.api(method, path, body);
  bodies.push(res.text);
  return res;
}

test("secrets are accepted on POST and PATCH and never come back", async () => {
  const a = await call("POST", "/api/v1/monitors", httpAttrs({ name: "bearer", api_auth_type: "bearer", api_auth_bearer_token: bearer }));
  const b = await call("POST", "/api/v1/monitors", httpAttrs({ name: "basic", api_auth_type: "basic", api_auth_basic_user: "bob", api_auth_basic_pass: pass }));
  const c = await call("POST", "/api/v1/monitors", { data: { type: "monitor", attributes: httpAttrs({ name: "key", api_auth_type: "api_key", api_auth_api_key_header: "X-Key", api_auth_api_key_value: apiKey }) } });
  for (const r of [a, b, c]) expect(r.status).toBe(201);
  expect(b.json.data.attributes).toMatchObject({ api_auth_type: "basic", api_auth_basic_user: "bob" });
  const patched = await call("PATCH", `/api/v1/monitors/${a.json.data.id}`, { api_auth_bearer_token: rotated });
  expect(patched.status).toBe(200);
  await call("GET", `/api/v1/monitors/${a.json.data.id}`);
  await call("GET", "/api/v1/monitors?per_page=100");
  await call("GET", "/api/v1/monitors?q=bearer");

  const row = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "=", Number(a.json.data.id)).executeTakeFirstOrThrow();
  expect(row.api_auth_bearer_token_enc).toMatch(/^v1\./);
  expect(row.api_auth_bearer_token_enc).not.toContain(rotated);
  expect(s.ctx.secrets.open(row.api_auth_bearer_token_enc!)).toBe(rotated);
  // the probe side opens them again (the API itself never needs the plaintext)
  const probe = rowToProbeMonitor(row, s.ctx.secrets, false);
  expect(probe.api_auth_bearer_token).toBe(rotated);
  const basicRow = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "=", Number(b.json.data.id)).executeTakeFirstOrThrow();
  expect(rowToProbeMonitor(basicRow, s.ctx.secrets, false).api_auth_basic_pass).toBe(pass);
});

test("refused writes do not echo a secret in the error", async () => {
  const attempts: unknown[] = [
    httpAttrs({ interval_sec: 1, api_auth_type: "bearer", api_auth_bearer_token: inErrors }),
    httpAttrs({ api_auth_type: "none", api_auth_bearer_token: inErrors }),
    httpAttrs({ api_auth_type: "basic", api_auth_basic_pass: inErrors }),
    httpAttrs({ api_auth_type: "bearer", api_auth_bearer_token: inErrors + "x".repeat(5000) }),
    { name: "tcp", monitor_type: "tcp", target: "127.0.0.1:1", interval_sec: 60, timeout_ms: 1000, api_auth_api_key_value: inErrors },
    httpAttrs({ api_auth_type: "bearer", api_auth_bearer_token: inErrors, api_headers_json: { Authorization: inErrors, "Bad Name": inErrors } }),
  ];
  for (const body of attempts) {
    const res = await call("POST", "/api/v1/monitors", body);
    expect(res.status).toBe(422);
  }
});

test("no response body, log line or database file holds a secret in plaintext", async () => {
  const all = [bearer, pass, apiKey, rotated, inErrors];
  const text = bodies.join("\n");
  expect(bodies.length).toBeGreaterThan(8);
  for (const v of all) {
    expect(text).not.toContain(v);
    expect(s.logText()).not.toContain(v);
  }
  expect(s.logText()).toContain("monitor created"); // the log did record the writes
  // at rest: neither the database nor its write-ahead log contains the plaintext
  await s.ctx.writes.flush();
  const { text: raw } = await databaseAtRest(s.dataDir);
  expect(raw).toContain("X-Key"); // the bytes searched hold the monitors' rows
  for (const v of [bearer, pass, apiKey, rotated]) expect(raw.includes(v)).toBe(false);
});
