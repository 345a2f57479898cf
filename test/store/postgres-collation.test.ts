/**
 * The suite's PostgreSQL cluster is initdb'd with --locale=C, but a real database often has its
 * platform's collation (en_US and the like). On a database whose own collation is ICU's en-US, the
 * lists the store orders by text come out in code point order, as on SQLite, and the search gives
 * the same rows as on a C database.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { sql } from "kysely";
import type { PostgresStore } from "../../src/store/database.ts";
import { listMonitors } from "../../src/store/monitors.ts";
import { peerAccountNames } from "../../src/store/peers.ts";
import { listRegionStates } from "../../src/store/region-states.ts";
import { openPostgresStore } from "../../src/store/postgres.ts";
import { TEST_ENGINE, testCluster } from "../helpers/engine.ts";

const pg = TEST_ENGINE === "postgres" ? await testCluster() : null;
/** a database's own ICU collation needs PostgreSQL 15 */
const noIcu = pg !== null && pg.version < 15;
// said as a skipped test, so an older server's run does not look like a pass
if (noIcu) test.skip(`PostgreSQL ${pg!.version} has no ICU database collation (it came in 15): the collation tests are skipped`, () => {});

describe.skipIf(pg === null || noIcu)("PostgreSQL with a database collation other than C", () => {
  let store: PostgresStore;

  beforeAll(async () => {
    const name = `t_icu_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const admin = new SQL({ url: pg!.url(), max: 1 });
    try {
      await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`);
    } finally {
      await admin.close();
    }
    store = await openPostgresStore(pg!.url(name), { poolSize: 2 });
  });
  afterAll(async () => {
    await store?.close();
  });

  test("the database's collation does sort otherwise than code points", async () => {
    const rows = await sql<{ v: string }>`SELECT v FROM (VALUES ('b'), ('A'), ('a')) AS t(v) ORDER BY v`.execute(store.db);
    expect(rows.rows.map((r) => r.v)).toEqual(["a", "A", "b"]);
  });

  test("account names and regions come back in code point order", async () => {
    const db = store.db;
    const ids: number[] = [];
    for (const name of ["b", "a", "A", "B-2", "B1"]) ids.push((await db.insertInto("accounts").values({ name, plan: "pro", created_at: 0 }).returning("id").executeTakeFirstOrThrow()).id);
    const peer = await db.insertInto("peers").values({ region: "eu", token_hash: "h", created_at: 0 }).returning("id").executeTakeFirstOrThrow();
    await db.insertInto("peer_accounts").values(ids.map((account_id) => ({ peer_id: peer.id, account_id }))).execute();
    expect((await peerAccountNames(db)).get(peer.id)).toEqual(["A", "B-2", "B1", "a", "b"]);

    const m = await db.insertInto("monitors").values({ account_id: ids[0]!, name: "m", monitor_type: "http", target: null, interval_sec: 60, timeout_ms: 1000, created_at: 0, updated_at: 0 }).returning("id").executeTakeFirstOrThrow();
    for (const region of ["eu", "EU", "eu-2", "eu2", "Eu"]) await db.insertInto("monitor_region_states").values({ monitor_id: m.id, region, last_status: "up", last_checked_at: 0, consecutive_down: 0, last_check_id: null }).execute();
    expect((await listRegionStates(db, m.id)).map((r) => r.region)).toEqual(["EU", "Eu", "eu", "eu-2", "eu2"]);
  });

  test("search folds A-Z only, as on a C database", async () => {
    const db = store.db;
    const account = (await db.insertInto("accounts").values({ name: "search", plan: "pro", created_at: 0 }).returning("id").executeTakeFirstOrThrow()).id;
    for (const name of ["École", "école", "ECOLE", "Straße"]) {
      await db.insertInto("monitors").values({ account_id: account, name, monitor_type: "http", target: null, interval_sec: 60, timeout_ms: 1000, created_at: 0, updated_at: 0 }).execute();
    }
    const search = async (q: string) => (await listMonitors(db, account, { q }, { limit: 100, offset: 0 }, "id", Date.now())).rows.map((r) => r.name);
    expect(await search("école")).toEqual(["école"]);
    expect(await search("ÉCOLE")).toEqual(["École"]);
    expect(await search("ecole")).toEqual(["ECOLE"]);
    expect(await search("COLE")).toEqual(["École", "école", "ECOLE"]);
    expect(await search("STRASSE")).toEqual([]);
    expect(await search("straß")).toEqual(["Straße"]);
  });
});
