import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { freePort, lastLine, runVigil } from "../helpers/process.ts";
import { tempDir, waitFor } from "../helpers/server.ts";
import { remainingInSpool, spooledResults, startVigil, type VigilProcess } from "./cluster.ts";

/**
 * A leader (region "local") and two probes (regions "a" and "b") as real child processes on
 * loopback, each with its own data directory, checking one target server the test controls per
 * region: a probe's http checks name their region in the User-Agent, the leader's do not.
 *
 * One timeline, phases in order (each waits on the real 10 s interval, the shortest allowed):
 * consensus (one region failing opens nothing, two of three open an incident), recovery, a leader
 * outage with a probe restarted meanwhile (nothing lost, nothing doubled), a killed probe leaving
 * the quorum and rejoining it.
 */
const INTERVAL = 10;
const failing = new Map<string, Set<string>>();
let target: ReturnType<typeof Bun.serve>;
const dirs = { leader: tempDir("vigil-leader-"), a: tempDir("vigil-probe-a-"), b: tempDir("vigil-probe-b-") };
let leaderPort: number;
let leader: VigilProcess;
const probes: Record<"a" | "b", VigilProcess[]> = { a: [], b: [] };
const tokens: Record<string, string> = {};
let apiToken: string;
const ids: Record<string, number> = {};

const current = (r: "a" | "b") => probes[r][probes[r].length - 1]!;
const allProcs = () => [leader, ...probes.a, ...probes.b].filter(Boolean);

async function api(method: string, path: string, body?: unknown) {
  const res = await fetch(leader.url + path, {
    method,
    headers: { authorization: `Bearer ${apiToken}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return (await res.json()) as any;
}

async function checks(monitorId: number, region?: string): Promise<{ id: number; region: string; status: string; checked_at: number }[]> {
  const out = [];
  for (let page = 1; page <= 20; page++) {
    const res = await api("GET", `/api/v1/monitors/${monitorId}/checks?per_page=100&page=${page}${region ? `&region=${region}` : ""}`);
    out.push(...res.data.map((c: any) => ({ id: Number(c.id), region: c.attributes.region, status: c.attributes.status, checked_at: Date.parse(c.attributes.checked_at) })));
    if (page >= res.pagination.total_pages) break;
  }
  return out;
}
const incidents = async (monitorId: number) => (await api("GET", `/api/v1/incidents?monitor_id=${monitorId}`)).data.map((i: any) => ({ id: i.id, ...i.attributes }));
const monitorState = async (monitorId: number) => (await api("GET", `/api/v1/monitors/${monitorId}`)).data.attributes.last_status as string;

function startLeader() {
  return startVigil("leader", leaderPort, ["--data", dirs.leader, "--log-level", "info"]);
}
function startProbe(r: "a" | "b") {
  return startVigil(`probe-${r}`, portFor[r], ["--role", "probe", "--leader", leader.url, "--peer-token", tokens[r]!, "--region", r, "--data", dirs[r], "--log-level", "debug"]);
}
const portFor: Record<"a" | "b", number> = { a: 0, b: 0 };

beforeAll(async () => {
  target = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const name = new URL(req.url).pathname.split("/")[2] ?? "";
      const region = /region ([A-Za-z0-9_-]+)/.exec(req.headers.get("user-agent") ?? "")?.[1] ?? "local";
      const fail = failing.get(name)?.has(region) ?? false;
      return new Response(fail ? "down" : "ok", { status: fail ? 503 : 200 });
    },
  });
  for (const r of ["a", "b"] as const) {
    const res = await runVigil(["peer", "create", "--region", r, "--all-accounts", "--data", dirs.leader]);
    expect(res.code).toBe(0);
    tokens[r] = lastLine(res.stdout);
    portFor[r] = await freePort();
  }
  leaderPort = await freePort();
  leader = await startLeader();
  apiToken = (await Bun.file(join(dirs.leader, "bootstrap-token")).text()).trim();
  probes.a.push(await startProbe("a"));
  probes.b.push(await startProbe("b"));

  failing.set("one", new Set(["a"]));
  failing.set("two", new Set(["a", "b"]));
  failing.set("quorum", new Set(["a"]));
  for (const name of ["one", "two", "quorum", "steady"]) {
    const res = await api("POST", "/api/v1/monitors", { name, monitor_type: "http", target: `http://127.0.0.1:${target.port}/m/${name}`, interval_sec: INTERVAL, timeout_ms: 2000 });
    ids[name] = Number(res.data.id);
  }
}, 60_000);

afterAll(async () => {
  await Promise.all(allProcs().map((p) => p.stop("SIGKILL")));
  target?.stop(true);
  for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
});

test("two regions of three failing open an incident; one region failing opens none", async () => {
  const opened = await waitFor(async () => (await incidents(ids.two!)).length > 0, { timeoutMs: 45_000, intervalMs: 250 });
  expect(opened).toBe(true);
  // every region checks every monitor (regions null), and the target told them apart
  for (const r of ["local", "a", "b"]) expect((await checks(ids.one!, r)).length).toBeGreaterThan(0);
  const aDowns = await waitFor(async () => (await checks(ids.one!, "a")).filter((c) => c.status === "down").length >= 2, { timeoutMs: 30_000, intervalMs: 250 });
  expect(aDowns).toBe(true);
  expect((await checks(ids.one!, "b")).every((c) => c.status === "up")).toBe(true);
  expect((await checks(ids.one!, "local")).every((c) => c.status === "up")).toBe(true);
  // region a confirmed down on "one", but it is one region of three
  expect(await monitorState(ids.one!)).not.toBe("down");
  expect(await incidents(ids.one!)).toEqual([]);
  const [inc] = await incidents(ids.two!);
  expect(inc.status).toBe("open");
  expect(inc.last_error_code).toBe("http_error");
  expect(inc.last_http_code).toBe(503);
}, 90_000);

test("recovery resolves the incident with exact root, resolved check, failure count and duration", async () => {
  failing.set("two", new Set());
  const resolved = await waitFor(async () => (await incidents(ids.two!))[0]?.status === "resolved", { timeoutMs: 45_000, intervalMs: 250 });
  expect(resolved).toBe(true);
  const [inc] = await incidents(ids.two!);
  const all = await checks(ids.two!);
  const root = all.find((c) => c.id === inc.root_check_id)!;
  const fix = all.find((c) => c.id === inc.resolved_check_id)!;
  expect(root.status).toBe("down");
  expect(["a", "b"]).toContain(root.region);
  expect(fix.status).toBe("up");
  expect(Date.parse(inc.started_at)).toBe(root.checked_at);
  expect(Date.parse(inc.resolved_at)).toBe(fix.checked_at);
  expect(inc.duration_ms).toBe(Math.round((fix.checked_at - root.checked_at) / 1000) * 1000);
  // every failed check (all regions) that arrived before the resolving one belongs to this incident
  expect(inc.failure_count).toBe(all.filter((c) => c.status === "down" && c.id < fix.id).length);
  expect(inc.failure_count).toBeGreaterThanOrEqual(4);
}, 90_000);

let killedA: { at: number; lastChecked: number };

test("the leader down (SIGKILL) while a probe restarts: results spool, then arrive once each", async () => {
  // probe a is killed for good here (the quorum test below needs it silent); then the leader
  await current("a").stop("SIGKILL");
  const aQuorumChecks = [...spooledResults(probes.a).values()].filter((r) => r.monitorId === ids.quorum);
  killedA = { at: Date.now(), lastChecked: Math.max(...aQuorumChecks.map((r) => r.checkedAt)) };
  await leader.stop("SIGKILL");
  const outageStart = Date.now();

  // the probe notices, keeps checking and spooling; meanwhile it restarts, with the leader still down
  expect(await waitFor(() => current("b").lines().some((l) => l.msg === "leader unreachable"), { timeoutMs: 15_000 })).toBe(true);
  await Bun.sleep(3000);
  expect(await current("b").stop("SIGTERM")).toBe(0);
  probes.b.push(await startProbe("b"));
  expect(current("b").lines().some((l) => l.msg === "starting without the leader: running the cached definitions and spooling results" && l.monitors === 4)).toBe(true);
  await Bun.sleep(Math.max(0, outageStart + 8000 - Date.now()));

  leader = await startLeader();
  const restartedAt = Date.now();
  const spooledDuringOutage = [...spooledResults(probes.b).values()].filter((r) => r.at >= outageStart && r.at < restartedAt);
  expect(spooledDuringOutage.length).toBeGreaterThan(0);
  // every result spooled during the outage reaches the leader (counted exactly at the end)
  const delivered = await waitFor(
    async () => {
      for (const id of Object.values(ids)) {
        const stored = new Set((await checks(id, "b")).map((c) => c.checked_at));
        if (spooledDuringOutage.some((r) => r.monitorId === id && !stored.has(r.checkedAt))) return false;
      }
      return true;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  expect(delivered).toBe(true);
  // the leader stores a batch before the probe reads its answer and logs the contact
  expect(await waitFor(() => current("b").lines().some((l) => l.msg === "leader reachable again"), { timeoutMs: 10_000 })).toBe(true);
  // and the leader lists the probe as connected, with its queue empty
  const listed = await waitFor(
    async () => {
      const peers = (await (await fetch(`${leader.url}/peer/v1/peers`, { headers: { authorization: `Bearer ${apiToken}` } })).json()) as any;
      const b = peers.data.find((p: any) => p.attributes.region === "b");
      return b && b.attributes.connected && Date.parse(b.attributes.last_seen_at) >= restartedAt && b.attributes.queue_length === 0;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  expect(listed).toBe(true);
}, 90_000);

test("a killed probe's region leaves the quorum after 3 intervals and rejoins when it reports again", async () => {
  // region a (confirmed down on "quorum") fell silent with its probe. Once it has been silent for
  // 3 intervals, region b fails too: with a's stale downs counted that would be 2 of 3 down; without
  // them it is 1 of 2, a tie, which keeps the state.
  await Bun.sleep(Math.max(0, killedA.lastChecked + 3 * INTERVAL * 1000 - 9000 - Date.now()));
  const flippedAt = Date.now();
  failing.set("quorum", new Set(["a", "b"]));
  const bConfirmed = await waitFor(async () => (await checks(ids.quorum!, "b")).filter((c) => c.status === "down" && c.checked_at >= flippedAt).length >= 2, { timeoutMs: 40_000, intervalMs: 250 });
  expect(bConfirmed).toBe(true);
  const bDowns = (await checks(ids.quorum!, "b")).filter((c) => c.status === "down");
  // the confirming down came after a had been silent for 3 intervals
  expect(Math.max(...bDowns.map((c) => c.checked_at))).toBeGreaterThan(killedA.lastChecked + 3 * INTERVAL * 1000);
  expect(await monitorState(ids.quorum!)).not.toBe("down");
  expect(await incidents(ids.quorum!)).toEqual([]);

  // probe a comes back (still failing there): its region rejoins, 2 of 3 are down
  probes.a.push(await startProbe("a"));
  const opened = await waitFor(async () => (await incidents(ids.quorum!)).length > 0, { timeoutMs: 30_000, intervalMs: 250 });
  expect(opened).toBe(true);
  const [inc] = await incidents(ids.quorum!);
  const root = (await checks(ids.quorum!)).find((c) => c.id === inc.root_check_id)!;
  expect(root.region).toBe("a");
  expect(root.checked_at).toBeGreaterThan(killedA.at);
}, 90_000);

test("every result each probe spooled is on the leader exactly once", async () => {
  for (const r of ["a", "b"] as const) expect(await current(r).stop("SIGTERM")).toBe(0);
  for (const r of ["a", "b"] as const) {
    const left = await remainingInSpool(dirs[r]);
    expect(left).toEqual([]);
    const spooled = spooledResults(probes[r]);
    for (const [name, id] of Object.entries(ids)) {
      const sent = [...spooled.values()].filter((x) => x.monitorId === id).length;
      const stored = (await api("GET", `/api/v1/monitors/${id}/checks?region=${r}&per_page=1`)).pagination.total;
      expect({ region: r, monitor: name, stored }).toEqual({ region: r, monitor: name, stored: sent });
    }
  }
  // probes logged their health periodically, and the leader lists them
  expect(probes.b.some((p) => p.lines().some((l) => l.msg === "probe health" && typeof l.queue_length === "number"))).toBe(true);
  const list = await runVigil(["peer", "list", "--data", dirs.leader]);
  expect(list.code).toBe(0);
  expect(list.stdout).toMatch(/\ba\b/);
  expect(list.stdout).toMatch(/\bb\b/);
}, 60_000);
