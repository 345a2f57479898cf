/**
 * Apprise both ways: Debian's `apprise` command, run for real, sending to json:// receivers on
 * loopback (its JSON plugin POSTs {version, title, message, attachments, type}); and a fake Apprise
 * API server taking the stateless `POST /notify`.
 */
import { describe, expect, test } from "bun:test";
import { appriseArguments, appriseOutcome, appriseSenderWith, redactUrls } from "../../../src/notify/channels/apprise.ts";
import { deliverOnce } from "../../../src/notify/deliver.ts";
import { CHANNEL_SENDERS } from "../../../src/notify/channels/index.ts";
import { sampleAlert } from "../../../src/notify/sample-alert.ts";
import type { SendContext } from "../../../src/notify/types.ts";
import { waitFor } from "../../helpers/server.ts";
import { closedPort } from "../../helpers/targets.ts";
import { channel, DOWN, DOWN_TEXT, receivers, UP } from "./fixtures.ts";

const receiver = receivers();
const APPRISE = Bun.which("apprise");
if (!APPRISE) console.error("\n!!! apprise command tests SKIPPED: `apprise` is not installed (apt install apprise) !!!\n");

const apprise = (urls: string[], url: string | null = null) => channel("apprise", { url, apprise_urls: urls.join("\n") }, [urls.join("\n")]);
const send = (p: typeof DOWN, c: ReturnType<typeof apprise>, sc: Partial<SendContext> = {}) => deliverOnce(p, c, new AbortController().signal, { deliveryId: "d-1", timeoutMs: 20_000, ...sc });

describe.skipIf(!APPRISE)("the apprise command", () => {
  test("sends to every URL, title and body apart, the notification type following the state", async () => {
    const a = receiver();
    const b = receiver();
    const out = await send(DOWN, apprise([`json://${a.url.slice(7)}/alerts`, `  json://hook-user:hook-pass@${b.url.slice(7)}/b  `, ""]));
    expect(out).toEqual({ ok: true, statusCode: null, error: null, permanent: false });
    for (const [r, path] of [[a, "/alerts"], [b, "/b"]] as const) {
      expect(r.requests.length).toBe(1);
      const req = r.requests[0]!;
      expect([req.method, req.path, req.headers.get("content-type"), req.headers.get("user-agent")]).toEqual(["POST", path, "application/json", "Apprise"]);
      expect(JSON.parse(req.body)).toEqual({ version: "1.0", title: "🔴 DOWN: Checkout API", message: DOWN_TEXT, attachments: [], type: "failure" });
    }
    // the credentials of a URL reach its receiver, as Apprise's JSON plugin sends them
    expect(b.requests[0]!.headers.get("authorization")).toBe(`Basic ${btoa("hook-user:hook-pass")}`);
    await send(UP, apprise([`json://${a.url.slice(7)}/alerts`]));
    expect(JSON.parse(a.requests[1]!.body).type).toBe("success");
  });

  test("a 5xx or a refused connection is temporary, a 404 permanent; errors name neither the URL nor its parts", async () => {
    const r = receiver((req) => new Response("internal detail of the receiver", { status: req.path === "/gone" ? 404 : 500 }));
    const token = "S3cr3tT0kenInThePath";
    const failing = await send(DOWN, apprise([`json://${r.url.slice(7)}/${token}`]));
    expect(failing).toMatchObject({ ok: false, statusCode: null, permanent: false });
    expect(failing.error).toStartWith("apprise exited with status 1: ");
    expect(failing.error).toContain("error=500");
    const gone = await send(DOWN, apprise([`json://${r.url.slice(7)}/gone`]));
    expect(gone).toMatchObject({ ok: false, permanent: true });
    expect(gone.error).toContain("error=404");
    const port = await closedPort();
    const refused = await send(DOWN, apprise([`json://admin:${token}@127.0.0.1:${port}/x`]));
    expect(refused).toMatchObject({ ok: false, permanent: false });
    expect(refused.error).toContain("Connection error");
    for (const e of [failing.error, gone.error, refused.error]) {
      expect(e).not.toContain(token);
      expect(e).not.toContain("127.0.0.1");
      expect(e).not.toContain("json://");
      expect(e).not.toContain("internal detail");
    }
  });

  test("a URL the command cannot read is a permanent failure that does not quote it", async () => {
    const out = await send(DOWN, apprise(["nosuchservice://Token-abcdef-123456/room"]));
    expect(out).toMatchObject({ ok: false, permanent: true });
    // Apprise 1.2 says "Unsupported URL", other versions "Unparseable URL"
    expect(out.error).toMatch(/^apprise exited with status 1: (Unsupported|Unparseable) URL: \[an Apprise URL\]; You must specify at least one server URL/);
    expect(out.error).not.toContain("Token-abcdef-123456");
  });

  test("a run longer than the send's time is killed and retried later", async () => {
    // the receiver holds the request until its client goes away; Apprise itself would wait 60 s (rto)
    let gone = false;
    const hung = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (req) => new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => {
        gone = true;
        resolve(new Response("late"));
      })),
    });
    try {
      const out = await send(DOWN, apprise([`json://127.0.0.1:${hung.port}/slow?rto=60`]), { timeoutMs: 1500 });
      expect(out).toEqual({ ok: false, statusCode: null, error: "apprise did not finish within 1500 ms", permanent: false });
      // the killed command's connection closes with it
      expect(await waitFor(() => gone)).toBe(true);
    } finally {
      await hung.stop(true);
    }
  });

  test("the test send goes through the command too", async () => {
    const r = receiver();
    const out = await send(sampleAlert("https://vigil.example.com", Date.now()), apprise([`json://${r.url.slice(7)}/t`]));
    expect(out.ok).toBe(true);
    expect(JSON.parse(r.requests[0]!.body)).toMatchObject({ title: "🧪 TEST: Vigil test notification", type: "info" });
  });
});

test("the command's arguments carry the title and body, never the URLs (other local users can read arguments)", () => {
  const args = appriseArguments("/usr/bin/apprise", DOWN);
  expect(args).toEqual(["/usr/bin/apprise", "-vv", "-n", "failure", "-t", "🔴 DOWN: Checkout API", "-b", DOWN_TEXT]);
});

test("an account that blocks private targets cannot use the command: its connections escape the guard", async () => {
  let looked = false;
  const sender = appriseSenderWith(() => {
    looked = true;
    return APPRISE;
  });
  const out = await deliverOnce(DOWN, apprise(["json://127.0.0.1:9/x"]), new AbortController().signal, { deliveryId: "d", timeoutMs: 5000, blockPrivateTargets: true }, { ...CHANNEL_SENDERS, apprise: sender });
  expect(out).toMatchObject({ ok: false, permanent: true });
  expect(out.error).toContain("private targets are blocked");
  expect(looked).toBe(false);
});

test("without the command installed and without a url, a permanent failure that says what to do", async () => {
  const out = await deliverOnce(DOWN, apprise(["json://127.0.0.1:9/x"]), new AbortController().signal, { deliveryId: "d", timeoutMs: 5000 }, { ...CHANNEL_SENDERS, apprise: appriseSenderWith(() => null) });
  expect(out).toEqual({ ok: false, statusCode: null, permanent: true, error: "the apprise command is not installed on the Vigil host (apt install apprise, or pip install apprise); or set url to an Apprise API server" });
});

test("outcomes: refusals only are permanent; anything else that failed is retried", () => {
  const line = (m: string) => `2026-11-24 11:31:12,307 - WARNING - ${m}`;
  expect(appriseOutcome(0, "", [])).toMatchObject({ ok: true });
  expect(appriseOutcome(1, line("Failed to send Telegram notification: Unauthorized - error=401."), []).permanent).toBe(true);
  expect(appriseOutcome(1, [line("Failed to send JSON notification: error=404."), line("Failed to send JSON notification: error=503.")].join("\n"), []).permanent).toBe(false);
  expect(appriseOutcome(1, line("Failed to send JSON notification: error=429."), []).permanent).toBe(false);
  expect(appriseOutcome(3, "", []).permanent).toBe(true);
  expect(redactUrls("sent to tgram://123456:ABCDEFsecret/987654 and 123456:ABCDEFsecret failed", ["tgram://123456:ABCDEFsecret/987654"])).toBe("sent to [an Apprise URL] and [redacted]:[redacted] failed");
});

describe("an Apprise API server", () => {
  /** The stateless endpoint as apprise-api answers it: 200 sent, 424 when a service behind it failed, 400 for a bad request. */
  const server = (status = 200) => receiver((req) => (req.path === "/notify" ? new Response(status === 200 ? "Notification(s) sent." : "tgram://123456:ABCDEFsecret/987654 failed", { status }) : new Response("", { status: 404 })));

  test("POST {url}/notify with {urls, title, body, type}", async () => {
    const r = server();
    const urls = ["tgram://123456:ABCDEFsecret/987654", "mailto://ops:pass@example.com"];
    const out = await send(DOWN, apprise(urls, `${r.url}/`));
    expect(out).toMatchObject({ ok: true, statusCode: 200 });
    const req = r.requests[0]!;
    expect([req.method, req.path, req.headers.get("content-type")]).toEqual(["POST", "/notify", "application/json"]);
    expect(JSON.parse(req.body)).toEqual({ urls: urls.join(", "), title: "🔴 DOWN: Checkout API", body: DOWN_TEXT, type: "failure" });
  });

  test("424 (a service behind the server failed) is temporary, 400 permanent; no URL in the error", async () => {
    const urls = ["tgram://123456:ABCDEFsecret/987654"];
    const failed = await send(DOWN, apprise(urls, server(424).url));
    expect(failed).toMatchObject({ ok: false, statusCode: 424, permanent: false });
    const bad = await send(DOWN, apprise(urls, server(400).url));
    expect(bad).toMatchObject({ ok: false, statusCode: 400, permanent: true });
    for (const e of [failed.error, bad.error]) expect(e).not.toContain("ABCDEFsecret");
  });
});
