/**
 * postgres, mysql and redis monitors end to end: created through the API of a real server, checked
 * by its scheduler against real servers from Debian's packages on loopback (test/helpers/
 * postgres-server.ts, mariadb-server.ts, redis-server.ts), the checks, the monitor's state and its
 * incidents read back through the API; the password never comes back in any answer. One failed
 * check turns a monitor down here (--confirmations 1 in CHECKED_MONITOR_ARGS).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { CHECKED_MONITOR_ARGS, createMonitor, checksOf, incidentsOf, monitorOf, NEXT_RUN_MS, waitForCheck, waitForState } from "../helpers/checked-monitor.ts";
import { startMariadb, type MariadbServer } from "../helpers/mariadb-server.ts";
import { startPostgresServer, type PostgresProbeServer } from "../helpers/postgres-server.ts";
import { startRedis, type RedisServer } from "../helpers/redis-server.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let pg: PostgresProbeServer;
let maria: MariadbServer;
let redis: RedisServer;

beforeAll(async () => {
  [pg, maria, redis] = await Promise.all([startPostgresServer(), startMariadb(), startRedis()]);
  s = await startTestServer(CHECKED_MONITOR_ARGS);
}, 120_000);
afterAll(async () => {
  await s?.stop();
  await Promise.all([pg?.stop(), maria?.stop(), redis?.stop()]);
});

/** Every answer about the monitor and its checks, as text: the password must be in none. */
async function everything(id: string): Promise<string> {
  const parts = await Promise.all([
    s.api("GET", `/api/v1/monitors/${id}`), s.api("GET", "/api/v1/monitors?per_page=100"), s.api("GET", `/api/v1/monitors/${id}/checks?per_page=100`),
    s.api("GET", `/api/v1/monitors/${id}/incidents`), s.api("GET", `/api/v1/monitors/${id}/events`),
  ]);
  return parts.map((r) => r.text).join("\n");
}

describe("database monitors through the server", () => {
  test("postgres: up with the query, a wrong password is db_auth_failed, a failing query db_query_failed; the password never comes back", async () => {
    const id = await createMonitor(s, { name: "App database", monitor_type: "postgres", target: `postgres://${pg.user}@127.0.0.1:${pg.port}/${pg.database}`, db_password: pg.password, db_query: "SELECT count(*) FROM pg_stat_activity" });
    const up = await waitForCheck(s, id);
    expect(up).toMatchObject({ status: "up", error_code: null, resolved_ip: "127.0.0.1" });
    expect(up.latency_ms).toBeNumber();
    await waitForState(s, id, "up");

    const wrong = await createMonitor(s, { name: "Wrong password", monitor_type: "postgres", target: `postgres://${pg.user}@127.0.0.1:${pg.port}/${pg.database}`, db_password: "not-the-password-42" });
    expect((await waitForCheck(s, wrong)).error_code).toBe("db_auth_failed");
    await waitForState(s, wrong, "down");
    expect((await incidentsOf(s, wrong))[0]).toMatchObject({ status: "open", last_error_code: "db_auth_failed" });
    expect(await everything(wrong)).not.toContain("not-the-password-42");

    // the query now fails: a PATCH without the password keeps it (same server)
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { db_query: "SELECT * FROM no_such_table" })).status).toBe(200);
    const failed = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(failed.error_code).toBe("db_query_failed");
    expect(failed.error_message).toContain("no_such_table");
    await waitForState(s, id, "down");
    expect(await everything(id)).not.toContain(pg.password);
  }, 120_000);

  test("mysql (MariaDB): up; the server stops: connection_refused and an incident", async () => {
    const id = await createMonitor(s, { name: "Nextcloud database", monitor_type: "mysql", target: `mysql://${maria.user}@127.0.0.1:${maria.port}/${maria.database}`, db_password: maria.password });
    expect(await waitForCheck(s, id)).toMatchObject({ status: "up", error_code: null });
    await waitForState(s, id, "up");

    const wrong = await createMonitor(s, { name: "Wrong MariaDB password", monitor_type: "mysql", target: `mysql://${maria.user}@127.0.0.1:${maria.port}/${maria.database}`, db_password: "not-the-password-43" });
    expect((await waitForCheck(s, wrong)).error_code).toBe("db_auth_failed");
    expect(await everything(wrong)).not.toContain("not-the-password-43");

    await maria.stop();
    const down = await waitForCheck(s, id, (c) => c.status === "down", NEXT_RUN_MS);
    expect(down.error_code).toBe("connection_refused");
    await waitForState(s, id, "down");
    expect((await incidentsOf(s, id))[0]).toMatchObject({ status: "open", last_error_code: "connection_refused" });
    expect(await everything(id)).not.toContain(maria.password);
  }, 120_000);

  test("redis: up with an ACL user; a wrong password is db_auth_failed and the monitor goes down", async () => {
    const id = await createMonitor(s, { name: "Cache", monitor_type: "redis", target: `redis://127.0.0.1:${redis.port}/0`, redis_username: redis.aclUser, db_password: redis.aclPassword });
    expect(await waitForCheck(s, id)).toMatchObject({ status: "up", error_code: null });
    expect((await monitorOf(s, id)).redis_username).toBe(redis.aclUser);

    const wrong = await createMonitor(s, { name: "Cache, wrong password", monitor_type: "redis", target: `redis://127.0.0.1:${redis.port}`, db_password: "not-the-password-44" });
    expect((await waitForCheck(s, wrong)).error_code).toBe("db_auth_failed");
    await waitForState(s, wrong, "down");
    expect(await everything(wrong)).not.toContain("not-the-password-44");
    expect(await everything(id)).not.toContain(redis.aclPassword);
    expect((await checksOf(s, id)).every((c) => c.status === "up")).toBe(true);
  }, 120_000);
});
