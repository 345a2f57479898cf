/**
 * A client generated from the live /api/v1/openapi.json by openapi-typescript, the generator many
 * TypeScript users run (its own workspace, test/tools/openapi-typescript: it needs TypeScript 5's
 * compiler API), must be honest about the server: the live answers of every resource, monitors and
 * channels of each type among them, type-check against the generated types as object literals
 * (so an attribute the types lack is an error too), and what the server refuses does not type-check.
 * One run of the repository's tsc checks both files; its errors are told apart by file and line.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CHANNEL_TYPES } from "../../src/domain/notification-channel-schema.ts";
import { ROOT } from "../helpers/process.ts";
import { startTestServer, tempDir, type TestServer } from "../helpers/server.ts";
import { CHANNEL_BY_TYPE, createMonitor, createStatusPage, VALID_BY_TYPE } from "./fixtures.ts";

const GENERATOR = join(ROOT, "test/tools/openapi-typescript/node_modules/openapi-typescript/dist/index.mjs");

let s: TestServer;
const dir = tempDir("vigil-openapi-ts-");
/** "GET /api/v1/monitors" → the live answer's body */
const answers = new Map<string, unknown>();

beforeAll(async () => {
  s = await startTestServer();
  const ids: number[] = [];
  for (const attrs of Object.values(VALID_BY_TYPE)) ids.push(await createMonitor(s, attrs));
  for (const type of CHANNEL_TYPES) {
    const r = await s.api("POST", "/api/v1/notification-channels", { name: `${type} channel`, channel_type: type, ...CHANNEL_BY_TYPE[type] });
    if (r.status !== 201) throw new Error(`${type}: ${r.status} ${r.text}`);
  }
  const page = await createStatusPage(s, { name: "Public", monitor_ids: ids.slice(0, 3) });
  const posts: [string, Record<string, unknown>][] = [
    ["/api/v1/maintenance-windows", { name: "Upgrade", monitor_ids: [ids[0]], starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T03:00:00Z" }],
    ["/api/v1/maintenance-windows", { name: "Sundays", monitor_ids: [ids[1]], schedule: "0 3 * * 0", duration_sec: 3600 }],
    ["/api/v1/groups", { name: "Web" }],
    [`/api/v1/status-pages/${page}/updates`, { title: "Slow logins", kind: "incident" }],
  ];
  for (const [path, body] of posts) if ((await s.api("POST", path, body)).status !== 201) throw new Error(`POST ${path} was refused`);
  for (const path of ["/api/v1/monitors?per_page=100", `/api/v1/monitors/${ids[0]}`, "/api/v1/monitors?status=paused", "/api/v1/notification-channels?per_page=100", "/api/v1/maintenance-windows", "/api/v1/groups", "/api/v1/status-pages", `/api/v1/status-pages/${page}/updates`]) {
    const r = await s.api("GET", path);
    if (r.status !== 200) throw new Error(`GET ${path}: ${r.status}`);
    answers.set(path, r.json);
  }
});
afterAll(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The generated type of a GET's 200 body, for a path of the document. */
const okBody = (path: string) => `paths["${path.replace(/\?.*/, "").replace(/\/\d+/g, "/{id}")}"]["get"]["responses"][200]["content"]["application/json"]`;

/** Each line must not type-check on its own; each is one statement. */
const REFUSED = [
  // a create with nothing, or without what its type needs
  `const empty: CreateMonitor = {};`,
  `const noTarget: CreateMonitor = { name: "x", monitor_type: "http", interval_sec: 60, timeout_ms: 5000 };`,
  `const otherType: CreateMonitor = { name: "x", monitor_type: "tcp", target: "db:5432", interval_sec: 60, timeout_ms: 5000, synthetic_enabled: true };`,
  `const noUrl: CreateChannel = { name: "x", channel_type: "webhook" };`,
  `const noKind: CreateWindow = { name: "x", monitor_ids: [1] };`,
  `const bothKinds: CreateWindow = { name: "x", monitor_ids: [1], starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T03:00:00Z", schedule: "0 3 * * 0", duration_sec: 60 };`,
  `const noName: CreateGroup = {};`,
  `const noTitle: CreateUpdate = { kind: "info" };`,
  // an attribute some monitor types lack is not there until the type is known
  `const synthetic: boolean = monitor.synthetic_enabled;`,
  `const tokenOf: string | null = monitor.heartbeat_token;`,
  `const sleeping: ListQuery = { status: "sleeping" };`,
];

const HEADER = `import type { components, paths } from "./vigil-api";
type Body<T> = T extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;
type CreateMonitor = Body<paths["/api/v1/monitors"]["post"]>;
type CreateChannel = Body<paths["/api/v1/notification-channels"]["post"]>;
type CreateWindow = Body<paths["/api/v1/maintenance-windows"]["post"]>;
type CreateGroup = Body<paths["/api/v1/groups"]["post"]>;
type CreateUpdate = Body<paths["/api/v1/status-pages/{id}/updates"]["post"]>;
type ListQuery = NonNullable<paths["/api/v1/monitors"]["get"]["parameters"]["query"]>;
type Monitor = components["schemas"]["Monitor"];
declare const monitor: Monitor;
`;

function goodFile(): string {
  const lines = [HEADER];
  let n = 0;
  for (const [path, body] of answers) lines.push(`export const answer${n++}: ${okBody(path)} = ${JSON.stringify(body)};`);
  lines.push(`
// once monitor_type is known, its type's attributes are there
export const synthetic: boolean | null = monitor.monitor_type === "http" ? monitor.synthetic_enabled : null;
export const token: string | null = monitor.monitor_type === "heartbeat" ? monitor.heartbeat_token : null;
export const creates: CreateMonitor[] = [
  { name: "db", monitor_type: "tcp", target: "db.internal:5432", interval_sec: 60, timeout_ms: 5000 },
  { name: "job", monitor_type: "heartbeat", interval_sec: 3600, timeout_ms: 1000, heartbeat_grace_sec: 300 },
  { data: { type: "monitor", attributes: { name: "api", monitor_type: "http", target: "https://api.example.com/", interval_sec: 60, timeout_ms: 5000, synthetic_enabled: false } } },
];
export const channel: CreateChannel = { name: "hook", channel_type: "webhook", url: "https://hooks.example.com/x" };
export const windows: CreateWindow[] = [
  { name: "once", monitor_ids: [1], starts_at: "2030-01-01T02:00:00Z", ends_at: "2030-01-01T03:00:00Z" },
  { name: "weekly", monitor_ids: [1], schedule: "0 3 * * 0", duration_sec: 3600, starts_at: null },
];
export const group: CreateGroup = { name: "Web" };
export const update: CreateUpdate = { title: "Slow logins", kind: "incident" };
export const paused: ListQuery = { status: "paused" };
`);
  return lines.join("\n");
}

test("the generated client types the live answers, and refuses what the server refuses", async () => {
  const doc = await (await fetch(`${s.url}/api/v1/openapi.json`)).json();
  const { default: openapiTS, astToString } = (await import(GENERATOR)) as { default: (doc: unknown) => Promise<unknown>; astToString: (ast: unknown) => string };
  writeFileSync(join(dir, "vigil-api.ts"), astToString(await openapiTS(doc)));
  writeFileSync(join(dir, "good.ts"), goodFile());
  const bad = [HEADER, ...REFUSED, ""].join("\n");
  writeFileSync(join(dir, "bad.ts"), bad);
  const lineOf = (statement: string) => bad.split("\n").indexOf(statement) + 1;
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ESNext", module: "ESNext", moduleResolution: "bundler", skipLibCheck: true, types: [], noUnusedLocals: false }, files: ["vigil-api.ts", "good.ts", "bad.ts"] }),
  );
  const tsc = Bun.spawn([join(ROOT, "node_modules/.bin/tsc"), "-p", join(dir, "tsconfig.json"), "--pretty", "false"], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text(), tsc.exited]);
  const errors = (out + err).split("\n").filter((l) => /\(\d+,\d+\): error /.test(l));
  expect(errors.filter((l) => !l.startsWith("bad.ts("))).toEqual([]);
  const refusedLines = new Set(errors.filter((l) => l.startsWith("bad.ts(")).map((l) => Number(/^bad\.ts\((\d+),/.exec(l)![1])));
  expect(REFUSED.filter((statement) => !refusedLines.has(lineOf(statement)))).toEqual([]);
}, 60_000);
