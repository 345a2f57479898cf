/**
 * The private-target guard judges the address every outgoing connection of a check or a
 * notification actually goes to, in every IPv6 notation that carries an IPv4 address (mapped,
 * compatible, SIIT, NAT64, 6to4), for every monitor type, synthetic steps, redirect hops, webhooks
 * and SMTP. The account's rule decides (README, Security); here the rule is switched on after the
 * monitors and channels were written, so the check-time guard is what is tested, not the 422 on write.
 * Redirect hops and later synthetic steps need a first hop the guard allows: a host on TEST-NET-2 in
 * a network namespace of the test's own (needs root; skipped loudly otherwise).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { updateAccount } from "../../src/store/accounts.ts";
import { checkOnce, createMonitor } from "../api/fixtures.ts";
import { canCreateNetns, startPublicHost, type PublicHost } from "../helpers/netns.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startDnsTarget, startHttpTarget, startTcpTarget, type DnsTarget, type HttpTarget, type TcpTarget } from "../helpers/targets.ts";

const SECRET_PAGE = "internal admin page: the loopback service's secrets";

let s: TestServer;
let loop: HttpTarget;
let tcp: TcpTarget;
let dns: DnsTarget;
let pub: PublicHost | null = null;

if (!canCreateNetns) console.error("\n!!! redirect-hop and synthetic-step guard tests SKIPPED: `ip netns add` is not permitted here (run as root) !!!\n");

beforeAll(async () => {
  loop = await startHttpTarget({ "/secret": () => new Response(SECRET_PAGE), "/hook": () => new Response(SECRET_PAGE, { status: 500 }) });
  tcp = await startTcpTarget();
  dns = await startDnsTarget({ "example.test": { answers: [{ type: "A", name: "example.test", ttl: 60, data: "192.0.2.1" }] } });
  if (canCreateNetns) pub = await startPublicHost();
  s = await startTestServer();
});
afterAll(async () => {
  await s?.stop();
  await Promise.all([loop?.close(), tcp?.close(), dns?.close(), pub?.close()]);
});

/** The default account's rule: switched through the store, as `vigil account update` does, and read at once. */
async function blockPrivate(on: boolean) {
  await updateAccount(s.ctx.db, 1, { blockPrivateTargets: on });
  await s.ctx.privateTargets.reload();
}

const create = async (attrs: Record<string, unknown>) => String(await createMonitor(s, { interval_sec: 60, timeout_ms: 3000, is_paused: true, ...attrs }));
const firstCheck = (id: string) => checkOnce(s, id);

describe("checks", () => {
  const mapped = () => [
    ["http, ::ffff:127.0.0.1 (rewritten by the URL parser)", { monitor_type: "http", target: `http://[::ffff:127.0.0.1]:${loop.port}/secret`, api_expected_body_contains: "admin" }],
    ["http, ::ffff:7f00:1", { monitor_type: "http", target: `http://[::ffff:7f00:1]:${loop.port}/secret` }],
    ["http, 0:0:0:0:0:ffff:127.0.0.1", { monitor_type: "http", target: `http://[0:0:0:0:0:ffff:127.0.0.1]:${loop.port}/secret` }],
    ["http, IPv4-compatible ::7f00:1", { monitor_type: "http", target: `http://[::7f00:1]:${loop.port}/secret` }],
    ["http, SIIT ::ffff:0:7f00:1", { monitor_type: "http", target: `http://[::ffff:0:7f00:1]:${loop.port}/secret` }],
    ["http, NAT64 64:ff9b::7f00:1", { monitor_type: "http", target: `http://[64:ff9b::7f00:1]:${loop.port}/secret` }],
    ["http, 6to4 2002:7f00:1::1", { monitor_type: "http", target: `http://[2002:7f00:1::1]:${loop.port}/secret` }],
    ["http, 6to4 of 10.0.0.1", { monitor_type: "http", target: `http://[2002:a00:1::1]:${loop.port}/secret` }],
    ["tcp", { monitor_type: "tcp", target: `[::ffff:127.0.0.1]:${tcp.port}` }],
    ["ssl", { monitor_type: "ssl", target: `[::ffff:7f00:1]:${tcp.port}` }],
    ["ping", { monitor_type: "ping", target: "::ffff:127.0.0.1" }],
    ["dns resolver", { monitor_type: "dns", target: "example.test", dns_resolver: `[::ffff:127.0.0.1]:${dns.port}` }],
  ] as const;

  test("every notation of a loopback address is refused at check time, for every type, and the target sees nothing", async () => {
    const cases = mapped();
    const ids: string[] = [];
    await blockPrivate(false);
    for (const [name, attrs] of cases) ids.push(await create({ name, ...attrs }));
    await blockPrivate(true);
    const [requests, connections, queries] = [loop.requests.length, tcp.connections(), dns.queries.length];
    for (let i = 0; i < cases.length; i++) {
      const check = await firstCheck(ids[i]!);
      expect({ name: cases[i]![0], code: check.error_code }).toEqual({ name: cases[i]![0], code: "target_blocked" });
      expect(check.error_message).toContain("private targets are blocked");
      expect(check.error_message).not.toContain("admin page");
    }
    expect(loop.requests.length).toBe(requests);
    expect(tcp.connections()).toBe(connections);
    expect(dns.queries.length).toBe(queries);
  });

  test("the same notations are refused on create with a 422 naming the address's kind", async () => {
    await blockPrivate(true);
    for (const [name, attrs] of mapped()) {
      const r = await s.api("POST", "/api/v1/monitors", { name, interval_sec: 60, timeout_ms: 3000, is_paused: true, ...attrs });
      expect({ name, status: r.status }).toEqual({ name, status: 422 });
      const attr = attrs.monitor_type === "dns" ? "dns_resolver" : "target";
      expect(r.json.error.details[attr].join(" ")).toContain("private");
    }
  });

  test("a dns monitor without a resolver of its own, made before the rule was on, is refused at check time; other edits are not", async () => {
    await blockPrivate(false);
    const id = await create({ name: "host resolver", monitor_type: "dns", target: "example.test" });
    await blockPrivate(true);
    expect((await s.api("PATCH", `/api/v1/monitors/${id}`, { name: "host resolver, renamed" })).status).toBe(200);
    const check = await firstCheck(id);
    expect(check).toMatchObject({ status: "down", error_code: "target_blocked", dns_answer: null });
    expect(check.error_message).toBe("dns_resolver is not set, and this machine's own resolver may answer for private names: set dns_resolver to a public resolver such as 1.1.1.1; private targets are blocked for this account");
  });

  test("with the account's rule off the same monitor reaches the loopback service (the guard is what stops it)", async () => {
    await blockPrivate(false);
    const id = await create({ name: "allowed", monitor_type: "http", target: `http://[::ffff:7f00:1]:${loop.port}/secret` });
    const check = await firstCheck(id);
    expect(check.status).toBe("up");
  });

  test.skipIf(!canCreateNetns)("a redirect hop from a public host to a loopback address is refused", async () => {
    await blockPrivate(false);
    const to = `http://[::ffff:127.0.0.1]:${loop.port}/secret`;
    const id = await create({ name: "redirect", monitor_type: "http", target: `${pub!.url}/redirect?to=${encodeURIComponent(to)}` });
    const ok = await create({ name: "public", monitor_type: "http", target: `${pub!.url}/ok` });
    await blockPrivate(true);
    const seen = loop.requests.length;
    const check = await firstCheck(id);
    expect(check.error_code).toBe("target_blocked");
    expect(check.error_message).toContain("127.0.0.1");
    expect(loop.requests.length).toBe(seen);
    // the public host itself is reached: the guard refuses addresses, not whole monitors
    expect((await firstCheck(ok)).status).toBe("up");
  });

  test.skipIf(!canCreateNetns)("a later synthetic step at a loopback address is refused, after a public first step ran", async () => {
    await blockPrivate(false);
    const id = await create({
      name: "scenario",
      monitor_type: "http",
      target: `${pub!.url}/ok`,
      synthetic_enabled: true,
      synthetic_trace_body_detail: "full",
      synthetic_steps_json: { steps: [{ url: "/ok" }, { url: `http://[::ffff:7f00:1]:${loop.port}/secret` }] },
    });
    await blockPrivate(true);
    const seen = loop.requests.length;
    const check = await firstCheck(id);
    expect(check.error_code).toBe("target_blocked");
    const steps = check.synthetic_trace_json.steps;
    expect(steps[0].status).toBe(200);
    expect(steps[1].status).toBeNull();
    expect(JSON.stringify(check)).not.toContain("admin page");
    expect(loop.requests.length).toBe(seen);
  });
});

describe("notification channels", () => {
  async function channel(attrs: Record<string, unknown>): Promise<string> {
    const r = await s.api("POST", "/api/v1/notification-channels", attrs);
    expect(r.status).toBe(201);
    return r.json.data.id;
  }
  const test_send = async (id: string) => (await s.api("POST", `/api/v1/notification-channels/${id}/test`)).json.data.attributes;

  test("webhook, chat and SMTP receivers on loopback are refused when sending, and on create", async () => {
    await blockPrivate(false);
    const ids = [
      await channel({ name: "hook", channel_type: "webhook", url: `http://127.0.0.1:${loop.port}/hook` }),
      await channel({ name: "mapped hook", channel_type: "webhook", url: `http://[::ffff:7f00:1]:${loop.port}/hook` }),
      await channel({ name: "slack", channel_type: "slack", url: `http://[::ffff:127.0.0.1]:${loop.port}/hook` }),
      await channel({ name: "tg", channel_type: "telegram", url: `http://127.0.0.1:${loop.port}`, telegram_chat_id: 1, telegram_bot_token: "123:abcdefgh" }),
      await channel({ name: "mail", channel_type: "email", email_to: "ops@example.com", smtp_host: "::ffff:127.0.0.1", smtp_port: tcp.port, smtp_security: "none", smtp_from: "vigil@example.com" }),
      await channel({ name: "matrix", channel_type: "matrix", url: `http://[::ffff:7f00:1]:${loop.port}`, matrix_room_id: "!r:example.org", matrix_access_token: "tok-1234" }),
      await channel({ name: "mattermost", channel_type: "mattermost", url: `http://127.0.0.1:${loop.port}/hook` }),
      await channel({ name: "rocketchat", channel_type: "rocketchat", url: `http://127.0.0.1:${loop.port}/hook` }),
      await channel({ name: "google chat", channel_type: "google_chat", url: `http://127.0.0.1:${loop.port}/hook` }),
      await channel({ name: "pagerduty", channel_type: "pagerduty", url: `http://127.0.0.1:${loop.port}/hook`, pagerduty_routing_key: "rk-1234" }),
      await channel({ name: "opsgenie", channel_type: "opsgenie", url: `http://127.0.0.1:${loop.port}`, opsgenie_api_key: "key-1234" }),
      await channel({ name: "home assistant", channel_type: "homeassistant", url: `http://127.0.0.1:${loop.port}`, homeassistant_token: "tok-1234", homeassistant_service: "notify.notify" }),
      await channel({ name: "signal", channel_type: "signal", url: `http://127.0.0.1:${loop.port}`, signal_number: "+4915100000001", signal_recipients: ["+4915100000002"] }),
      await channel({ name: "apprise server", channel_type: "apprise", url: `http://127.0.0.1:${loop.port}`, apprise_urls: `json://127.0.0.1:${loop.port}/hook` }),
      // the command would connect where its URLs say, out of the guard's sight: it is not run at all
      await channel({ name: "apprise command", channel_type: "apprise", apprise_urls: `json://127.0.0.1:${loop.port}/hook` }),
    ];
    await blockPrivate(true);
    const [requests, connections] = [loop.requests.length, tcp.connections()];
    for (const id of ids) {
      const r = await test_send(id);
      expect(r.ok).toBe(false);
      expect(r.error).toContain("private targets are blocked");
      expect(r.error).not.toContain("admin page");
    }
    expect(loop.requests.length).toBe(requests);
    expect(tcp.connections()).toBe(connections);

    const refused = await s.api("POST", "/api/v1/notification-channels", { name: "x", channel_type: "webhook", url: `http://[::ffff:7f00:1]:${loop.port}/hook` });
    expect(refused.status).toBe(422);
    expect(refused.json.error.details.url.join(" ")).toContain("private");
    const smtp = await s.api("POST", "/api/v1/notification-channels", { name: "m", channel_type: "email", email_to: "a@example.com", smtp_host: "127.0.0.1", smtp_from: "v@example.com" });
    expect(smtp.status).toBe(422);
    expect(smtp.json.error.details.smtp_host.join(" ")).toContain("127.0.0.1");
    const command = await s.api("POST", "/api/v1/notification-channels", { name: "a", channel_type: "apprise", apprise_urls: "tgram://bottoken/42" });
    expect(command.status).toBe(422);
    expect(command.json.error.details.url.join(" ")).toContain("the connections of the apprise command cannot be checked");
  });

  test("a failed send to an allowed private receiver says what failed without quoting its reply", async () => {
    await blockPrivate(false);
    const id = await channel({ name: "lan hook", channel_type: "webhook", url: `http://127.0.0.1:${loop.port}/hook` });
    const r = await test_send(id);
    expect(r).toMatchObject({ ok: false, status_code: 500 });
    expect(r.error).toStartWith("HTTP 500");
    expect(r.error).not.toContain("admin page");
  });

  test.skipIf(!canCreateNetns)("a public receiver's refusal is quoted, so a person learns why", async () => {
    await blockPrivate(true);
    const id = await channel({ name: "public hook", channel_type: "webhook", url: `${pub!.url}/refuse` });
    const r = await test_send(id);
    expect(r).toMatchObject({ ok: false, status_code: 400 });
    expect(r.error).toContain("invalid_token: the webhook was revoked");
  });
});
