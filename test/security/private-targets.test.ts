/**
 * --block-private-targets (SSRF guard, off by default): refused on create and update (422 on the
 * attribute naming the address) and, what matters, at check time (error target_blocked), so a name
 * re-pointed after it was accepted (DNS rebinding) does not slip through. The rebinding test runs
 * the server in its own mount namespace with a hosts file the test rewrites (needs root; skipped
 * loudly otherwise); the host's /etc/hosts is never touched.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { httpAttrs } from "../api/fixtures.ts";
import { lastLine, MAIN, runVigil, spawnServer } from "../helpers/process.ts";
import { startTestServer, tempDir, waitFor, type TestServer } from "../helpers/server.ts";
import { startHttpTarget, type HttpTarget } from "../helpers/targets.ts";

let target: HttpTarget;
beforeAll(async () => {
  target = await startHttpTarget({ "/ok": () => new Response("fine") });
});
afterAll(() => target?.close());

describe("on create and update", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer(["--block-private-targets"]);
  });
  afterAll(() => s?.stop());

  test.each([
    ["http", { monitor_type: "http", target: "http://127.0.0.1:9/health" }, "target", "127.0.0.1"],
    ["http by name", { monitor_type: "http", target: "http://localhost:9/health" }, "target", "localhost resolves to"],
    ["http v6", { monitor_type: "http", target: "http://[::1]:9/" }, "target", "::1"],
    ["tcp", { monitor_type: "tcp", target: "10.1.2.3:5432" }, "target", "10.1.2.3"],
    ["ssl", { monitor_type: "ssl", target: "192.168.1.10:443" }, "target", "192.168.1.10"],
    ["ping", { monitor_type: "ping", target: "169.254.169.254" }, "target", "169.254.169.254"],
    ["dns resolver", { monitor_type: "dns", target: "example.com", dns_resolver: "172.16.0.53" }, "dns_resolver", "172.16.0.53"],
    ["websocket", { monitor_type: "websocket", target: "ws://127.0.0.1:9/socket" }, "target", "127.0.0.1"],
    ["grpc", { monitor_type: "grpc", target: "[::1]:50051" }, "target", "::1"],
    ["smtp", { monitor_type: "smtp", target: "10.0.0.25" }, "target", "10.0.0.25"],
    ["postgres", { monitor_type: "postgres", target: "postgres://monitor@192.168.1.5:5432/app" }, "target", "192.168.1.5"],
    ["mysql", { monitor_type: "mysql", target: "mysql://monitor@localhost/app" }, "target", "localhost resolves to"],
    ["redis", { monitor_type: "redis", target: "rediss://172.20.0.3:6380" }, "target", "172.20.0.3"],
    ["docker host over tcp", { monitor_type: "docker", target: "nextcloud", docker_host: "tcp://10.9.8.7:2375" }, "docker_host", "10.9.8.7"],
  ] as const)("%s: a private target is a 422 naming the address", async (_what, attrs, attr, text) => {
    const res = await s.api("POST", "/api/v1/monitors", { name: "private", interval_sec: 60, timeout_ms: 2000, is_paused: true, ...attrs });
    expect(res.status).toBe(422);
    expect(res.json.error.code).toBe("validation_error");
    expect(res.json.error.details[attr].join(" ")).toContain(text);
    expect(res.json.error.details[attr].join(" ")).toContain("private");
  });

  test("a docker monitor on the local socket and a domain monitor connect to no host of the tenant's: accepted", async () => {
    for (const attrs of [{ monitor_type: "docker", target: "nextcloud" }, { monitor_type: "docker", target: "nextcloud", docker_host: "unix:///var/run/docker.sock" }, { monitor_type: "domain", target: "example.com", interval_sec: 3600 }]) {
      const res = await s.api("POST", "/api/v1/monitors", { name: "no host", interval_sec: 60, timeout_ms: 2000, is_paused: true, ...attrs });
      expect({ attrs, status: res.status }).toEqual({ attrs, status: 201 });
    }
  });

  test("a dns monitor must name a resolver of its own: this machine's may answer for private names", async () => {
    const dns = { name: "dns", monitor_type: "dns", target: "example.com", interval_sec: 60, timeout_ms: 2000, is_paused: true };
    for (const body of [dns, { ...dns, dns_resolver: null }]) {
      const res = await s.api("POST", "/api/v1/monitors", body);
      expect(res.status).toBe(422);
      expect(res.json.error.details.dns_resolver).toEqual([
        "is required for this account: it may not reach private targets, and this machine's own resolver may answer for private names; give a public resolver such as 1.1.1.1 or 9.9.9.9",
      ]);
    }
    // TEST-NET-1: public as far as the guard is concerned
    const created = await s.api("POST", "/api/v1/monitors", { ...dns, dns_resolver: "192.0.2.53" });
    expect(created.status).toBe(201);
    const cleared = await s.api("PATCH", `/api/v1/monitors/${created.json.data.id}`, { dns_resolver: null });
    expect(cleared.status).toBe(422);
    expect(Object.keys(cleared.json.error.details)).toEqual(["dns_resolver"]);
  });

  test("a public address is accepted; changing it to a private one is refused, other edits are not", async () => {
    // 192.0.2.0/24 is TEST-NET-1: public as far as the guard is concerned; paused, so never checked
    const created = await s.api("POST", "/api/v1/monitors", httpAttrs({ name: "public", target: "http://192.0.2.10/health" }));
    expect(created.status).toBe(201);
    const id = created.json.data.id;
    const moved = await s.api("PATCH", `/api/v1/monitors/${id}`, { target: "http://127.0.0.1:8080/" });
    expect(moved.status).toBe(422);
    expect(moved.json.error.details.target.join(" ")).toContain("127.0.0.1");
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "renamed" })).status).toBe(200);
    expect((await s.api("GET", `/api/v1/monitors/${id}`)).json.data.attributes.target).toBe("http://192.0.2.10/health");
  });
});

test("without the flag (the default, for homelabs) private targets are accepted, and dns monitors may ask this machine's resolver", async () => {
  const s = await startTestServer();
  try {
    expect((await s.api("POST", "/api/v1/monitors", httpAttrs({ target: "http://127.0.0.1:9/health" }))).status).toBe(201);
    expect((await s.api("POST", "/api/v1/monitors", { name: "dns", monitor_type: "dns", target: "example.com", interval_sec: 60, timeout_ms: 2000, is_paused: true })).status).toBe(201);
  } finally {
    await s.stop();
  }
});

test("check time: monitors made before the flag was on are refused when checked, and the target sees nothing", async () => {
  const dataDir = tempDir();
  try {
    const before = await startTestServer([], { dataDir });
    const ids: string[] = [];
    for (const t of [`http://127.0.0.1:${target.port}/ok`, `http://localhost:${target.port}/ok`]) {
      const r = await before.api("POST", "/api/v1/monitors", httpAttrs({ name: t, target: t }));
      expect(r.status).toBe(201);
      ids.push(r.json.data.id);
    }
    await before.stop();

    const s = await startTestServer(["--block-private-targets"], { dataDir });
    try {
      const seen = target.requests.length;
      for (const id of ids) expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { is_paused: false })).status).toBe(200);
      for (const id of ids) {
        const check = await waitFor(async () => (await s.api("GET", `/api/v1/monitors/${id}/checks`)).json.data[0]);
        expect(check.attributes).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
        expect(check.attributes.error_message).toContain("private");
      }
      expect(target.requests.length).toBe(seen);
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

const canUnshare = Bun.spawnSync(["unshare", "-m", "true"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
if (!canUnshare) console.error("\n!!! DNS rebinding test SKIPPED: `unshare -m` is not permitted here (run as root) !!!\n");

test.skipIf(!canUnshare)("DNS rebinding: a name accepted while public and re-pointed to loopback is refused at check time", async () => {
  const dir = tempDir("vigil-rebind-");
  const hosts = join(dir, "hosts");
  writeFileSync(hosts, "127.0.0.1 localhost\n198.51.100.7 rebind.test\n"); // TEST-NET-2: public
  const dataDir = join(dir, "data");
  // the server sees `hosts` as its /etc/hosts, in a mount namespace of its own
  const server = await spawnServer(["--data", dataDir, "--block-private-targets", "--log-level", "warn"], {
    exe: ["unshare", "-m", "sh", "-c", `mount --bind '${hosts}' /etc/hosts && exec "$0" "$@"`, process.execPath, MAIN],
    env: { BUN_CONFIG_DNS_TIME_TO_LIVE_SECONDS: "0" },
  });
  try {
    const token = readFileSync(join(dataDir, "bootstrap-token"), "utf8").trim();
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(server.url + path, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body ? JSON.stringify(body) : undefined });
      return { status: r.status, json: (await r.json()) as any };
    };
    const url = `http://rebind.test:${target.port}/ok`;
    const created = await api("POST", "/api/v1/monitors", httpAttrs({ name: "rebind", target: url }));
    expect(created.status).toBe(201); // resolved to 198.51.100.7 when it was written
    expect((await api("POST", "/api/v1/monitors", httpAttrs({ target: `http://127.0.0.1:${target.port}/ok` }))).status).toBe(422);

    writeFileSync(hosts, "127.0.0.1 localhost\n127.0.0.1 rebind.test\n"); // re-pointed to loopback
    const seen = target.requests.length;
    expect((await api("PATCH", `/api/v1/monitors/${created.json.data.id}`, { is_paused: false })).status).toBe(200);
    const check = await waitFor(async () => (await api("GET", `/api/v1/monitors/${created.json.data.id}/checks`)).json.data[0]);
    expect(check.attributes).toMatchObject({ status: "down", error_code: "target_blocked", resolved_ip: "127.0.0.1" });
    expect(check.attributes.error_message).toContain("rebind.test resolves to 127.0.0.1");
    expect(target.requests.length).toBe(seen);
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);

describe("per account (vigil account create/update), beside a running server", () => {
  test("an account's own rule wins over the instance default; a CLI change applies without a restart", async () => {
    const s = await startTestServer([]);
    try {
      const cli = (args: string[]) => runVigil([...args, "--data", s.dataDir]);
      expect((await cli(["account", "create", "tenant", "--plan", "pro", "--block-private-targets"])).code).toBe(0);
      const tok = lastLine((await cli(["token", "create", "--account", "tenant", "--scopes", "all"])).stdout);
      const create = (token?: string) => s.api("POST", "/api/v1/monitors", httpAttrs({ target: "http://[::ffff:7f00:1]:9/health" }), token ? { token } : {});
      // the instance flag is off: the default account (following it) may watch its LAN, the tenant may not
      expect((await create()).status).toBe(201);
      const refused = await create(tok);
      expect(refused.status).toBe(422);
      expect(refused.json.error.details.target.join(" ")).toContain("127.0.0.1");
      const list = await cli(["account", "list"]);
      expect(list.stdout).toMatch(/default\s+enterprise\s+instance default/);
      expect(list.stdout).toMatch(/tenant\s+pro\s+blocked/);

      const upd = await cli(["account", "update", "tenant", "--allow-private-targets"]);
      expect(upd.code).toBe(0);
      expect(upd.stdout).toContain("private targets allowed");
      expect((await waitFor(async () => (await create(tok)).status === 201, { timeoutMs: 15_000, intervalMs: 250 }))).toBe(true);
      expect((await cli(["account", "update", "nobody", "--plan", "pro"])).code).toBe(1);
    } finally {
      await s.stop();
    }
  }, 30_000);

  test("a new account follows --block-private-targets of the instance unless it says otherwise", async () => {
    const s = await startTestServer(["--block-private-targets"]);
    try {
      const cli = (args: string[]) => runVigil([...args, "--data", s.dataDir]);
      await cli(["account", "create", "lan", "--plan", "pro", "--allow-private-targets"]);
      await cli(["account", "create", "plain", "--plan", "pro"]);
      const lan = lastLine((await cli(["token", "create", "--account", "lan", "--scopes", "all"])).stdout);
      const plain = lastLine((await cli(["token", "create", "--account", "plain", "--scopes", "all"])).stdout);
      const create = (token: string) => s.api("POST", "/api/v1/monitors", httpAttrs({ target: "http://10.0.0.1/health" }), { token });
      expect((await create(lan)).status).toBe(201);
      expect((await create(plain)).status).toBe(422);
    } finally {
      await s.stop();
    }
  });
});
