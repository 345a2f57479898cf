/**
 * mysql probe against real MariaDB servers started here (test/helpers/mariadb-server.ts): one with
 * passwords checked and TLS, one without TLS.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CheckResult } from "../../src/domain/check-result.ts";
import { mysqlProbe } from "../../src/probes/mysql.ts";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { waitUntil } from "../helpers/daemon.ts";
import { startMariadb, type MariadbServer } from "../helpers/mariadb-server.ts";
import { secretLeaks } from "../helpers/secret-leaks.ts";
import { closedPort, startBlackholeTcp, type BlackholeTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let certs: TestCerts;
let db: MariadbServer;
let plain: MariadbServer;
let hole: BlackholeTarget;
const results: CheckResult[] = [];

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-certs-")));
  [db, plain, hole] = await Promise.all([startMariadb({ tls: { certPath: certs.certPath, keyPath: certs.keyPath, caPath: certs.caPath } }), startMariadb(), startBlackholeTcp()]);
}, 180_000);
afterAll(async () => {
  await Promise.all([db?.stop(), plain?.stop()]);
  hole?.close();
  rmSync(certs.dir, { recursive: true, force: true });
});

type Overrides = Parameters<typeof monitor>[0];
async function check(o: Overrides = {}, ctx = context(), server = db): Promise<CheckResult> {
  const r = await mysqlProbe(monitor({ target: server.url, db_password: server.password, timeout_ms: 10_000, ...o }), ctx);
  results.push(r);
  return r;
}
const withCa = () => context({ extraCa: certs.caPem });

/** Sessions of `user` the server still has, as its process list shows them. */
async function sessions(user: string, server = db): Promise<number> {
  return Number((await server.admin(`SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = '${user}'`)).trim());
}
async function expectNoSessions(user = "vigil", server = db) {
  await waitUntil(async () => (await sessions(user, server)) === 0, 10_000, () => new Error(`sessions of ${user} still open on the server`));
}

test("SELECT 1 as the user with its password is up, and the connection is closed afterwards", async () => {
  const r = await check();
  expect(r).toMatchObject({ status: "up", error_code: null, error_message: null, resolved_ip: "127.0.0.1", ssl_not_after: null });
  expect(r.latency_ms).toBeGreaterThanOrEqual(1);
  await expectNoSessions();
});

test("db_query runs, also without a database in the URL; a host name is connected to at its address", async () => {
  expect(await check({ db_query: "SELECT COUNT(*) FROM information_schema.TABLES; SELECT 2" })).toMatchObject({ status: "up" });
  expect(await check({ db_query: "SELECT DATABASE()", target: `mysql://vigil@localhost:${db.port}` })).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
  await expectNoSessions();
});

test("a wrong password and an unknown user are db_auth_failed", async () => {
  const wrong = await check({ db_password: "not-the-password" });
  expect(wrong).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(wrong.error_message).toBe(`MySQL at 127.0.0.1:${db.port} refused the login of "vigil": Access denied for user 'vigil'@'127.0.0.1' (using password: YES) (1045)`);
  expect(await check({ db_password: null })).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  const unknown = await check({ target: `mysql://nobody@127.0.0.1:${db.port}/vigil_probe` });
  expect(unknown).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(unknown.error_message).toContain("'nobody'");
});

test("a database the user may not use is db_auth_failed", async () => {
  const r = await check({ target: `mysql://vigil@127.0.0.1:${db.port}/mysql` });
  expect(r).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(r.error_message).toContain("to database 'mysql' (1044)");
});

test("a query that errors is db_query_failed with the server's words", async () => {
  const r = await check({ db_query: "SELECT * FROM no_such_table" });
  expect(r).toMatchObject({ status: "down", error_code: "db_query_failed" });
  expect(r.error_message).toBe(`the query failed on 127.0.0.1:${db.port}: Table 'vigil_probe.no_such_table' doesn't exist (1146)`);
  await expectNoSessions();
});

test("the password is masked where the server quotes it back", async () => {
  const r = await check({ db_query: `SELECT * FROM \`${db.password}\`` });
  expect(r).toMatchObject({ status: "down", error_code: "db_query_failed" });
  expect(r.error_message).toBe(`the query failed on 127.0.0.1:${db.port}: Table 'vigil_probe.***' doesn't exist (1146)`);
});

test("a closed port is connection_refused; an unresolvable host dns_error; a bad target db_error", async () => {
  const port = await closedPort();
  expect(await check({ target: `mysql://vigil@127.0.0.1:${port}/x` })).toMatchObject({ status: "down", error_code: "connection_refused", error_message: `connection refused by 127.0.0.1:${port}` });
  expect(await check({ target: "mysql://vigil@no-such-host.invalid:3306/x" })).toMatchObject({ status: "down", error_code: "dns_error" });
  expect(await check({ target: `postgres://vigil@127.0.0.1:${db.port}/x` })).toMatchObject({ status: "down", error_code: "db_error", error_message: "target is not a URL like mysql://user@host:3306/database" });
});

test("a server that never answers the connection is connection_timeout at timeout_ms", async () => {
  const r = await check({ target: `mysql://vigil@127.0.0.1:${hole.port}/x`, timeout_ms: 300 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", error_message: `timed out after 300 ms connecting to 127.0.0.1:${hole.port}` });
});

// SLEEP() looks every 5 s whether its client is still there; a busy query such as this one never does
const ENDLESS = "SELECT BENCHMARK(1000000000000, MD5('vigil'))";

test("a slow query is cut at timeout_ms, and the server's session ends too", async () => {
  const r = await check({ db_query: ENDLESS, timeout_ms: 500 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", error_message: `timed out after 500 ms waiting for the query's answer from 127.0.0.1:${db.port}` });
  // MariaDB does not notice the closed connection: without the KILL the query would run on
  await expectNoSessions();
});

test("a success slower than api_max_latency_ms is degraded", async () => {
  const r = await check({ db_query: "SELECT SLEEP(0.2)", api_max_latency_ms: 100 });
  expect(r.status).toBe("degraded");
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 100 ms`);
});

test("db_tls: a user that may only log in over TLS gets in only with it; the certificate's notAfter is recorded", async () => {
  const target = `mysql://vigil_tls@127.0.0.1:${db.port}/vigil_probe`;
  expect(await check({ target })).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  const r = await check({ target, db_tls: true }, withCa());
  expect(r).toMatchObject({ status: "up", error_code: null, ssl_not_after: certNotAfterOf(certs.certPath) });
  await expectNoSessions("vigil_tls");
});

test("db_tls verifies the certificate against the target's name unless tls_verify is off", async () => {
  expect(await check({ db_tls: true, target: `mysql://vigil@localhost:${db.port}/vigil_probe` }, withCa())).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
  const untrusted = await check({ db_tls: true }, context());
  expect(untrusted.status).toBe("down");
  expect(["certificate_untrusted", "certificate_self_signed"]).toContain(untrusted.error_code!);
  expect(await check({ db_tls: true, tls_verify: false }, context())).toMatchObject({ status: "up", ssl_not_after: null });
});

test("db_tls against a server without TLS is tls_error", async () => {
  const r = await check({ db_tls: true }, withCa(), plain);
  expect(r).toMatchObject({ status: "down", error_code: "tls_error" });
  expect(r.error_message).toContain(`127.0.0.1:${plain.port}`);
});

test("private targets are refused when the account's rule or the probe's flag says so", async () => {
  expect(await check({}, context({ blockPrivateTargets: true }))).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
  expect(await check({ block_private_targets: true, target: `mysql://vigil@localhost:${db.port}/vigil_probe` })).toMatchObject({ status: "down", error_code: "target_blocked" });
});

test("a cancelled check ends without waiting for the query, and ends it on the server", async () => {
  const controller = new AbortController();
  const running = check({ db_query: ENDLESS, timeout_ms: 30_000 }, context({ signal: controller.signal }));
  await waitUntil(async () => (await sessions("vigil")) > 0, 10_000, () => new Error("the query never started"));
  controller.abort();
  expect(await running).toMatchObject({ status: "down", error_code: "internal_error" });
  await expectNoSessions();
});

test("the password shows in no field of any result above", () => {
  expect(results.length).toBeGreaterThan(15);
  expect(secretLeaks(results, db.password)).toEqual([]);
});
