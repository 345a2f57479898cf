/**
 * One HTTP(S) exchange with redirects, on node:http/https rather than fetch() because we need the
 * IP actually connected (`resolved_ip`), the peer certificate (`ssl_not_after`) and the moments of
 * the connection (DNS, connect, TLS, first byte). The host is resolved and judged by resolveHost and
 * the socket opened to that IP, with SNI and Host carrying the name.
 *
 * The body is decoded as it streams (gzip, deflate, brotli) and capped in decoded bytes, so a large
 * compressed page is read as the text it is, and a caller that knows what it looks for can stop the
 * read as soon as it has found it (`enough`).
 */
import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import type { Readable } from "node:stream";
import type { TLSSocket } from "node:tls";
import { ProbeFailure } from "../domain/check-failure.ts";
import type { CheckTimings } from "../domain/check-result.ts";
import type { Deadline } from "./deadline.ts";
import { certFailure, certErrorCode, toProbeFailure } from "./net-errors.ts";
import { guardSocket, resolveHost } from "./resolve-host.ts";
import { certIssuer, certNotAfter, sniFor, trustedCas } from "./tls-options.ts";

export const MAX_REDIRECTS = 10;
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
  /**
   * Called with each decoded chunk of the final answer's body; true ends the read there (the caller
   * has found what it looks for). Not called for redirects that are followed.
   */
  enough?: (chunk: Buffer) => boolean;
}


export interface HttpResponseData {
  status: number;
  headers: Record<string, string>;
  /** decoded body, at most the cap */
  body: Buffer;
  /** the cap was reached: `body` holds its first bytes only */
  truncated: boolean;
  /** the read ended early because `enough` said so */
  stoppedEarly: boolean;
  /** the body's content-encoding was corrupt; `body` holds what decoded before the error */
  decodeError: string | null;
  finalUrl: URL;
  resolvedIp: string;
  sslNotAfter: number | null;
  /** the issuer of that certificate (certIssuer) */
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

function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch ((encoding ?? "").trim().toLowerCase()) {
    case "gzip": case "x-gzip": return zlib.createGunzip();
    case "deflate": return zlib.createInflate();
    case "br": return zlib.createBrotliDecompress();
    default: return null;
  }
}

function flattenHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  return out;
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
  const port = url.port ? Number(url.port) : isHttps ? 443 : 80;
  const endpoint = `${url.host}`;
  const headers: Record<string, string> = { "accept-encoding": "gzip, deflate, br", "user-agent": DEFAULT_USER_AGENT };
  // lower-cased so a user's "Accept-Encoding" replaces our default instead of being sent twice
  for (const [k, v] of Object.entries(spec.headers)) headers[k.toLowerCase()] = v;
  headers.host = url.host;
  const requestOptions: https.RequestOptions = {
    host: target.ip,
    family: target.family,
    port,
    path: url.pathname + url.search,
    method: spec.method,
    headers,
    agent: false,
  };
  if (isHttps) {
    Object.assign(requestOptions, { servername: sniFor(target.host), rejectUnauthorized: opts.tlsVerify, ca: trustedCas(opts.extraCa) });
  }
  const cap = opts.maxBodyBytes ?? MAX_BODY_BYTES;
  const mod = isHttps ? https : http;
  return await new Promise<HttpResponseData>((resolve, reject) => {
    let settled = false;
    // set once the status line is in: a timeout after it is a slow body, and keeps the status
    let answered: { status: number; bytes: () => number } | null = null;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      deadline.signal.removeEventListener("abort", onAbort);
      fn();
    };
    const req = mod.request(requestOptions, (res) => {
      timings.ttfb_ms = since();
      const status = res.statusCode ?? 0;
      const socket = res.socket as TLSSocket | null;
      const peerCert = isHttps && socket?.getPeerCertificate ? socket.getPeerCertificate() : null;
      const sslNotAfter = certNotAfter(peerCert);
      const sslIssuer = certIssuer(peerCert);
      const chunks: Buffer[] = [];
      let size = 0;
      answered = { status, bytes: () => size };
      // a followed redirect's body is never read: only its Location matters
      const wanted = opts.followRedirects === false || !(isRedirect(status) && res.headers.location);
      const decoder = wanted ? decoderFor(res.headers["content-encoding"] as string | undefined) : null;
      const body: Readable = decoder ? res.pipe(decoder) : res;
      const done = (how: { truncated?: boolean; stoppedEarly?: boolean; decodeError?: string | null } = {}) =>
        finish(() => {
          resolve({
            status,
            headers: flattenHeaders(res.headers),
            body: Buffer.concat(chunks),
            truncated: how.truncated === true,
            stoppedEarly: how.stoppedEarly === true,
            decodeError: how.decodeError ?? null,
            finalUrl: url,
            resolvedIp: socket?.remoteAddress ?? target.ip,
            sslNotAfter,
            sslIssuer,
            timings,
          });
          req.destroy();
        });
      if (!wanted) return done();
      body.on("data", (c: Buffer) => {
        if (settled) return;
        if (size + c.length >= cap) {
          chunks.push(c.subarray(0, cap - size));
          size = cap;
          return done({ truncated: true });
        }
        chunks.push(c);
        size += c.length;
        if (opts.enough?.(c)) done({ stoppedEarly: true });
      });
      body.on("end", () => done());
      if (decoder) decoder.on("error", (err) => done({ decodeError: `${res.headers["content-encoding"]} decoding failed after ${size} bytes (${(err as { code?: string }).code ?? err.message})` }));
      res.on("error", (err) => finish(() => reject(toProbeFailure(err, endpoint))));
    });
    const onAbort = () => {
      const a = answered as { status: number; bytes: () => number } | null;
      finish(() =>
        reject(
          a && deadline.timedOut()
            ? new ProbeFailure("connection_timeout", `timed out reading the body of ${displayUrl(url)}: status ${a.status} received, ${a.bytes()} bytes of body within the timeout`, { http_code: a.status, resolved_ip: target.ip })
            : deadline.failure(`waiting for ${displayUrl(url)}`),
        ),
      );
      req.destroy();
    };
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    let tcpUp = false;
    let tlsUp = false;
    req.on("socket", (s) => {
      guardSocket(s, target.host, opts.blockPrivate === true);
      s.once("connect", () => {
        tcpUp = true;
        timings.connect_ms = since();
      });
      s.once("secureConnect", () => {
        tlsUp = true;
        timings.tls_ms = since();
      });
    });
    req.on("error", (err: Error & { code?: string }) => {
      // TCP up but no TLS session yet: the server reset, answered in plain text, or sent a
      // certificate we refuse (each said in its own words)
      const cert = certErrorCode(err.code ?? "") ? certFailure(err.code!, endpoint, target.host) : null;
      const inHandshake = isHttps && tcpUp && !tlsUp && !(err instanceof ProbeFailure) && !cert;
      const failure = cert ?? (inHandshake ? new ProbeFailure("tls_error", `TLS handshake with ${endpoint} failed (${err.code ?? "error"}: ${err.message})`) : toProbeFailure(err, endpoint));
      finish(() => reject(failure));
    });
    if (deadline.signal.aborted) onAbort();
    req.end(spec.body ?? undefined);
  });
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
