/**
 * vigil_incidents_open is read at every scrape: the count goes through the partial index of open
 * incidents (migration 020), so its cost follows the open ones, not the whole history.
 */
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { openStore } from "../../src/store/database.ts";
import { countOpenIncidents, openIncidentCountQuery } from "../../src/store/incident-queries.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { tempDir } from "../helpers/server.ts";

const dir = tempDir("vigil-incidents-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// SQLite's query plan of an SQLite file; the partial index's PostgreSQL twin is held to the same
// columns by postgres-schema.test.ts.
test.skipIf(TEST_ENGINE === "postgres")("open incidents are counted through the partial index incidents_open", async () => {
  const store = openStore(dir);
  store.sqlite.exec("INSERT INTO accounts (name, plan, created_at) VALUES ('a', 'pro', 0)");
  store.sqlite.exec("INSERT INTO monitors (account_id, name, monitor_type, target, interval_sec, timeout_ms, created_at, updated_at) VALUES (1, 'm', 'http', 'http://127.0.0.1:9/', 60, 1000, 0, 0), (1, 'n', 'http', 'http://127.0.0.1:9/', 60, 1000, 0, 0)");
  const add = store.sqlite.prepare("INSERT INTO incidents (account_id, monitor_id, status, started_at, created_at, updated_at) VALUES (1, ?, ?, 0, 0, 0)");
  for (let i = 0; i < 50; i++) add.run(1 + (i % 2), "resolved");
  add.run(1, "open");
  add.run(2, "open");
  expect(await countOpenIncidents(store.db)).toBe(2);
  store.sqlite.exec("UPDATE incidents SET status = 'resolved' WHERE monitor_id = 1");
  expect(await countOpenIncidents(store.db)).toBe(1);

  const q = openIncidentCountQuery(store.db).compile();
  const plan = (store.sqlite.query(`EXPLAIN QUERY PLAN ${q.sql}`).all(...(q.parameters as never[])) as { detail: string }[]).map((r) => r.detail);
  expect(plan.join(" ")).toMatch(/USING (COVERING )?INDEX incidents_open/);
  await store.close();
});
