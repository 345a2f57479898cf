/**
 * WebSocket probe: the HTTP upgrade of a ws:// or wss:// URL with the monitor's headers; after the
 * 101 it sends `ws_send` when set and, when `ws_expect` is set, waits for the first text message
 * and looks for that text in it (README "WebSocket monitors"). latency_ms is the time to the
 * upgrade, or to the expected message when one is awaited.
 *
 * The client is `ws` as Bun provides it (the `ws` API over the runtime's own framing): its
 * `createConnection` hook lets us open the socket ourselves, to the address resolveHost judged, with
 * SNI and the Host header carrying the name, as http-exchange does for http. Over wss:// the TLS
 * handshake comes first and judgePeerCertificate accepts the certificate before the upgrade request
 * (and the monitor's headers) goes out.
 */
import net from "node:net";
import type { TLSSocket } from "node:tls";
import WebSocket from "ws";
import { ProbeFailure } from "../domain/check-failure.ts";
import { emptyResult, failed, type CheckResult, type CheckTimings } from "../domain/check-result.ts";
import type { WatchedCertificate } from "../domain/cert-expiry.ts";
import type { ProbeMonitor } from "../domain/monitor.ts";
import { elapsedMs, sinceMs, startDeadline, type Deadline } from "../net/deadline.ts";
import { DEFAULT_USER_AGENT } from "../net/http-exchange.ts";
import { toProbeFailure } from "../net/net-errors.ts";
import { judgePeerCertificate } from "../net/peer-certificate.ts";
import { guardSocket, resolveHost, type ResolvedHost } from "../net/resolve-host.ts";
import { connectTls } from "../net/tls-connect.ts";
import { degradedReasons } from "./http-request.ts";
import { maskText, secretsOf } from "./request-auth.ts";
import type { Probe } from "./types.ts";

/** A first message larger than this ends the check: ws_expect looks at text, not at bulk data. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Characters of an unexpected message quoted in the error. */
const QUOTE_CHARS = 200;
/** How long a server gets to answer our close frame before the socket is dropped. */
const CLOSE_GRACE_MS = 1000;
/** Headers the client writes itself; a monitor's copy would break the handshake. */
const HANDSHAKE_HEADERS = new Set(["host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions"]);

function wsUrl(target: string | null): URL {
  let url: URL;
  try {
    url = new URL(target ?? "");
  } catch {
    throw new ProbeFailure("connection_error", `target ${JSON.stringify(target)} is not an absolute URL`);
  }
  if (url.protocol !== "ws:" && url.protocol !== "wss:") throw new ProbeFailure("connection_error", `target must be a ws:// or wss:// URL, got ${url.protocol}`);
  return url;
}

/**
 * The monitor's headers for the upgrade request. A Sec-WebSocket-Protocol header becomes the
 * client's list of subprotocols, so the server's choice among them is accepted rather than refused
 * as one nobody asked for.
 */
export function upgradeHeaders(m: ProbeMonitor): { headers: Record<string, string>; protocols: string[] } {
  const headers: Record<string, string> = {};
  let protocols: string[] = [];
  for (const [name, value] of Object.entries(m.api_headers_json ?? {})) {
    const lower = name.toLowerCase();
    if (lower === "sec-websocket-protocol") protocols = value.split(",").map((p) => p.trim()).filter((p) => p !== "");
    else if (!HANDSHAKE_HEADERS.has(lower)) headers[name] = value;
  }
  if (!Object.keys(headers).some((h) => h.toLowerCase() === "user-agent")) headers["User-Agent"] = DEFAULT_USER_AGENT;
  return { headers, protocols };
}

function quote(text: string): string {
  return text.length > QUOTE_CHARS ? `${JSON.stringify(text.slice(0, QUOTE_CHARS))}… (${text.length} characters)` : JSON.stringify(text);
}

function messageText(data: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

interface Conversation {
  url: URL;
  target: ResolvedHost;
  headers: Record<string, string>;
  protocols: string[];
  send: string | null;
  expect: string | null;
  /** for wss://, the TLS connection whose certificate was accepted; null: a plain connection is opened */
  secure: TLSSocket | null;
  blockPrivate: boolean;
  deadline: Deadline;
  timeoutMs: number;
  /** performance.now() at the start of the check: latency and timings count from it */
  started: number;
  timings: CheckTimings;
}

interface Outcome {
  latencyMs: number;
}

/** Ends the conversation politely (a close frame) when it is open, and never lets the socket linger. */
function hangUp(ws: WebSocket | null, socket: net.Socket | null): void {
  if (ws?.readyState === WebSocket.OPEN) ws.close(1000);
  else ws?.terminate();
  if (socket && !socket.destroyed) {
    socket.end();
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  }
}

function converse(c: Conversation): Promise<Outcome> {
  const endpoint = c.url.host;
  const port = c.url.port ? Number(c.url.port) : 80;
  return new Promise<Outcome>((resolve, reject) => {
    let ws: WebSocket | null = null;
    let socket: net.Socket | null = c.secure;
    let answeredAfter: number | null = null;
    let upgradedAfter: number | null = null;
    let binaryMessages = 0;
    let settled = false;
    const finish = (outcome: ProbeFailure | Outcome) => {
      if (settled) return;
      settled = true;
      c.deadline.signal.removeEventListener("abort", onAbort);
      hangUp(ws, socket);
      if (!(outcome instanceof ProbeFailure)) return resolve(outcome);
      // a failure after an answer keeps how long the server took
      reject(answeredAfter === null ? outcome : new ProbeFailure(outcome.code, outcome.message, { ...outcome.extra, latency_ms: upgradedAfter ?? answeredAfter }));
    };
    const succeed = (latencyMs: number) => finish({ latencyMs });
    const nothingUsable = () => (binaryMessages > 0 ? ` (${binaryMessages} binary message${binaryMessages === 1 ? "" : "s"} arrived)` : "");
    const onAbort = () => {
      if (upgradedAfter !== null && c.deadline.timedOut()) {
        finish(new ProbeFailure("websocket_expect_missing", `no text message from ${endpoint} within the ${c.timeoutMs} ms timeout (upgraded after ${upgradedAfter} ms)${nothingUsable()}`, { http_code: 101 }));
      } else {
        finish(c.deadline.failure(answeredAfter !== null ? `waiting for ${endpoint} to finish the upgrade` : `waiting for the upgrade from ${endpoint}`));
      }
    };
    // the socket the client talks over: the TLS one already open, or a plain one to the judged address
    const connect = () => {
      if (c.secure) return c.secure;
      const s = net.connect({ host: c.target.ip, port });
      guardSocket(s, c.target.host, c.blockPrivate);
      s.once("connect", () => (c.timings.connect_ms = sinceMs(c.started)));
      socket = s;
      return s;
    };
    try {
      ws = new WebSocket(c.url.href, c.protocols, { headers: c.headers, createConnection: connect, followRedirects: false, maxPayload: MAX_MESSAGE_BYTES });
    } catch (err) {
      return finish(new ProbeFailure("websocket_handshake_failed", `could not send the upgrade request to ${endpoint}: ${(err as Error).message}`));
    }
    c.deadline.signal.addEventListener("abort", onAbort, { once: true });
    if (c.deadline.signal.aborted) return onAbort();
    ws.on("upgrade", () => {
      answeredAfter = elapsedMs(c.started);
      c.timings.ttfb_ms = sinceMs(c.started);
    });
    ws.on("unexpected-response", (_req, res) => {
      answeredAfter = elapsedMs(c.started);
      c.timings.ttfb_ms = sinceMs(c.started);
      const status = res.statusCode ?? 0;
      finish(new ProbeFailure("websocket_handshake_failed", `${endpoint} answered the upgrade with ${status}${res.statusMessage ? ` ${res.statusMessage}` : ""} instead of 101 Switching Protocols`, { http_code: status }));
    });
    ws.on("open", () => {
      upgradedAfter = elapsedMs(c.started);
      const latency = upgradedAfter;
      if (c.send !== null) {
        ws!.send(c.send, (err) => {
          if (err) finish(new ProbeFailure("connection_error", `${endpoint} closed the connection before ws_send was sent (${err.message})`, { http_code: 101 }));
          else if (c.expect === null) succeed(latency);
        });
      } else if (c.expect === null) {
        succeed(latency);
      }
    });
    ws.on("message", (data, isBinary) => {
      if (c.expect === null) return;
      if (isBinary) {
        binaryMessages++;
        return;
      }
      const text = messageText(data);
      if (text.includes(c.expect)) succeed(elapsedMs(c.started));
      else finish(new ProbeFailure("websocket_expect_missing", `the first text message from ${endpoint} does not contain ${JSON.stringify(c.expect)}; it was ${quote(text)}`, { http_code: 101 }));
    });
    ws.on("close", (code, reason) => {
      if (upgradedAfter === null) return; // a failed upgrade is reported by its error
      const closed = `${endpoint} closed the connection (code ${code}${reason.length > 0 ? `: ${quote(reason.toString("utf8"))}` : ""})`;
      // with nothing expected, only a ws_send still on its way can be cut off by a close
      if (c.expect === null) finish(new ProbeFailure("connection_error", `${closed} before ws_send was sent`, { http_code: 101 }));
      else finish(new ProbeFailure("websocket_expect_missing", `${closed} before sending a text message${nothingUsable()}`, { http_code: 101 }));
    });
    ws.on("error", (err) => {
      if (settled) return;
      const code = err.code ?? "";
      if (err instanceof ProbeFailure) return finish(err);
      if (upgradedAfter !== null) {
        return finish(c.expect === null
          ? new ProbeFailure("connection_error", `the connection to ${endpoint} failed after the upgrade (${err.message})`, { http_code: 101 })
          : code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH"
            ? new ProbeFailure("websocket_expect_missing", `the first message from ${endpoint} is larger than ${MAX_MESSAGE_BYTES / 1048576} MiB, more than ws_expect reads`, { http_code: 101 })
            : new ProbeFailure("websocket_expect_missing", `no usable text message from ${endpoint} (${err.message})`, { http_code: 101 }));
      }
      // a 101 whose headers do not complete the handshake (a wrong Sec-WebSocket-Accept, say)
      if (answeredAfter !== null) return finish(new ProbeFailure("websocket_handshake_failed", `${endpoint} answered 101 but the handshake is not valid (${err.message})`, { http_code: 101 }));
      finish(toProbeFailure(err, endpoint));
    });
  });
}

export const websocketProbe: Probe = async (m, ctx) => {
  const checkedAt = ctx.now();
  const secrets = secretsOf(m);
  const deadline = startDeadline(m.timeout_ms, ctx.signal);
  const started = performance.now();
  const blockPrivate = ctx.blockPrivateTargets === true || m.block_private_targets === true;
  let endpoint = m.target ?? "";
  const observed: Partial<CheckResult> = {};
  try {
    const url = wsUrl(m.target);
    endpoint = url.host;
    const target = await resolveHost(url.hostname, deadline, blockPrivate);
    observed.resolved_ip = target.ip;
    const timings: CheckTimings = { dns_ms: target.ip === target.host ? null : sinceMs(started), connect_ms: null, tls_ms: null, ttfb_ms: null };
    observed.timings = timings;
    let watched: WatchedCertificate | null = null;
    let secure: TLSSocket | null = null;
    if (url.protocol === "wss:") {
      secure = await connectTls({
        target, port: url.port ? Number(url.port) : 443, endpoint, extraCa: ctx.extraCa, blockPrivate, signal: deadline.signal,
        onAbort: () => deadline.failure(`during the TLS handshake with ${endpoint}`),
        onConnect: () => (timings.connect_ms = sinceMs(started)),
      });
      timings.tls_ms = sinceMs(started);
      const seen = judgePeerCertificate(secure, target.host, endpoint);
      watched = seen.watched;
      observed.ssl_not_after = watched?.notAfter ?? null;
      if (m.tls_verify !== false && seen.refusal) {
        secure.destroy();
        throw seen.refusal;
      }
    }
    const { headers, protocols } = upgradeHeaders(m);
    const outcome = await converse({
      url, target, headers, protocols,
      send: m.ws_send, expect: m.ws_expect === "" ? null : m.ws_expect,
      secure, blockPrivate,
      deadline, timeoutMs: m.timeout_ms, started, timings,
    });
    Object.assign(observed, { latency_ms: outcome.latencyMs, http_code: 101 });
    const reasons = degradedReasons(m, outcome.latencyMs, watched, ctx.now());
    return { ...emptyResult(checkedAt), ...observed, status: reasons.length ? "degraded" : "up", degraded_reason: reasons.length ? reasons.join("; ") : null };
  } catch (err) {
    const f = toProbeFailure(err, endpoint);
    return failed(checkedAt, f.code, maskText(f.message, secrets), { ...observed, ...f.extra });
  } finally {
    deadline.dispose();
  }
};
