/**
 * The data directory on a 16 MiB filesystem that the test fills up: API writes answer 507
 * insufficient_storage (never a 500, never a hang), reads keep working, /readyz says the store is
 * not writable, the condition is logged once, not per request; when the filler is deleted the next
 * writes succeed without a restart and the database passes integrity_check. A plain ping on an up
 * monitor goes to the ping journal's own files, whose last block may still have room: it is either
 * accepted (and then on the timeline once space returns) or refused with 507, never lost.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { httpAttrs } from "../api/fixtures.ts";
import { TEST_ENGINE } from "../helpers/engine.ts";
import { startTestServer, waitFor, type TestServer } from "../helpers/server.ts";
import { mountSmallDisk, type SmallDisk } from "./small-disk.ts";

// The data directory's disk holds the database on SQLite only: on PostgreSQL it is the database
// server's disk, which this test cannot fill.
const sqlite = TEST_ENGINE === "sqlite";
const disk = sqlite ? mountSmallDisk() : null;
if (sqlite && !disk) console.error("\n!!! disk-full tests SKIPPED: neither a tmpfs nor a loop device could be mounted (run as root) !!!\n");

describe.skipIf(!disk)("disk full", () => {
  let s: TestServer;
  let small: SmallDisk;
  let hb: { id: number; token: string };
  let web: number;
  /** pings accepted while the disk was full */
  let accepted = 0;
  /** monitors created after the disk filled, in WAL space SQLite already had */
  const stored: string[] = [];
  /** the http monitor's name as last stored */
  let webName = "before";

  beforeAll(async () => {
    small = disk!;
    s = await startTestServer([], { dataDir: join(small.dir, "data") });
    const h = await s.api("POST", "/api/v1/monitors", { name: "job", monitor_type: "heartbeat", interval_sec: 60, timeout_ms: 1000 });
    expect(h.status).toBe(201);
    hb = { id: Number(h.json.data.id), token: h.json.data.attributes.heartbeat_token };
    web = Number((await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "before" }))).json.data.id);
    expect((await fetch(`${s.url}/h/${hb.token}`)).status).toBe(200);
  });

  afterAll(async () => {
    await s?.stop();
    small?.unmount();
  });

  test("full: writes get 507 insufficient_storage, reads still work, /readyz is 503, logged once", async () => {
    expect(small.fill()).toBeGreaterThan(0);
    const logsBefore = s.logs.length;
    // A write may still fit in WAL pages SQLite already has on disk (the log is reused from its start
    // once a checkpoint caught up, and a small write may fit where a larger one did not): it is
    // stored and answered 2xx. Every other write is refused with 507, never a 500. Writes go on until
    // twelve creations in a row were refused (bounded), and what was stored is checked once space returns.
    const bound = 500;
    let refusedInARow = 0;
    let refused = 0;
    accepted = 0;
    for (let i = 0; i < bound && refusedInARow < 12; i++) {
      const created = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: `during-${i}` }));
      if (created.status === 201) {
        stored.push(`during-${i}`);
        refusedInARow = 0;
      } else {
        expect(created.status).toBe(507);
        expect(created.json.error.code).toBe("insufficient_storage");
        expect(created.json.error.message).toContain("disk");
        expect(created.json.error.message).toContain("full");
        expect(typeof created.json.meta.request_id).toBe("string");
        refusedInARow++;
      }

      const patched = await s.api("PATCH", `/api/v1/monitors/${web}`, { name: `renamed-${i}` });
      if (patched.status === 200) webName = `renamed-${i}`;
      else {
        expect(patched.status).toBe(507);
        expect(patched.json.error.code).toBe("insufficient_storage");
      }

      const pinged = await fetch(`${s.url}/h/${hb.token}`, { method: "POST", body: "x" });
      const answer = (await pinged.json()) as { result?: string; error?: { code: string } };
      if (pinged.status === 200) {
        expect(answer.result).toBe("accepted");
        accepted++;
      } else {
        expect(pinged.status).toBe(507);
        expect(answer.error!.code).toBe("insufficient_storage");
        refused++;
      }
    }
    expect(refusedInARow).toBe(12);
    const read = await s.api("GET", `/api/v1/monitors/${web}`);
    expect(read.status).toBe(200);
    expect(read.json.data.attributes.name).toBe(webName);

    const ready = await fetch(`${s.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain("store not writable");
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);

    const lines = s.logs.slice(logsBefore);
    expect(lines.filter((l) => l.msg === "unexpected failure")).toEqual([]);
    const reports = lines.filter((l) => l.storage_failure === "full");
    expect(reports.length).toBeGreaterThan(0);
    expect(reports.every((l) => l.level === "error")).toBe(true);
    // dozens of refused writes, at most one line per part that saw them (the API's and the ping endpoint's
    // error answers, the write queue, the ping writer), not one per request
    const components = reports.map((l) => String(l.component));
    expect(components).toContain("api");
    if (refused > 0) expect(components).toContain("heartbeat");
    expect(reports.length).toBeLessThanOrEqual(5);
  });

  test("space returns: the next writes succeed without a restart, nothing refused was half-written", async () => {
    small.free();
    const created = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "after" }));
    expect(created.status).toBe(201);
    const patched = await s.api("PATCH", `/api/v1/monitors/${web}`, { name: "renamed-after" });
    expect(patched.status).toBe(200);
    expect(patched.json.data.attributes.name).toBe("renamed-after");
    const pinged = await fetch(`${s.url}/h/${hb.token}`);
    expect(pinged.status).toBe(200);
    // ready again once no write has been refused for a while (README, Operations)
    expect(await waitFor(async () => (await fetch(`${s.url}/readyz`)).status === 200, { timeoutMs: 30_000 })).toBe(true);

    const names = (await s.ctx.db.selectFrom("monitors").select("name").orderBy("id").execute()).map((r) => r.name);
    expect(names).toEqual(["job", "renamed-after", ...stored, "after"]);
    await s.ctx.pings.settled([hb.id]); // a ping on an up monitor waits in the ping journal
    const pings = await s.ctx.db.selectFrom("monitor_events").select("kind").where("monitor_id", "=", hb.id).where("kind", "=", "ping").execute();
    expect(pings.length).toBe(2 + accepted); // the one before, those accepted while full, the one after; none refused

    // a second connection, as `vigil backup` or an operator would open one
    const check = new Database(join(s.dataDir, "vigil.db"), { readonly: true });
    try {
      expect(check.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
    } finally {
      check.close();
    }
  });
});
