import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { openTestStore } from "../helpers/engine.ts";
import { HOURLY_WATERMARK } from "../../src/store/rollups.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

const dataDir = tempDir("vigil-restart-");
let target: HttpTarget;
let server: TestServer | null = null;
afterAll(async () => {
  await server?.stop();
  await target?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test("monitors created through the API are checked at once; a restart on the same data directory resumes scheduling", async () => {
  target = await startHttpTarget({ "/ok": () => new Response("fine") });
  server = await startTestServer([], { dataDir });
  const create = async (name: string) => {
    const res = await server!.api("POST", "/api/v1/monitors", { name, monitor_type: "http", target: `${target.url}/ok`, interval_sec: 60, timeout_ms: 2000 });
    expect(res.status).toBe(201);
    return res.json.data.id as string;
  };
  const a = await create("a");
  const b = await create("b");
  const get = async (id: string) => (await server!.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes;
  const checkCount = async (id: string) => (await server!.api("GET", `/api/v1/monitors/${id}/checks`)).json.pagination.total as number;

  for (const id of [a, b]) {
    expect(await waitFor(async () => (await get(id)).last_status === "up")).toBe(true);
    expect(await waitFor(async () => (await get(id)).next_run_at !== null)).toBe(true);
  }
  const attrsA = await get(a);
  expect(attrsA.last_checked_at).toMatch(ISO_MS);
  expect(attrsA.next_run_at).toMatch(ISO_MS);
  expect(Date.parse(attrsA.next_run_at)).toBeGreaterThan(Date.parse(attrsA.last_checked_at) + 25_000);
  expect(await checkCount(a)).toBe(1);
  // the maintenance job ran on start
  expect(await waitFor(async () => (await server!.ctx.db.selectFrom("kv").select("value").where("key", "=", HOURLY_WATERMARK).executeTakeFirst()) !== undefined)).toBe(true);

  await server.stop();
  server = null;

  // while the server was down, a's next run came due; b's is still ahead
  const store = await openTestStore(dataDir);
  await store.db.updateTable("monitors").set({ next_run_at: Date.now() - 5000 }).where("id", "=", Number(a)).execute();
  const bNext = (await store.db.selectFrom("monitors").select("next_run_at").where("id", "=", Number(b)).executeTakeFirstOrThrow()).next_run_at;
  await store.close();

  server = await startTestServer([], { dataDir });
  expect(await waitFor(async () => (await checkCount(a)) === 2)).toBe(true);
  expect(await checkCount(b)).toBe(1);
  expect(Date.parse((await get(b)).next_run_at)).toBe(bNext!);
  expect(server.logs.some((l) => l.component === "scheduler" && l.msg === "scheduler started" && l.monitors === 2)).toBe(true);
});
