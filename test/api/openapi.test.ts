import { afterAll, beforeAll, expect, test } from "bun:test";
import { apiRoutes } from "../../src/api/routes.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

// The OpenAPI document is public and generated from the same TypeBox schemas the handlers use.
let s: TestServer;
let doc: any;
beforeAll(async () => {
  s = await startTestServer();
  const res = await s.api("GET", "/api/v1/openapi.json", undefined, { token: null });
  expect(res.status).toBe(200);
  doc = res.json;
});
afterAll(() => s.stop());

const openApiPath = (p: string) => p.replace(/:(\w+)/g, "{$1}");

// api-v1.md "Endpoints" plus the decisions.md extensions
const DOCUMENTED = [
  "get /api/v1/monitors", "post /api/v1/monitors", "get /api/v1/monitors/{id}", "patch /api/v1/monitors/{id}", "delete /api/v1/monitors/{id}",
  "get /api/v1/monitors/{id}/checks", "get /api/v1/incidents", "get /api/v1/incidents/{id}",
  "get /api/v1/status-pages", "post /api/v1/status-pages", "get /api/v1/status-pages/{id}", "patch /api/v1/status-pages/{id}", "delete /api/v1/status-pages/{id}",
  "post /api/v1/monitors/{id}/heartbeat-token/rotate", "get /api/v1/monitors/{id}/events",
];

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
  expect(names("/api/v1/monitors")).toEqual(["page", "per_page", "status", "type", "q"]);
  expect(names("/api/v1/monitors/{id}/checks")).toEqual(["page", "per_page", "status", "from", "to", "region"]);
  expect(names("/api/v1/incidents")).toEqual(["page", "per_page", "monitor_id", "resolved", "from", "to"]);
  expect(names("/api/v1/status-pages")).toEqual(["page", "per_page", "q"]);
  const list = doc.paths["/api/v1/monitors"].get.responses["200"].content["application/json"].schema;
  expect(Object.keys(list.properties.pagination.properties)).toEqual(["page", "per_page", "total", "total_pages"]);
});

test("the monitor schemas: secrets are write-only, response attributes include every field", () => {
  const post = doc.paths["/api/v1/monitors"].post;
  const [flat, jsonApi] = post.requestBody.content["application/json"].schema.anyOf;
  expect(flat.properties.api_auth_bearer_token).toBeDefined();
  expect(flat.properties.heartbeat_schedule).toBeDefined();
  expect(flat.additionalProperties).toBe(false);
  expect(jsonApi.properties.data.properties.type.const).toBe("monitor");
  const attrs = post.responses["201"].content["application/json"].schema.properties.data.properties.attributes.properties;
  for (const f of ["name", "monitor_type", "interval_sec", "heartbeat_token", "dns_record_type", "tls_verify", "port", "regions", "notification_channel_ids", "synthetic_steps_json"]) expect(attrs).toHaveProperty(f);
  for (const f of ["api_auth_bearer_token", "api_auth_basic_pass", "api_auth_api_key_value"]) expect(attrs).not.toHaveProperty(f);
  expect(attrs.interval_sec.minimum).toBe(10);
  expect(attrs.interval_sec.maximum).toBe(86400);
});
