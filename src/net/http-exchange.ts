/**
 * One HTTP(S) exchange with redirects. We open the connection ourselves (http-connection.ts) rather
 * than use fetch() because we need the IP actually connected (`resolved_ip`), the peer certificate
 * (`ssl_not_after`) and the moments of the connection (DNS, connect, TLS, first byte). The host is
 * resolved and judged by resolveHost on every hop and the socket opened to that IP, with SNI and
 * Host carrying the name; the request then goes over HTTP/1.1 or HTTP/2, whichever the server took.
 * The body is read to its end or to the cap (http-body.ts).
 */
import { ProbeFailure } from "../domain/check-failure.ts";
import type { WatchedCertificate } from "../domain/cert-expiry.ts";
import type { CheckTimings } from "../domain/check-result.ts";
import { MAX_REDIRECTS } from "../domain/monitor.ts";
import type { Deadline } from "./deadline.ts";
import type { WireRequest } from "./http-answer.ts";
import { readBody } from "./http-body.ts";
import { openConnection, type HttpProtocol } from "./http-connection.ts";
import { sendOverHttp1 } from "./http1-transport.ts";
import { sendOverHttp2 } from "./http2-transport.ts";
import { resolveHost } from "./resolve-host.ts";

/** What Vigil calls itself in requests whose monitor sets no User-Agent of its own. */
export const DEFAULT_USER_AGENT = "Vigil/0.1 (uptime monitor)";
/** Decoded bytes of body read at most: enough for keyword and JSON checks, bounded memory per check. */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpRequestSpec {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | null;
}

export interface HttpExchangeOptions {
  deadline: Deadline;
  tlsVerify: boolean;
  extraCa?: string;
  blockPrivate?: boolean;
  /** header names (lower case) dropped when a redirect leaves the original origin */
  credentialHeaders: string[];
  /** false: a redirect is returned as the answer instead of followed (default true) */
  followRedirects?: boolean;
  /** decoded bytes of body read at most (default MAX_BODY_BYTES) */
  maxBodyBytes?: number;
  /** the protocols https offers first (default: HTTP/1.1, see http-connection.ts); for the bench */
  offer?: readonly HttpProtocol[];
}

export interface HttpResponseData {
  status: number;
  headers: Record<string, string>;
  /** decoded body, at most the cap */
  body: Buffer;
  /** the cap was reached: `body` holds its first bytes only (not a failure) */
  capped: boolean;
  /** the body's content-encoding was corrupt; `body` holds what decoded before the error */
  decodeError: string | null;
  finalUrl: URL;
  resolvedIp: string;
  /** the certificate of the chain that expires first (judgePeerCertificate); null over plain http */
  sslCert: WatchedCertificate | null;
  /** who issued the leaf (certIssuer) */
  sslIssuer: string | null;
  timings: CheckTimings;
}

/** URL without user info, for messages (user info may carry a password). */
export function displayUrl(url: URL): string {
  const u = new URL(url.href);
  u.username = "";
  u.password = "";
  return u.href;
}

const isRedirect = (status: number) => [301, 302, 303, 307, 308].includes(status);

async function exchangeOnce(spec: HttpRequestSpec, opts: HttpExchangeOptions): Promise<HttpResponseData> {
  const { url } = spec;
  const { deadline } = opts;
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ProbeFailure("http_error", `unsupported URL scheme ${url.protocol}`);
  const hopStarted = performance.now();
  const since = () => Math.max(0, Math.round(performance.now() - hopStarted));
  const timings: CheckTimings = { dns_ms: null, connect_ms: null, tls_ms: null, ttfb_ms: null };
  const target = await resolveHost(url.hostname, deadline, opts.blockPrivate);
  if (target.ip !== target.host) timings.dns_ms = since();
  const isHttps = url.protocol === "https:";
  const where = displayUrl(url);
  const headers: Record<string, string> = { "accept-encoding": "gzip, deflate, br", "user-agent": DEFAULT_USER_AGENT };
  // lower-cased so a user's "Accept-Encoding" replaces our default instead of being sent twice
  for (const [k, v] of Object.entries(spec.headers)) headers[k.toLowerCase()] = v;
  headers.host = url.host;
  const conn = await openConnection({
    target,
    port: url.port ? Number(url.port) : isHttps ? 443 : 80,
    tls: isHttps ? { verify: opts.tlsVerify, extraCa: opts.extraCa, offer: opts.offer } : null,
    blockPrivate: opts.blockPrivate === true,
    deadline,
    endpoint: url.host,
    waitingFor: `waiting for ${where}`,
    timings,
    since,
  });
  const wire: WireRequest = { method: spec.method, url, headers, body: spec.body, where };
  const sent = (conn.protocol === "h2" ? sendOverHttp2 : sendOverHttp1)(conn, wire, deadline);
  try {
    const answer = await sent.answer;
    timings.ttfb_ms = since();
    const resolvedIp = conn.socket.remoteAddress ?? target.ip;
    const observed = { http_code: answer.status, resolved_ip: resolvedIp };
    // a followed redirect's body is never read: only its Location matters
    const wanted = opts.followRedirects === false || !(isRedirect(answer.status) && answer.headers.location);
    const read = wanted
      ? await readBody(answer, answer.headers["content-encoding"], {
          cap: opts.maxBodyBytes ?? MAX_BODY_BYTES,
          deadline,
          where,
          observed,
          onTimeout: (bytes) =>
            deadline.timedOut()
              ? new ProbeFailure("connection_timeout", `timed out reading the body of ${where}: status ${answer.status} received, ${bytes} bytes of body within the timeout`, observed)
              : deadline.failure(`waiting for ${where}`),
        })
      : { body: Buffer.alloc(0), capped: false, decodeError: null };
    return {
      status: answer.status,
      headers: answer.headers,
      ...read,
      finalUrl: url,
      resolvedIp,
      sslCert: conn.certificate?.watched ?? null,
      sslIssuer: conn.certificate?.issuer ?? null,
      timings,
    };
  } finally {
    sent.close();
    conn.socket.destroy();
  }
}

/**
 * Sends `spec`, following up to MAX_REDIRECTS redirects the way browsers do (303, and 301/302
 * after a POST, become a GET without body). Throws ProbeFailure; returns a redirect only when
 * `followRedirects` is false.
 */
export async function httpExchange(spec: HttpRequestSpec, opts: HttpExchangeOptions): Promise<HttpResponseData & { redirects: number }> {
  let current = spec;
  for (let redirects = 0; ; redirects++) {
    const follow = opts.followRedirects !== false;
    const res = await exchangeOnce(current, opts);
    const location = res.headers["location"];
    if (!follow || !isRedirect(res.status) || !location) return { ...res, redirects };
    if (redirects >= MAX_REDIRECTS) {
      throw new ProbeFailure("too_many_redirects", `more than ${MAX_REDIRECTS} redirects, last to ${location}`, { http_code: res.status, resolved_ip: res.resolvedIp });
    }
    let next: URL;
    try {
      next = new URL(location, current.url);
    } catch {
      throw new ProbeFailure("http_error", `redirect to an invalid location ${JSON.stringify(location)}`, { http_code: res.status });
    }
    const toGet = res.status === 303 || ((res.status === 301 || res.status === 302) && current.method === "POST");
    const headers = { ...current.headers };
    // credentials were meant for the original origin; never hand them to another one
    if (next.origin !== current.url.origin) for (const h of Object.keys(headers)) if (opts.credentialHeaders.includes(h.toLowerCase())) delete headers[h];
    if (toGet) for (const h of Object.keys(headers)) if (h.toLowerCase() === "content-type") delete headers[h];
    current = { method: toGet ? "GET" : current.method, url: next, headers, body: toGet ? null : current.body };
  }
}
