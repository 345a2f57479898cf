/**
 * postgres probe against real PostgreSQL servers started here (test/helpers/postgres-server.ts,
 * clusters of their own, apart from the one the PostgreSQL suite keeps Vigil's data in): one with
 * SCRAM passwords and TLS, one without TLS.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CheckResult } from "../../src/domain/check-result.ts";
import { postgresProbe } from "../../src/probes/postgres.ts";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { waitUntil } from "../helpers/daemon.ts";
import { startPostgresServer, type PostgresProbeServer } from "../helpers/postgres-server.ts";
import { secretLeaks } from "../helpers/secret-leaks.ts";
import { closedPort, startBlackholeTcp, type BlackholeTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let certs: TestCerts;
let pg: PostgresProbeServer;
let plain: PostgresProbeServer;
let hole: BlackholeTarget;
const results: CheckResult[] = [];

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-certs-")));
  [pg, plain, hole] = await Promise.all([startPostgresServer({ tls: { certPath: certs.certPath, keyPath: certs.keyPath } }), startPostgresServer(), startBlackholeTcp()]);
}, 180_000);
afterAll(async () => {
  await Promise.all([pg?.stop(), plain?.stop()]);
  hole?.close();
  rmSync(certs.dir, { recursive: true, force: true });
});

type Overrides = Parameters<typeof monitor>[0];
async function check(o: Overrides = {}, ctx = context(), server = pg): Promise<CheckResult> {
  const r = await postgresProbe(monitor({ target: server.url, db_password: server.password, timeout_ms: 10_000, ...o }), ctx);
  results.push(r);
  return r;
}
const withCa = () => context({ extraCa: certs.caPem });

/** Sessions of `user` still open on the server, as the server sees them. */
async function sessions(user: string, server = pg): Promise<number> {
  const [row] = await server.admin<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = '${user}'`);
  return row!.n;
}
async function expectNoSessions(user = "vigil", server = pg) {
  await waitUntil(async () => (await sessions(user, server)) === 0, 10_000, () => new Error(`sessions of ${user} still open on the server`));
}

test("SELECT 1 as the user with its password is up, and the connection is closed afterwards", async () => {
  const r = await check();
  expect(r).toMatchObject({ status: "up", error_code: null, error_message: null, resolved_ip: "127.0.0.1", ssl_not_after: null });
  expect(r.latency_ms).toBeGreaterThanOrEqual(1);
  await expectNoSessions();
});

test("db_query runs; a host name is resolved and connected to at its address", async () => {
  const r = await check({ db_query: "SELECT count(*) FROM pg_class; SELECT current_user", target: `postgres://vigil@localhost:${pg.port}/vigil_probe` });
  expect(r).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
});

test("a wrong password and an unknown user are db_auth_failed", async () => {
  const wrong = await check({ db_password: "not-the-password" });
  expect(wrong).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(wrong.error_message).toBe(`PostgreSQL at 127.0.0.1:${pg.port} refused the login of "vigil": password authentication failed for user "vigil" (28P01)`);
  const none = await check({ db_password: null });
  expect(none.error_code).toBe("db_auth_failed");
  const unknown = await check({ target: `postgres://nobody@127.0.0.1:${pg.port}/vigil_probe` });
  expect(unknown).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(unknown.error_message).toContain('"nobody"');
});

test("a query that errors is db_query_failed with the server's words", async () => {
  const r = await check({ db_query: "SELECT * FROM no_such_table" });
  expect(r).toMatchObject({ status: "down", error_code: "db_query_failed" });
  expect(r.error_message).toBe(`the query failed on 127.0.0.1:${pg.port}: relation "no_such_table" does not exist (42P01)`);
  await expectNoSessions();
});

test("the password is masked where the server quotes it back", async () => {
  const quoted = pg.password.replaceAll("'", "''");
  const r = await check({ db_query: `SELECT '${quoted}'::int` });
  expect(r).toMatchObject({ status: "down", error_code: "db_query_failed" });
  expect(r.error_message).toBe(`the query failed on 127.0.0.1:${pg.port}: invalid input syntax for type integer: "***" (22P02)`);
});

test("a database that does not exist is db_error", async () => {
  const r = await check({ target: `postgres://vigil@127.0.0.1:${pg.port}/no_such_db` });
  expect(r).toMatchObject({ status: "down", error_code: "db_error" });
  expect(r.error_message).toContain('database "no_such_db" does not exist (3D000)');
});

test("a closed port is connection_refused; an unresolvable host dns_error; a bad target db_error", async () => {
  const port = await closedPort();
  expect(await check({ target: `postgres://vigil@127.0.0.1:${port}/x` })).toMatchObject({ status: "down", error_code: "connection_refused", error_message: `connection refused by 127.0.0.1:${port}` });
  expect(await check({ target: "postgres://vigil@no-such-host.invalid:5432/x" })).toMatchObject({ status: "down", error_code: "dns_error" });
  const bad = await check({ target: "mysql://vigil@127.0.0.1:5432/x" });
  expect(bad).toMatchObject({ status: "down", error_code: "db_error", error_message: "target is not a URL like postgres://user@host:5432/database" });
});

test("a server that never answers the connection is connection_timeout at timeout_ms", async () => {
  const r = await check({ target: `postgres://vigil@127.0.0.1:${hole.port}/x`, timeout_ms: 300 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", error_message: `timed out after 300 ms connecting to 127.0.0.1:${hole.port}` });
});

test("a slow query is cut at timeout_ms, and the server's session ends too", async () => {
  const r = await check({ db_query: "SELECT pg_sleep(60)", timeout_ms: 500 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", error_message: `timed out after 500 ms waiting for the query's answer from 127.0.0.1:${pg.port}` });
  // without the cancel and the session's statement_timeout the server would sleep on for a minute
  await expectNoSessions();
});

test("a success slower than api_max_latency_ms is degraded", async () => {
  const r = await check({ db_query: "SELECT pg_sleep(0.2)", api_max_latency_ms: 100 });
  expect(r.status).toBe("degraded");
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 100 ms`);
});

test("db_tls: a user that may only log in over TLS gets in only with it; the certificate's notAfter is recorded", async () => {
  const target = `postgres://vigil_tls@127.0.0.1:${pg.port}/vigil_probe`;
  const without = await check({ target });
  expect(without).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(without.error_message).toContain("no encryption");
  const r = await check({ target, db_tls: true }, withCa());
  expect(r).toMatchObject({ status: "up", error_code: null, ssl_not_after: certNotAfterOf(certs.certPath) });
  await expectNoSessions("vigil_tls");
});

test("db_tls verifies the certificate against the target's name unless tls_verify is off", async () => {
  expect(await check({ db_tls: true, target: `postgres://vigil@localhost:${pg.port}/vigil_probe` }, withCa())).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
  const untrusted = await check({ db_tls: true }, context());
  expect(untrusted).toMatchObject({ status: "down", error_code: "certificate_untrusted" });
  // the check does not get as far as the login
  expect(untrusted.error_message).not.toContain("password");
  expect(await check({ db_tls: true, tls_verify: false }, context())).toMatchObject({ status: "up", ssl_not_after: null });
});

test("db_tls against a server without TLS is tls_error", async () => {
  const r = await check({ db_tls: true }, withCa(), plain);
  expect(r).toMatchObject({ status: "down", error_code: "tls_error" });
  expect(r.error_message).toContain(`127.0.0.1:${plain.port}`);
});

test("private targets are refused when the account's rule or the probe's flag says so", async () => {
  const byCtx = await check({}, context({ blockPrivateTargets: true }));
  expect(byCtx).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
  expect(await check({ block_private_targets: true, target: `postgres://vigil@localhost:${pg.port}/vigil_probe` })).toMatchObject({ status: "down", error_code: "target_blocked" });
});

test("a cancelled check ends without waiting for the query", async () => {
  const controller = new AbortController();
  const running = check({ db_query: "SELECT pg_sleep(60)", timeout_ms: 30_000 }, context({ signal: controller.signal }));
  await waitUntil(async () => (await sessions("vigil")) > 0, 10_000, () => new Error("the query never started"));
  controller.abort();
  expect(await running).toMatchObject({ status: "down", error_code: "internal_error" });
  await expectNoSessions();
});

test("the password shows in no field of any result above", () => {
  expect(results.length).toBeGreaterThan(15);
  expect(secretLeaks(results, pg.password)).toEqual([]);
});
