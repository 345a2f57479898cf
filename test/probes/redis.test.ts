/**
 * redis probe against a real Redis started here (test/helpers/redis-server.ts): a password for the
 * default user, an ACL user, and a TLS port beside the plain one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CheckResult } from "../../src/domain/check-result.ts";
import { redisProbe } from "../../src/probes/redis.ts";
import { certNotAfterOf, makeCerts, type TestCerts } from "../helpers/certs.ts";
import { waitUntil } from "../helpers/daemon.ts";
import { startRedis, type RedisServer } from "../helpers/redis-server.ts";
import { secretLeaks } from "../helpers/secret-leaks.ts";
import { closedPort, startBlackholeTcp, type BlackholeTarget } from "../helpers/targets.ts";
import { context, monitor } from "./fixtures.ts";

let certs: TestCerts;
let redis: RedisServer;
let hole: BlackholeTarget;
let notRedis: Bun.TCPSocketListener<undefined>;
const results: CheckResult[] = [];

beforeAll(async () => {
  certs = makeCerts(mkdtempSync(join(tmpdir(), "vigil-certs-")));
  [redis, hole] = await Promise.all([startRedis({ tls: { certPath: certs.certPath, keyPath: certs.keyPath, caPath: certs.caPath } }), startBlackholeTcp()]);
  notRedis = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data(s) { s.write("HTTP/1.1 400 Bad Request\r\n\r\n"); s.end(); } } });
}, 120_000);
afterAll(async () => {
  await redis?.stop();
  hole?.close();
  notRedis?.stop(true);
  rmSync(certs.dir, { recursive: true, force: true });
});

type Overrides = Parameters<typeof monitor>[0];
async function check(o: Overrides = {}, ctx = context()): Promise<CheckResult> {
  const r = await redisProbe(monitor({ target: redis.url, db_password: redis.password, timeout_ms: 10_000, ...o }), ctx);
  results.push(r);
  return r;
}
const withCa = () => context({ extraCa: certs.caPem });
const tlsUrl = (host = "127.0.0.1") => `rediss://${host}:${redis.tlsPort}`;

/** Clients connected over TCP (redis-cli, which the test uses, comes through the unix socket). */
async function tcpClients(): Promise<number> {
  return (await redis.cli("CLIENT", "LIST")).split("\n").filter((l) => l.includes("addr=127.0.0.1:")).length;
}
async function expectNoClients() {
  await waitUntil(async () => (await tcpClients()) === 0, 10_000, () => new Error("the probe's connection is still open on the server"));
}

test("PING with the default user's password is up, and the connection is closed afterwards", async () => {
  const r = await check();
  expect(r).toMatchObject({ status: "up", error_code: null, error_message: null, resolved_ip: "127.0.0.1", ssl_not_after: null });
  expect(r.latency_ms).toBeGreaterThanOrEqual(1);
  await expectNoClients();
});

test("an ACL user (redis_username) and the URL's database; a host name is connected to at its address", async () => {
  expect(await check({ target: `redis://localhost:${redis.port}/3`, redis_username: redis.aclUser, db_password: redis.aclPassword })).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
});

test("a wrong password, a wrong ACL login and a missing password are db_auth_failed", async () => {
  expect(await check({ db_password: "not-the-password" })).toMatchObject({
    status: "down",
    error_code: "db_auth_failed",
    error_message: `Redis at 127.0.0.1:${redis.port} refused the login: WRONGPASS invalid username-password pair or user is disabled.`,
  });
  const acl = await check({ redis_username: redis.aclUser, db_password: redis.password });
  expect(acl).toMatchObject({ status: "down", error_code: "db_auth_failed" });
  expect(acl.error_message).toStartWith(`Redis at 127.0.0.1:${redis.port} refused the login of "vigil": WRONGPASS`);
  expect(await check({ db_password: null })).toMatchObject({
    status: "down",
    error_code: "db_auth_failed",
    error_message: `Redis at 127.0.0.1:${redis.port} asks for a password (db_password): NOAUTH Authentication required.`,
  });
});

test("a database the server does not have, and one that is not a number, are db_error", async () => {
  expect(await check({ target: `${redis.url}/99` })).toMatchObject({ status: "down", error_code: "db_error", error_message: `Redis at 127.0.0.1:${redis.port} refused database 99: ERR DB index is out of range` });
  expect(await check({ target: `${redis.url}/cache` })).toMatchObject({ status: "down", error_code: "db_error" });
});

test("a closed port is connection_refused; an unresolvable host dns_error; a bad target or a server that is not Redis db_error", async () => {
  const port = await closedPort();
  expect(await check({ target: `redis://127.0.0.1:${port}` })).toMatchObject({ status: "down", error_code: "connection_refused" });
  expect(await check({ target: "redis://no-such-host.invalid:6379" })).toMatchObject({ status: "down", error_code: "dns_error" });
  expect(await check({ target: `http://127.0.0.1:${redis.port}` })).toMatchObject({ status: "down", error_code: "db_error", error_message: "target is not a URL like redis://host:6379/0" });
  const other = await check({ target: `redis://127.0.0.1:${notRedis.port}` });
  expect(other).toMatchObject({ status: "down", error_code: "db_error" });
  expect(other.error_message).toContain("does not answer like a Redis server");
});

test("a server that never answers the connection is connection_timeout at timeout_ms", async () => {
  expect(await check({ target: `redis://127.0.0.1:${hole.port}`, timeout_ms: 300 })).toMatchObject({
    status: "down",
    error_code: "connection_timeout",
    error_message: `timed out after 300 ms connecting to 127.0.0.1:${hole.port}`,
  });
});

test("a server that holds its answer is cut at timeout_ms, and the connection is gone afterwards", async () => {
  // the server keeps every client's commands waiting for 2 s
  await redis.cli("CLIENT", "PAUSE", "2000", "ALL");
  const r = await check({ timeout_ms: 300 });
  expect(r).toMatchObject({ status: "down", error_code: "connection_timeout", error_message: `timed out after 300 ms waiting for the answer from 127.0.0.1:${redis.port}` });
  await expectNoClients();
});

test("a PONG slower than api_max_latency_ms is degraded", async () => {
  await redis.cli("CLIENT", "PAUSE", "1000", "ALL");
  const r = await check({ api_max_latency_ms: 100 });
  expect(r.status).toBe("degraded");
  expect(r.degraded_reason).toBe(`latency ${r.latency_ms} ms above 100 ms`);
});

test("rediss:// speaks TLS, verified against the target's name; the certificate's notAfter is recorded", async () => {
  const notAfter = certNotAfterOf(certs.certPath);
  expect(await check({ target: tlsUrl() }, withCa())).toMatchObject({ status: "up", ssl_not_after: notAfter });
  expect(await check({ target: tlsUrl("localhost") }, withCa())).toMatchObject({ status: "up", resolved_ip: "127.0.0.1" });
  // with tls_verify off the certificate is still recorded
  expect(await check({ target: tlsUrl(), tls_verify: false })).toMatchObject({ status: "up", ssl_not_after: notAfter });
  const untrusted = await check({ target: tlsUrl() });
  expect(untrusted).toMatchObject({ status: "down", ssl_not_after: notAfter });
  expect(["certificate_untrusted", "certificate_self_signed"]).toContain(untrusted.error_code!);
  // plain RESP to the TLS port: the server drops the connection
  expect(await check({ target: `redis://127.0.0.1:${redis.tlsPort}` })).toMatchObject({ status: "down", error_code: "db_error" });
});

test("private targets are refused when the account's rule or the probe's flag says so", async () => {
  expect(await check({}, context({ blockPrivateTargets: true }))).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
  expect(await check({ block_private_targets: true, target: `redis://localhost:${redis.port}` })).toMatchObject({ status: "down", error_code: "target_blocked" });
});

test("a cancelled check ends without waiting for the answer", async () => {
  await redis.cli("CLIENT", "PAUSE", "2000", "ALL");
  const controller = new AbortController();
  const running = check({}, context({ signal: controller.signal }));
  setTimeout(() => controller.abort(), 50);
  const r = await running;
  expect(r).toMatchObject({ status: "down", error_code: "internal_error" });
  expect(r.error_message).toStartWith("check cancelled");
  await expectNoClients();
});

test("the passwords show in no field of any result above", () => {
  expect(results.length).toBeGreaterThan(15);
  expect(secretLeaks(results, redis.password)).toEqual([]);
  expect(secretLeaks(results, redis.aclPassword)).toEqual([]);
});
