/**
 * Links the dashboard builds to this instance (heartbeat ping URLs, status page addresses): fixed
 * by --base-url / --heartbeat-url when given, else the address the browser used (its Host, or a
 * trusted proxy's X-Forwarded-Host and -Proto), with a notice saying how to fix one.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createMonitor, createStatusPage } from "../api/fixtures.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addUser, signedInClient, type WebClient } from "./helpers.ts";

const servers: TestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function start(args: string[]): Promise<{ s: TestServer; c: WebClient; pingToken: string; monitorId: number; pageId: number }> {
  const s = await startTestServer(args);
  servers.push(s);
  await addUser(s, "admin");
  const c = await signedInClient(s, "admin");
  const monitorId = await createMonitor(s, { monitor_type: "heartbeat", name: "backup", interval_sec: 3600, timeout_ms: 1000 });
  const pingToken = (await s.api("GET", `/api/v1/monitors/${monitorId}`)).json.data.attributes.heartbeat_token as string;
  const pageId = await createStatusPage(s, { name: "Home", slug: "home" });
  return { s, c, pingToken, monitorId, pageId };
}

const NOTICE = "This address follows the one your browser used";

describe("without --base-url", () => {
  test("the ping URL and the status page's address follow the Host the browser used, and the page says how to fix them", async () => {
    const { s, c, pingToken, monitorId, pageId } = await start([]);
    const detail = await c.get(`/monitors/${monitorId}`, { host: "vigil.lan:8080" });
    expect(detail.text).toContain(`value="http://vigil.lan:8080/h/${pingToken}"`);
    expect(detail.text).toContain(NOTICE);
    expect(detail.text).toContain("--heartbeat-url");
    const editor = await c.get(`/status-pages/${pageId}/edit`, { host: "192.168.1.20:8080" });
    expect(editor.text).toContain('href="http://192.168.1.20:8080/s/home"');
    expect(editor.text).toContain(NOTICE);
    expect(editor.text).toContain("--base-url");
    // the address this client used, by default
    expect((await c.get(`/monitors/${monitorId}`)).text).toContain(`value="${s.url}/h/${pingToken}"`);
  });

  test("forwarded headers from a peer that is not a trusted proxy are ignored; a Host that is not a host falls back", async () => {
    const { s, c, pingToken, monitorId } = await start(["--trusted-proxy", "10.0.0.0/8"]);
    const detail = await c.get(`/monitors/${monitorId}`, { host: "vigil.lan", "x-forwarded-host": "evil.example", "x-forwarded-proto": "https" });
    expect(detail.text).toContain(`value="http://vigil.lan/h/${pingToken}"`);
    expect(detail.text).not.toContain("evil.example");
    const odd = await c.get(`/monitors/${monitorId}`, { host: "bad_host.lan" });
    expect(odd.text).toContain(`value="${s.ctx.config.heartbeatUrl}/h/${pingToken}"`);
  });

  test("a trusted proxy's X-Forwarded-Host and X-Forwarded-Proto are followed (CIDR ranges accepted)", async () => {
    const { c, pingToken, monitorId, pageId } = await start(["--trusted-proxy", "127.0.0.0/8,::1"]);
    const fwd = { host: "127.0.0.1:1234", "x-forwarded-host": "status.example.org, inner.proxy", "x-forwarded-proto": "https" };
    expect((await c.get(`/monitors/${monitorId}`, fwd)).text).toContain(`value="https://status.example.org/h/${pingToken}"`);
    expect((await c.get(`/status-pages/${pageId}/edit`, fwd)).text).toContain('href="https://status.example.org/s/home"');
  });
});

describe("with --base-url", () => {
  test("links use it whatever the Host, and no notice is shown", async () => {
    const { c, pingToken, monitorId, pageId } = await start(["--base-url", "https://vigil.example.com/"]);
    const detail = await c.get(`/monitors/${monitorId}`, { host: "vigil.lan:8080" });
    expect(detail.text).toContain(`value="https://vigil.example.com/h/${pingToken}"`);
    expect(detail.text).not.toContain(NOTICE);
    const editor = await c.get(`/status-pages/${pageId}/edit`, { host: "vigil.lan:8080" });
    expect(editor.text).toContain('href="https://vigil.example.com/s/home"');
    expect(editor.text).not.toContain(NOTICE);
  });

  test("--heartbeat-url alone fixes the ping URL only", async () => {
    const { c, pingToken, monitorId, pageId } = await start(["--heartbeat-url", "https://ping.example.com"]);
    const detail = await c.get(`/monitors/${monitorId}`, { host: "vigil.lan:8080" });
    expect(detail.text).toContain(`value="https://ping.example.com/h/${pingToken}"`);
    expect(detail.text).not.toContain(NOTICE);
    expect((await c.get(`/status-pages/${pageId}/edit`, { host: "vigil.lan:8080" })).text).toContain('href="http://vigil.lan:8080/s/home"');
  });
});

test("--trusted-proxy refuses what is neither an address nor a CIDR range", async () => {
  await expect(startTestServer(["--trusted-proxy", "10.0.0.0/33"])).rejects.toThrow(/--trusted-proxy takes IP addresses or CIDR ranges/);
});
