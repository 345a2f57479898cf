/**
 * The dashboard's monitor list sorted by uptime over more monitors than one statement can name: the
 * sort reads every matching monitor's uptime, and the engines bound the values one statement may
 * carry (PostgreSQL's protocol 65,535; Bun's SQLite 250,000). README "Dashboard".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { makeAccount, startTestServer, startupMaintenanceDone, type TestServer } from "../helpers/server.ts";
import { addUser, listedMonitorNames, signedInClient } from "./helpers.ts";

/** Past the engine's bound on one statement's values. */
const MONITORS = TEST_ENGINE === "postgres" ? 66_000 : 250_001;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  expect(await startupMaintenanceDone(s)).toBe(true);
}, 120_000);
afterAll(() => s.stop());

test(`sort=uptime lists an account of ${MONITORS.toLocaleString("en")} monitors, the least available first`, async () => {
  const { accountId } = await makeAccount(s.ctx, "many");
  await addUser(s, "many-admin", "many");
  const now = Date.now();
  // paused, so the running scheduler leaves them alone; written in batches the engines accept
  for (let from = 0; from < MONITORS; from += 2_000) {
    const rows = Array.from({ length: Math.min(2_000, MONITORS - from) }, (_, i) => ({
      account_id: accountId, name: `m${String(from + i).padStart(6, "0")}`, monitor_type: "tcp", target: "db.internal.test:5432",
      interval_sec: 60, timeout_ms: 5000, is_paused: 1, created_at: now, updated_at: now,
    }));
    await s.ctx.db.insertInto("monitors").values(rows as never).execute();
  }
  // one monitor with checks, half of them down: the only one whose uptime is known, so it sorts first
  const low = Number((await s.ctx.db.selectFrom("monitors").select("id").where("name", "=", "m000777").where("account_id", "=", accountId).executeTakeFirstOrThrow()).id);
  await s.ctx.db.insertInto("checks").values([
    { monitor_id: low, region: "local", checked_at: now - 120_000, status: "up", latency_ms: 10, error_code: null, error_message: null },
    { monitor_id: low, region: "local", checked_at: now - 60_000, status: "down", latency_ms: null, error_code: "connection_refused", error_message: "refused" },
  ] as never).execute();

  const c = await signedInClient(s, "many-admin");
  const page = await c.get("/?sort=uptime");
  expect(page.res.status).toBe(200);
  const shown = listedMonitorNames(page.text);
  expect(shown[0]).toBe("m000777");
  // the rest: no uptime yet, in id order
  expect(shown.slice(1, 4)).toEqual(["m000000", "m000001", "m000002"]);
}, 180_000);
