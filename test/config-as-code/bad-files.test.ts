/**
 * A configuration file that cannot be applied changes nothing and names the line and field of each
 * problem (README "Configuration as code"); the file's JSON Schema is served beside the OpenAPI
 * document and equals the copy in docs/.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runVigil } from "../helpers/process.ts";
import { apiClient, makeAccount, startTestServer, tempDir, type TestServer } from "../helpers/server.ts";

let server: TestServer;
let token: string;
let api: TestServer["api"];
const dir = tempDir("vigil-cac-bad-");

async function snapshot(): Promise<string> {
  const out: unknown[] = [];
  for (const p of ["groups", "notification-channels", "monitors", "maintenance-windows", "status-pages"]) out.push((await api("GET", `/api/v1/${p}?per_page=100`)).json.data);
  return JSON.stringify(out);
}

beforeAll(async () => {
  server = await startTestServer();
  ({ token } = await makeAccount(server.ctx, "bad-files", "enterprise"));
  api = apiClient(server.url, token);
  const r = await api("POST", "/api/v1/monitors", { name: "Existing", monitor_type: "tcp", target: "127.0.0.1:9", interval_sec: 60, timeout_ms: 1000, external_id: "existing", is_paused: true });
  expect(r.status).toBe(201);
});

afterAll(async () => {
  await server?.stop();
});

/** A valid group and monitor first, so that a partial apply would have created something. */
const VALID = ["groups:", "  ok:", "    name: Fine group", "monitors:", "  fine:", "    name: Fine", "    monitor_type: tcp", "    target: 127.0.0.1:9", "    interval_sec: 60", "    timeout_ms: 1000"];

const monitor = (...lines: string[]) => [...VALID, "  broken:", "    name: Broken", ...lines].join("\n") + "\n";
const tcp = ["    monitor_type: tcp", "    target: 127.0.0.1:9"];

const CASES: { name: string; text: string; marker: string; field: string; message: string }[] = [
  { name: "wrong type", text: monitor(...tcp, "    interval_sec: sixty", "    timeout_ms: 1000"), marker: "interval_sec: sixty", field: "monitors.broken.interval_sec", message: "must be an integer from 10 to 86400" },
  { name: "unknown field", text: monitor(...tcp, "    interval_sec: 60", "    timeout_ms: 1000", "    colour: red"), marker: "colour: red", field: "monitors.broken.colour", message: "is not a monitor attribute of a configuration file" },
  { name: "missing reference", text: monitor(...tcp, "    interval_sec: 60", "    timeout_ms: 1000", "    group: nope"), marker: "group: nope", field: "monitors.broken.group", message: 'names no group of this file: "nope"' },
  { name: "missing variable", text: monitor("    monitor_type: http", "    target: https://example.com/", "    interval_sec: 60", "    timeout_ms: 1000", "    api_auth_type: bearer", "    api_auth_bearer_token: ${VIGIL_TEST_UNSET_VARIABLE}"), marker: "api_auth_bearer_token:", field: "monitors.broken.api_auth_bearer_token", message: "needs the environment variable VIGIL_TEST_UNSET_VARIABLE, which is not set" },
  { name: "timeout above interval", text: monitor(...tcp, "    interval_sec: 10", "    timeout_ms: 20000"), marker: "timeout_ms: 20000", field: "monitors.broken.timeout_ms", message: "must be below interval_sec × 1000 (10000 ms for an interval of 10 s)" },
  { name: "dependency cycle", text: monitor(...tcp, "    interval_sec: 60", "    timeout_ms: 1000", "    depends_on: [broken]"), marker: "depends_on:", field: "monitors.broken.depends_on", message: "cannot include the monitor itself" },
  { name: "a type that cannot change", text: [...VALID, "  existing:", "    name: Existing", "    monitor_type: dns", "    target: example.com", "    interval_sec: 60", "    timeout_ms: 1000"].join("\n") + "\n", marker: "monitor_type: dns", field: "monitors.existing.monitor_type", message: "cannot change: the monitor is tcp" },
  { name: "pattern RE2 cannot run", text: monitor("    monitor_type: http", "    target: https://example.com/", "    interval_sec: 60", "    timeout_ms: 1000", "    api_json_assertions_json:", "      - path: status", "        op: regex", '        value: "^(?=ok)"'), marker: "api_json_assertions_json:", field: "monitors.broken.api_json_assertions_json", message: "rule 1: value is not a pattern Vigil can run (RE2 syntax; no backreferences or lookarounds): invalid or unsupported Perl syntax: `(?=`" },
  { name: "YAML syntax", text: [...VALID, "  broken: [unclosed"].join("\n") + "\n", marker: "broken: [unclosed", field: "", message: "" },
];

for (const c of CASES) {
  test(`a bad file (${c.name}) exits non-zero naming the line and field, and changes nothing`, async () => {
    const file = join(dir, `${c.name.replaceAll(" ", "-")}.yaml`);
    writeFileSync(file, c.text);
    const line = c.text.split("\n").findIndex((l) => l.includes(c.marker)) + 1;
    const before = await snapshot();
    const r = await runVigil(["apply", "-f", file, "--server", server.url], { VIGIL_TOKEN: token });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("nothing was changed");
    if (c.field) expect(r.stderr).toContain(`${file}:${line}: ${c.field}: ${c.message}`);
    else expect(r.stderr).toMatch(new RegExp(`${file.replaceAll(/[.*+?^${}()|[\]\\]/g, "\\$&")}:(${line}|${line + 1}): `));
    expect(await snapshot()).toBe(before);
  });
}

test("--plan on a bad file fails the same way", async () => {
  const file = join(dir, "plan.yaml");
  writeFileSync(file, CASES[0]!.text);
  const r = await runVigil(["apply", "-f", file, "--plan", "--server", server.url], { VIGIL_TOKEN: token });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("monitors.broken.interval_sec");
});

test("the configuration schema is served without a token, equals docs/config-schema.json, and the OpenAPI document names it", async () => {
  const res = await fetch(`${server.url}/api/v1/config-schema.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/schema+json");
  const served = await res.text();
  // regenerate the copy with: bun scripts/config-schema.ts > docs/config-schema.json
  expect(served).toBe(readFileSync(join(ROOT, "docs", "config-schema.json"), "utf8"));
  const schema = JSON.parse(served);
  expect(Object.keys(schema.properties)).toEqual(["version", "groups", "notification_channels", "monitors", "maintenance_windows", "status_pages"]);
  const doc = await (await fetch(`${server.url}/api/v1/openapi.json`)).json();
  expect(doc.info.description).toContain("/api/v1/config-schema.json");
});
