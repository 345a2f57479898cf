import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rowToProbeMonitor } from "../../src/engine/probe-monitor.ts";
import { randomToken } from "../../src/lib/tokens.ts";
import { databaseAtRest } from "../helpers/engine.ts";
import { scenarios, type Scenario } from "../helpers/scenarios.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { createMonitor, VALID_BY_TYPE } from "./fixtures.ts";

// The websocket, grpc, smtp, postgres, mysql, redis, docker and domain types (docs/monitors.md
// "Types and attributes", "Targets", "Database passwords"): what each accepts, refuses and returns.
let s: TestServer;
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

const of = (type: string, o: Record<string, unknown> = {}) => ({ ...VALID_BY_TYPE[type], ...o });

const COMMON = ["name", "external_id", "monitor_type", "target", "method", "interval_sec", "timeout_ms", "group_id", "is_paused", "is_in_maintenance", "last_status", "last_checked_at", "next_run_at", "created_at", "updated_at", "synthetic_trace_body_detail", "regions", "notification_channel_ids", "tags", "depends_on_ids", "alert_repeat_minutes", "escalation_channel_ids", "escalate_after_minutes", "api_max_latency_ms"];

/** Each type with every attribute of its own set, and what a response shows besides the common ones. */
const FULL: Record<string, { body: Record<string, unknown>; shown: Record<string, unknown> }> = {
  websocket: {
    body: of("websocket", { target: "wss://127.0.0.1:9/live?room=1", ws_send: '{"op":"ping"}', ws_expect: "pong", api_headers_json: { "X-Client": "vigil" }, tls_verify: false, api_max_latency_ms: 500 }),
    shown: { ws_send: '{"op":"ping"}', ws_expect: "pong", api_headers_json: { "X-Client": "vigil" }, tls_verify: false, api_max_latency_ms: 500 },
  },
  grpc: {
    body: of("grpc", { target: "[::1]:50051", grpc_service: "shop.Checkout", grpc_tls: true, tls_verify: false }),
    shown: { grpc_service: "shop.Checkout", grpc_tls: true, tls_verify: false, api_max_latency_ms: null },
  },
  smtp: {
    body: of("smtp", { target: "127.0.0.1:465", smtp_security: "tls", tls_verify: true, ssl_expiry_warn_days: 21 }),
    shown: { smtp_security: "tls", tls_verify: true, ssl_expiry_warn_days: 21, ssl_expiry_last_not_after: null, ssl_last_issuer: null },
  },
  postgres: {
    body: of("postgres", { target: "postgres://monitor@127.0.0.1:5432/app", db_password: "pg-pass-1", db_query: "SELECT count(*) FROM jobs", db_tls: true }),
    shown: { db_query: "SELECT count(*) FROM jobs", db_tls: true },
  },
  mysql: {
    body: of("mysql", { target: "mysql://monitor@127.0.0.1/app", db_password: "my-pass-1", db_query: "SELECT 1", db_tls: false }),
    shown: { db_query: "SELECT 1", db_tls: false },
  },
  redis: {
    body: of("redis", { target: "rediss://127.0.0.1:6380/2", db_password: "redis-pass-1", redis_username: "vigil" }),
    shown: { redis_username: "vigil" },
  },
  docker: {
    body: of("docker", { target: "3f4e8a2b9c1d", docker_host: "tcp://127.0.0.1:2375" }),
    shown: { docker_host: "tcp://127.0.0.1:2375" },
  },
  domain: {
    body: of("domain", { target: "example.co.uk", domain_expiry_warn_days: 60 }),
    shown: { domain_expiry_warn_days: 60, domain_expires_at: null },
  },
};

describe("create and read", () => {
  test.each(Object.keys(FULL))("a %s monitor is created with its own attributes, and shows exactly the common ones and its own", async (type) => {
    const { body, shown } = FULL[type]!;
    const res = await call("POST", "/api/v1/monitors", body);
    expect(res.status).toBe(201);
    const a = res.json.data.attributes;
    expect(a).toMatchObject({ monitor_type: type, target: body.target, ...shown });
    expect(Object.keys(a).sort()).toEqual([...COMMON, ...Object.keys(shown)].filter((k, i, all) => all.indexOf(k) === i).sort());
    const got = await call("GET", `/api/v1/monitors/${res.json.data.id}`);
    expect(got.json.data.attributes).toEqual(a);
  });

  test("defaults: each new type's attributes when only the required ones are sent", async () => {
    const want: Record<string, Record<string, unknown>> = {
      websocket: { ws_send: null, ws_expect: null, api_headers_json: null, tls_verify: true, api_max_latency_ms: null },
      grpc: { grpc_service: "", grpc_tls: false, tls_verify: true },
      smtp: { smtp_security: "none", tls_verify: true, ssl_expiry_warn_days: null, ssl_expiry_last_not_after: null, ssl_last_issuer: null },
      postgres: { db_query: null, db_tls: false },
      mysql: { db_query: null, db_tls: false },
      redis: { redis_username: null },
      docker: { docker_host: null },
      domain: { domain_expiry_warn_days: 30, domain_expires_at: null },
    };
    for (const [type, attrs] of Object.entries(want)) {
      const res = await call("POST", "/api/v1/monitors", VALID_BY_TYPE[type]);
      expect({ type, status: res.status }).toEqual({ type, status: 201 });
      expect(res.json.data.attributes).toMatchObject(attrs);
    }
  });

  test("domain_expires_at, and an smtp monitor's ssl_expiry_last_not_after, are read-only times the checks set", async () => {
    const domain = await createMonitor(s, of("domain"));
    const smtp = await createMonitor(s, of("smtp"));
    await s.ctx.db.updateTable("monitors").set({ domain_expires_at: Date.UTC(2031, 5, 1) }).where("id", "=", domain).execute();
    await s.ctx.db.updateTable("monitors").set({ ssl_expiry_last_not_after: Date.UTC(2027, 2, 1) }).where("id", "=", smtp).execute();
    const sentBack = await call("PATCH", `/api/v1/monitors/${domain}`, { domain_expires_at: "2000-01-01T00:00:00.000Z", domain_expiry_warn_days: 10 });
    expect(sentBack.status).toBe(200);
    expect(sentBack.json.data.attributes).toMatchObject({ domain_expires_at: "2031-06-01T00:00:00.000Z", domain_expiry_warn_days: 10 });
    expect((await call("GET", `/api/v1/monitors/${smtp}`)).json.data.attributes.ssl_expiry_last_not_after).toBe("2027-03-01T00:00:00.000Z");
  });

  test("?type= lists each new type's monitors, and only them", async () => {
    for (const type of Object.keys(FULL)) {
      const res = await call("GET", `/api/v1/monitors?type=${type}&per_page=100`);
      expect(res.status).toBe(200);
      expect(res.json.data.length).toBeGreaterThan(0);
      expect(new Set(res.json.data.map((m: { attributes: { monitor_type: string } }) => m.attributes.monitor_type))).toEqual(new Set([type]));
    }
  });

  test("valid targets of every form the rules allow", async () => {
    const ok = [
      of("websocket", { target: "ws://[::1]:8080/" }),
      of("websocket", { target: "wss://example.com" }),
      of("grpc", { target: "grpc.example.com:443" }),
      of("smtp", { target: "mail.example.com" }),
      of("smtp", { target: "[::1]:2525", smtp_security: "starttls" }),
      of("postgres", { target: "postgres://monitor@db.example.com" }),
      of("postgres", { target: "postgres://monitor:@db.example.com:6543/" }),
      of("mysql", { target: "mysql://root@[::1]:3307/shop" }),
      of("redis", { target: "redis://cache.example.com" }),
      of("redis", { target: "rediss://cache.example.com:6380/" }),
      of("docker", { target: "my_app.web-1", docker_host: "unix:///run/user/1000/docker.sock" }),
      of("docker", { target: "nextcloud", docker_host: "http://docker.example.com:2375/" }),
      // a socket proxy on port 80: the URL parser drops the scheme's default port, the text keeps it
      of("docker", { target: "nextcloud", docker_host: "http://docker-proxy.example.com:80" }),
      of("domain", { target: "xn--mnchen-3ya.de." }),
      of("domain", { target: "vigil.example", domain_expiry_warn_days: 365 }),
    ];
    for (const body of ok) {
      const res = await call("POST", "/api/v1/monitors", body);
      expect({ body, status: res.status, details: res.json.error?.details }).toEqual({ body, status: 201, details: undefined });
    }
  });
});

/** [what, POST body, exact details → a fragment of the one expected message per key]. */
const BAD: [string, Record<string, unknown>, Record<string, string>][] = [
  // targets (docs/monitors.md "Targets")
  ["websocket target http", of("websocket", { target: "http://example.com/socket" }), { target: "must be a ws:// or wss:// URL" }],
  ["websocket target without scheme", of("websocket", { target: "example.com/socket" }), { target: "must be a ws:// or wss:// URL" }],
  ["websocket target with a fragment", of("websocket", { target: "ws://example.com/#top" }), { target: "must not have a #fragment" }],
  ["grpc target without port", of("grpc", { target: "grpc.example.com" }), { target: "must be host:port" }],
  ["grpc target a URL", of("grpc", { target: "http://grpc.example.com:50051" }), { target: "must be host:port" }],
  ["grpc target bad port", of("grpc", { target: "grpc.example.com:70000" }), { target: "1 to 65535" }],
  ["smtp target a URL", of("smtp", { target: "smtp://mail.example.com" }), { target: "must be host or host:port" }],
  ["smtp target bad port", of("smtp", { target: "mail.example.com:0" }), { target: "1 to 65535" }],
  ["postgres target with a password", of("postgres", { target: "postgres://monitor:hunter2@db.example.com:5432/app" }), { target: "must not hold a password: send it in db_password" }],
  ["postgres target with a password and a bad port", of("postgres", { target: "postgres://monitor:hunter2@db.example.com:99999/app" }), { target: "must not hold a password" }],
  ["postgres target without user", of("postgres", { target: "postgres://db.example.com:5432/app" }), { target: "needs the user to log in as" }],
  ["postgres target of another scheme", of("postgres", { target: "mysql://monitor@db.example.com/app" }), { target: "must be a postgres://user@host:port/database URL" }],
  ["postgres target with a query", of("postgres", { target: "postgres://monitor@db.example.com/app?sslmode=require" }), { target: "must not have a query" }],
  ["postgres target with a nested path", of("postgres", { target: "postgres://monitor@db.example.com/app/extra" }), { target: "single path segment" }],
  ["postgres target port zero", of("postgres", { target: "postgres://monitor@db.example.com:0/app" }), { target: "1 to 65535" }],
  ["mysql target with a password", of("mysql", { target: "mysql://root:toor@db.example.com/app" }), { target: "must not hold a password: send it in db_password" }],
  ["mysql target host:port", of("mysql", { target: "db.example.com:3306" }), { target: "must be a mysql://user@host:port/database URL" }],
  ["redis target with a password", of("redis", { target: "redis://:hunter2@cache.example.com:6379" }), { target: "must not hold a password: send it in db_password" }],
  ["redis target with a user", of("redis", { target: "redis://vigil@cache.example.com:6379" }), { target: "send it in redis_username" }],
  ["redis target of another scheme", of("redis", { target: "http://cache.example.com:6379" }), { target: "must be a redis://host:port or rediss://host:port URL" }],
  ["redis target with a named database", of("redis", { target: "redis://cache.example.com:6379/cache" }), { target: "database number only" }],
  ["docker target with a slash", of("docker", { target: "/nextcloud" }), { target: "must be a container name or id" }],
  ["docker target of one character", of("docker", { target: "a" }), { target: "must be a container name or id" }],
  ["docker target with a colon", of("docker", { target: "nginx:latest" }), { target: "must be a container name or id" }],
  ["domain target a URL", of("domain", { target: "https://example.com/" }), { target: "without scheme, port or path" }],
  ["domain target with a path", of("domain", { target: "example.com/about" }), { target: "without scheme, port or path" }],
  ["domain target an IP", of("domain", { target: "192.0.2.1" }), { target: "not an IP address" }],
  ["domain target a top-level domain", of("domain", { target: "com" }), { target: "a top-level domain alone is not" }],
  ["domain target with an underscore", of("domain", { target: "my_site.com" }), { target: "letters, digits and hyphens" }],
  ["domain target not ASCII", of("domain", { target: "münchen.de" }), { target: "in its xn-- form" }],
  ["target missing", Object.fromEntries(Object.entries(of("redis")).filter(([k]) => k !== "target")), { target: "is required for redis monitors" }],
  // own attributes out of range
  ["smtp_security unknown", of("smtp", { smtp_security: "ssl" }), { smtp_security: "must be one of none, starttls, tls" }],
  ["grpc_service too long", of("grpc", { grpc_service: "x".repeat(201) }), { grpc_service: "at most 200 characters" }],
  ["grpc_tls not boolean", of("grpc", { grpc_tls: "yes" }), { grpc_tls: "must be true or false" }],
  ["ws_expect empty", of("websocket", { ws_expect: "" }), { ws_expect: "1 to 1000 characters" }],
  ["db_query empty", of("postgres", { db_query: "" }), { db_query: "1 to 10000 characters" }],
  ["db_password empty", of("mysql", { db_password: "" }), { db_password: "1 to 4096 characters" }],
  ["docker_host https", of("docker", { docker_host: "https://docker.example.com:2376" }), { docker_host: "must be unix:///path/to/docker.sock, tcp://host:port or http://host:port" }],
  ["docker_host tcp without port", of("docker", { docker_host: "tcp://docker.example.com" }), { docker_host: "tcp://host:port" }],
  ["docker_host relative socket", of("docker", { docker_host: "unix://docker.sock" }), { docker_host: "absolute path" }],
  ["docker_host with a path", of("docker", { docker_host: "http://docker.example.com:2375/v1.43" }), { docker_host: "tcp://host:port" }],
  ["domain_expiry_warn_days zero", of("domain", { domain_expiry_warn_days: 0 }), { domain_expiry_warn_days: "must be an integer from 1 to 365" }],
  ["domain_expiry_warn_days null", of("domain", { domain_expiry_warn_days: null }), { domain_expiry_warn_days: "must be an integer from 1 to 365" }],
  // attributes of another type (docs/monitors.md "Types and attributes")
  ["db_password on websocket", of("websocket", { db_password: "x" }), { db_password: "does not apply to websocket monitors; it is for postgres, mysql, redis monitors" }],
  ["ws_send on grpc", of("grpc", { ws_send: "hi" }), { ws_send: "does not apply to grpc monitors" }],
  ["tls_verify on postgres", of("postgres", { tls_verify: false }), { tls_verify: "does not apply to postgres monitors" }],
  ["port on redis", of("redis", { port: 6379 }), { port: "does not apply to redis monitors" }],
  ["keyword on smtp", of("smtp", { keyword: "ESMTP" }), { keyword: "does not apply to smtp monitors" }],
  ["db_query on redis", of("redis", { db_query: "PING" }), { db_query: "does not apply to redis monitors" }],
  ["redis_username on mysql", of("mysql", { redis_username: "u" }), { redis_username: "does not apply to mysql monitors" }],
  ["docker_host on domain", of("domain", { docker_host: null }), { docker_host: "does not apply to domain monitors" }],
  ["domain_expiry_warn_days on ssl", of("ssl", { domain_expiry_warn_days: 30 }), { domain_expiry_warn_days: "does not apply to ssl monitors" }],
  ["ssl_expiry_warn_days on websocket", of("websocket", { ssl_expiry_warn_days: 14 }), { ssl_expiry_warn_days: "does not apply to websocket monitors" }],
  ["api_headers_json on grpc", of("grpc", { api_headers_json: { "X-A": "1" } }), { api_headers_json: "does not apply to grpc monitors" }],
  ["smtp_security on the email-like http", { name: "web", monitor_type: "http", target: "http://127.0.0.1:9/", interval_sec: 60, timeout_ms: 5000, smtp_security: "tls" }, { smtp_security: "does not apply to http monitors" }],
  ["grpc_tls on tcp", of("tcp", { grpc_tls: true }), { grpc_tls: "does not apply to tcp monitors" }],
  ["api_max_latency_ms on heartbeat", of("heartbeat", { api_max_latency_ms: 100 }), { api_max_latency_ms: "does not apply to heartbeat monitors" }],
];

describe("POST validation of the new types: one row per rule, details name exactly the bad attributes", () => {
  scenarios(() => s, BAD.map(([name, body, details]): Scenario => ({ name, method: "POST", path: "/api/v1/monitors", body, status: 422, code: "validation_error", details, notContains: ["hunter2", "toor"] })));
});

describe("db_password (docs/monitors.md \"Database passwords\")", () => {
  const secret = (kind: string) => `s3cr3t-${kind}-${randomToken(12)}`;
  const pgPass = secret("pg");
  const myPass = secret("my");
  const redisPass = secret("redis");
  const rotated = secret("rotated");
  const refused = secret("refused");

  test("is accepted on POST and PATCH, sealed at rest, opened for the probe, and never in an answer", async () => {
    const pg = await call("POST", "/api/v1/monitors", of("postgres", { db_password: pgPass }));
    const my = await call("POST", "/api/v1/monitors", { data: { type: "monitor", attributes: of("mysql", { db_password: myPass }) } });
    const rd = await call("POST", "/api/v1/monitors", of("redis", { db_password: redisPass, redis_username: "vigil" }));
    for (const r of [pg, my, rd]) {
      expect(r.status).toBe(201);
      expect(Object.keys(r.json.data.attributes)).not.toContain("db_password");
    }
    const patched = await call("PATCH", `/api/v1/monitors/${pg.json.data.id}`, { db_password: rotated, db_query: "SELECT 2" });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes.db_query).toBe("SELECT 2");
    for (const r of [pg, my, rd]) await call("GET", `/api/v1/monitors/${r.json.data.id}`);
    await call("GET", "/api/v1/monitors?per_page=100");
    await call("GET", "/api/v1/monitors?type=postgres");
    await call("GET", "/api/v1/monitors?q=monitor");

    const row = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "=", Number(pg.json.data.id)).executeTakeFirstOrThrow();
    expect(row.db_password_enc).toMatch(/^v1\./);
    expect(row.db_password_enc).not.toContain(rotated);
    expect(rowToProbeMonitor(row, s.ctx.secrets, false)).toMatchObject({ db_password: rotated, db_query: "SELECT 2", db_tls: false, monitor_type: "postgres" });
    const redisRow = await s.ctx.db.selectFrom("monitors").selectAll().where("id", "=", Number(rd.json.data.id)).executeTakeFirstOrThrow();
    expect(rowToProbeMonitor(redisRow, s.ctx.secrets, false)).toMatchObject({ db_password: redisPass, redis_username: "vigil" });
  });

  test("a refused write does not echo it", async () => {
    for (const body of [of("postgres", { interval_sec: 1, db_password: refused }), of("websocket", { db_password: refused }), of("redis", { db_password: refused + "x".repeat(5000) })]) {
      expect((await call("POST", "/api/v1/monitors", body)).status).toBe(422);
    }
  });

  test("a target moved to another host or port needs it again; another database or user on the same server does not; null removes it", async () => {
    const id = await createMonitor(s, of("postgres", { target: "postgres://monitor@db-a.example.com:5432/app", db_password: secret("bound") }));
    const path = `/api/v1/monitors/${id}`;
    const stored = async () => (await s.ctx.db.selectFrom("monitors").select("db_password_enc").where("id", "=", id).executeTakeFirstOrThrow()).db_password_enc;

    expect((await call("PATCH", path, { target: "postgres://reporting@db-a.example.com/other" })).status).toBe(200); // 5432 is the default
    for (const target of ["postgres://reporting@db-b.example.com/other", "postgres://reporting@db-a.example.com:6432/other"]) {
      const moved = await call("PATCH", path, { target });
      expect(moved.status).toBe(422);
      expect(Object.keys(moved.json.error.details)).toEqual(["db_password"]);
      expect(moved.json.error.details.db_password[0]).toContain("must be sent again (or set to null)");
      expect(moved.json.error.details.db_password[0]).toContain("db-a.example.com:5432");
    }
    expect((await call("GET", path)).json.data.attributes.target).toBe("postgres://reporting@db-a.example.com/other");
    const before = await stored();
    expect((await call("PATCH", path, { target: "postgres://reporting@db-b.example.com/other", db_password: secret("again") })).status).toBe(200);
    expect(await stored()).not.toBe(before);
    expect((await call("PATCH", path, { target: "postgres://reporting@db-c.example.com/other", db_password: null })).status).toBe(200);
    expect(await stored()).toBeNull();
    // with nothing stored there is nothing to bind
    expect((await call("PATCH", path, { target: "postgres://reporting@db-d.example.com/other" })).status).toBe(200);

    const redis = await createMonitor(s, of("redis", { target: "redis://cache-a.example.com/0", db_password: secret("redis-bound") }));
    expect((await call("PATCH", `/api/v1/monitors/${redis}`, { target: "rediss://cache-a.example.com:6379/3" })).status).toBe(200);
    expect((await call("PATCH", `/api/v1/monitors/${redis}`, { target: "redis://cache-b.example.com/0" })).status).toBe(422);
  });

  test("no answer, log line or database file holds one in plaintext", async () => {
    const all = [pgPass, myPass, redisPass, rotated, refused];
    const text = bodies.join("\n");
    expect(bodies.length).toBeGreaterThan(20);
    for (const v of all) {
      expect(text).not.toContain(v);
      expect(s.logText()).not.toContain(v);
    }
    await s.ctx.writes.flush();
    const { text: raw } = await databaseAtRest(s.dataDir);
    expect(raw).toContain("SELECT count(*) FROM jobs"); // the bytes searched hold the monitors' rows
    for (const v of [pgPass, myPass, redisPass, rotated]) expect(raw.includes(v)).toBe(false);
  });
});
