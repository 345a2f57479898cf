import { afterAll, beforeAll, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { apiRoutes } from "../../src/api/routes.ts";
import { MONITOR_TYPES } from "../../src/domain/monitor.ts";
import { ROOT } from "../helpers/process.ts";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.ts";

// The OpenAPI document is public and generated from the same TypeBox schemas the handlers use. Its
// answers are compared with the live server's in openapi-contract.test.ts.
let s: TestServer;
let doc: any;
const BASE_URL = "https://vigil.acme.test";
const HEARTBEAT_URL = "https://ping.acme.test";
beforeAll(async () => {
  s = await startTestServer(["--base-url", BASE_URL, "--heartbeat-url", HEARTBEAT_URL]);
  const res = await s.api("GET", "/api/v1/openapi.json", undefined, { token: null });
  expect(res.status).toBe(200);
  doc = res.json;
});
afterAll(() => s.stop());

const openApiPath = (p: string) => p.replace(/:(\w+)/g, "{$1}");

// docs/api-rules.md "Endpoints and scopes"
const DOCUMENTED = [
  "get /api/v1/monitors", "post /api/v1/monitors", "get /api/v1/monitors/{id}", "patch /api/v1/monitors/{id}", "delete /api/v1/monitors/{id}",
  "get /api/v1/monitors/{id}/checks", "get /api/v1/incidents", "get /api/v1/incidents/{id}",
  "get /api/v1/status-pages", "post /api/v1/status-pages", "get /api/v1/status-pages/{id}", "patch /api/v1/status-pages/{id}", "delete /api/v1/status-pages/{id}",
  "post /api/v1/monitors/{id}/heartbeat-token/rotate", "get /api/v1/monitors/{id}/events",
  "get /api/v1/groups", "post /api/v1/groups", "get /api/v1/groups/{id}", "patch /api/v1/groups/{id}", "delete /api/v1/groups/{id}",
  "get /api/v1/status-pages/{id}/updates", "post /api/v1/status-pages/{id}/updates", "get /api/v1/status-pages/{id}/updates/{updateId}",
  "patch /api/v1/status-pages/{id}/updates/{updateId}", "delete /api/v1/status-pages/{id}/updates/{updateId}",
];

test("swagger-parser accepts the live document as OpenAPI 3.1", async () => {
  expect(doc.openapi).toBe("3.1.0");
  // validate() dereferences the document it is given in place
  const problems = await SwaggerParser.validate(structuredClone(doc)).then(
    () => [],
    (err: { message: string }) => err.message.split("\n").slice(0, 20),
  );
  expect(problems).toEqual([]);
});

test("redocly lint, with the recommended rules as errors (redocly.yaml), finds nothing", async () => {
  const file = join(tempDir(), "openapi.json");
  writeFileSync(file, JSON.stringify(doc));
  const proc = Bun.spawn([process.execPath, join(ROOT, "node_modules/@redocly/cli/bin/cli.js"), "lint", "--format=json", "--config", join(ROOT, "redocly.yaml"), file], {
    cwd: ROOT,
    // no telemetry and no check for a newer version: tests stay on loopback
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const report = JSON.parse(out || "{}") as { totals?: unknown; problems?: { ruleId: string; message: string; location: { pointer: string }[] }[] };
  if (!report.problems) throw new Error(`redocly printed no report (exit ${code}): ${err.slice(-2000)}`);
  expect(report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
  expect(code).toBe(0);
}, 60_000);

test("servers, licence and the headers of every answer are documented", () => {
  expect(doc.servers).toEqual([{ url: BASE_URL, description: expect.any(String) }]);
  expect(doc.paths["/h/{token}"].servers).toEqual([{ url: HEARTBEAT_URL, description: expect.any(String) }]);
  expect(doc.info.license.name).toBeString();
  expect(Object.keys(doc.components.headers).sort()).toEqual(["Allow", "Retry-After", "WWW-Authenticate", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-Request-Id"]);
  const error = doc.components.responses.RateLimited;
  expect(Object.keys(error.headers)).toEqual(["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]);
  expect(error.content["application/json"].schema.required).toEqual(["error", "meta"]);
  expect(error.content["application/json"].schema.properties.meta.required).toEqual(["request_id", "rate_limit"]);
  expect(doc.components.responses.ValidationError.content["application/json"].schema.properties.error.required).toEqual(["code", "message", "details"]);
});

test("each operation lists the statuses it can answer", () => {
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).join(" ");
  expect(statuses("/api/v1/monitors", "get")).toBe("200 401 403 405 422 429 500 503 507");
  expect(statuses("/api/v1/monitors", "post")).toBe("201 400 401 403 405 413 415 422 429 500 503 507");
  expect(statuses("/api/v1/monitors/{id}", "patch")).toBe("200 400 401 403 404 405 413 415 422 429 500 503 507");
  expect(statuses("/api/v1/monitors/{id}", "delete")).toBe("200 401 403 404 405 429 500 503 507");
  expect(statuses("/h/{token}", "post")).toBe("200 404 405 413 429 500 503 507");
  expect(statuses("/metrics", "get")).toBe("200 401 403 429 500 503");
});

test("every documented endpoint, and every registered route, is in the document", () => {
  const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m} ${p}`));
  for (const op of DOCUMENTED) expect(ops).toContain(op);
  for (const r of apiRoutes) expect(ops).toContain(`${r.method.toLowerCase()} ${openApiPath(r.path)}`);
});

test("operations carry their scope, path and query parameters, body and response schemas", () => {
  for (const r of apiRoutes) {
    const op = doc.paths[openApiPath(r.path)][r.method.toLowerCase()];
    expect(op.description).toContain(r.scope);
    const params = (op.parameters ?? []) as { name: string; in: string }[];
    if (r.path.includes(":id")) expect(params).toContainEqual(expect.objectContaining({ name: "id", in: "path" }));
    if (r.body) expect(op.requestBody.content["application/json"].schema).toBeDefined();
    const success = op.responses[String(r.successStatus ?? 200)];
    expect(success.content["application/json"].schema.properties).toHaveProperty("data");
  }
});

test("list endpoints document paging and their filters", () => {
  const names = (path: string) => doc.paths[path].get.parameters.filter((p: { in: string }) => p.in === "query").map((p: { name: string }) => p.name);
  expect(names("/api/v1/monitors")).toEqual(["page", "per_page", "external_id", "status", "type", "q", "group_id", "tag"]);
  expect(names("/api/v1/monitors/{id}/checks")).toEqual(["page", "per_page", "status", "from", "to", "region"]);
  expect(names("/api/v1/incidents")).toEqual(["page", "per_page", "monitor_id", "resolved", "from", "to"]);
  expect(names("/api/v1/status-pages")).toEqual(["page", "per_page", "external_id", "q"]);
  expect(names("/api/v1/groups")).toEqual(["page", "per_page", "external_id"]);
  expect(names("/api/v1/notification-channels")).toEqual(["page", "per_page", "external_id"]);
  expect(names("/api/v1/maintenance-windows")).toEqual(["page", "per_page", "external_id"]);
  expect(names("/api/v1/status-pages/{id}/updates")).toEqual(["page", "per_page"]);
  const list = doc.paths["/api/v1/monitors"].get.responses["200"].content["application/json"].schema;
  expect(Object.keys(list.properties.pagination.properties)).toEqual(["page", "per_page", "total", "total_pages"]);
});

test("the monitor schemas: one per type, secrets write-only, what a create needs required", () => {
  const post = doc.paths["/api/v1/monitors"].post;
  const [flat, jsonApi] = post.requestBody.content["application/json"].schema.anyOf;
  const create = new Map<string, any>(flat.oneOf.map((v: any) => [v.properties.monitor_type.const, v]));
  expect([...create.keys()]).toEqual(MONITOR_TYPES as unknown as string[]);
  expect(create.get("http").properties.api_auth_bearer_token.anyOf[0].writeOnly).toBe(true);
  expect(create.get("heartbeat").properties.heartbeat_schedule).toBeDefined();
  expect(create.get("tcp").properties).not.toHaveProperty("synthetic_enabled");
  expect(create.get("http").required).toEqual(["name", "monitor_type", "target", "interval_sec", "timeout_ms"]);
  expect(create.get("heartbeat").required).toEqual(["name", "monitor_type", "interval_sec", "timeout_ms"]);
  for (const v of create.values()) expect(v.additionalProperties).toBe(false);
  expect(jsonApi.properties.data.properties.type.const).toBe("monitor");
  expect(jsonApi.properties.data.properties.attributes.oneOf).toHaveLength(MONITOR_TYPES.length);
  // a response names the per-type schemas, each listing every attribute of its type as always there
  expect(post.responses["201"].content["application/json"].schema.properties.data.properties.attributes).toEqual({ $ref: "#/components/schemas/Monitor" });
  const schemas = doc.components.schemas;
  expect(schemas.Monitor.oneOf.map((r: { $ref: string }) => r.$ref)).toEqual(MONITOR_TYPES.map((t) => `#/components/schemas/${t.charAt(0).toUpperCase()}${t.slice(1)}Monitor`));
  const http = schemas.HttpMonitor;
  for (const f of ["name", "monitor_type", "interval_sec", "tls_verify", "port", "regions", "notification_channel_ids", "synthetic_steps_json", "synthetic_enabled"]) expect(http.required).toContain(f);
  for (const f of ["api_auth_bearer_token", "api_auth_basic_pass", "api_auth_api_key_value", "heartbeat_token", "dns_record_type"]) expect(http.properties).not.toHaveProperty(f);
  expect(schemas.TcpMonitor.properties).not.toHaveProperty("synthetic_enabled");
  expect(schemas.HeartbeatMonitor.required).toContain("heartbeat_token");
  expect(http.properties.interval_sec.minimum).toBe(10);
  expect(http.properties.interval_sec.maximum).toBe(86400);
});

/** Where `default` stands in a schema (JSON pointers), attribute names under `properties` aside. */
function defaultsIn(schema: unknown, at = ""): string[] {
  if (schema === null || typeof schema !== "object") return [];
  return Object.entries(schema).flatMap(([k, v]) => {
    if (k === "default") return [at];
    if (k === "properties") return Object.entries(v as object).flatMap(([n, s]) => defaultsIn(s, `${at}/properties/${n}`));
    return defaultsIn(v, `${at}/${k}`);
  });
}

test("defaults are said on create bodies only: never in a response, a component or an update body", () => {
  const found: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === "parameters" || method === "servers") continue;
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) found.push(...defaultsIn(r.content, `${method} ${path} ${status}`));
      if (method !== "post") found.push(...defaultsIn(op.requestBody, `${method} ${path} body`));
    }
  }
  found.push(...defaultsIn(doc.components.schemas, "components"));
  expect(found).toEqual([]);
  const created = doc.paths["/api/v1/monitors"].post.requestBody.content["application/json"].schema.anyOf[0].oneOf[0];
  expect(created.properties.follow_redirects.default).toBe(true);
});

test("every GET is listed with its HEAD, whose answers have no body", () => {
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    expect(`${path}: ${"head" in item}`).toBe(`${path}: ${"get" in item}`);
    if (!item.head) continue;
    expect(item.head.operationId).toBe(item.get.operationId.replace(/^get/, "head"));
    expect(Object.keys(item.head.responses)).toEqual(Object.keys(item.get.responses).filter((s) => s !== "405"));
    for (const r of Object.values(item.head.responses as Record<string, any>)) expect(r.content).toBeUndefined();
  }
});

test("the monitor list can ask for paused monitors", () => {
  const status = doc.paths["/api/v1/monitors"].get.parameters.find((p: { name: string }) => p.name === "status");
  expect(status.schema.anyOf.map((s: { const: string }) => s.const)).toEqual(["up", "down", "degraded", "unknown", "paused"]);
});
