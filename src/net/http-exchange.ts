/**
 * One HTTP(S) exchange with redirects, on node:http/https rather than fetch() because we need the
 * IP actually connected (`resolved_ip`) and the peer certificate (`ssl_not_after`). The host is
 * resolved by us and the socket opened to that IP, with SNI and Host carrying the name.
 */
import http from "node:http";
import https from "node:https";
import zlib from "node:zlib";
import type { TLSSocket } from "node:tls";
import { raceDeadline, type Deadline } from "./deadline.ts";
import { guardSocket, resolveHost } from "./resolve-host.ts";
import { certErrorCode, toProbeFailure } from "./net-errors.ts";
import { certNotAfter, sniFor, trustedCas } from "./tls-options.ts";
import { ProbeFailure } from "../domain/check-failure.ts";

export const MAX_REDIRECTS = 10;
/** Bodies beyond this are cut: enough for keyword and JSON checks, bounded memory per check. */
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
  /** bytes of body read at most (default MAX_BODY_BYTES) */
  maxBodyBytes?: number;
}

export interface HttpResponseData {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  finalUrl: URL;
  resolvedIp: string;
  sslNotAfter: number | null;
}

/** URL without user info, for messages (user info may carry a password). */
export function displayUrl(url: URL): string {
  const u = new URL(url.href);
  u.username = "";
  u.password = "";
  return u.href;
}

function decodeBody(raw: Buffer, encoding: string | undefined): Buffer {
  try {
    switch ((encoding ?? "").trim().toLowerCase()) {
      case "gzip": case "x-gzip": return zlib.gunzipSync(raw);
      case "deflate": return zlib.inflateSync(raw);
      case "br": return zlib.brotliDecompressSync(raw);
    }
  } catch {
    // a body that does not decode is checked as sent rather than failing the check
  }
  return raw;
}

function flattenHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}

async function exchangeOnce(spec: HttpRequestSpec, opts: HttpExchangeOptions): Promise<HttpResponseData> {
  const { url } = spec;
  const { deadline } = opts;
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ProbeFailure("http_error", `unsupported URL scheme ${url.protocol}`);
  const target = await resolveHost(url.hostname, deadline, opts.blockPrivate);
  const isHttps = url.protocol === "https:";
  const port = url.port ? Number(url.port) : isHttps ? 443 : 80;
  const endpoint = `${url.host}`;
  const headers: Record<string, string> = { "accept-encoding": "gzip, deflate, br", "user-agent": "Vigil/0.1 (uptime monitor)" };
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
  const mod = isHttps ? https : http;
  return await new Promise<HttpResponseData>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      deadline.signal.removeEventListener("abort", onAbort);
      fn();
    };
    const req = mod.request(requestOptions, (res) => {
      const socket = res.socket as TLSSocket | null;
      const sslNotAfter = isHttps && socket?.getPeerCertificate ? certNotAfter(socket.getPeerCertificate()) : null;
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () =>
        finish(() => {
          resolve({
            status: res.statusCode ?? 0,
            headers: flattenHeaders(res.headers),
            body: decodeBody(Buffer.concat(chunks), res.headers["content-encoding"] as string | undefined),
            finalUrl: url,
            resolvedIp: socket?.remoteAddress ?? target.ip,
            sslNotAfter,
          });
          req.destroy();
        });
      res.on("data", (c: Buffer) => {
        chunks.push(c);
        size += c.length;
        if (size >= (opts.maxBodyBytes ?? MAX_BODY_BYTES)) done();
      });
      res.on("end", done);
      res.on("error", (err) => finish(() => reject(toProbeFailure(err, endpoint))));
    });
    const onAbort = () => {
      finish(() => reject(deadline.failure(`waiting for ${displayUrl(url)}`)));
      req.destroy();
    };
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    let tcpUp = false;
    let tlsUp = false;
    req.on("socket", (s) => {
      guardSocket(s, target.host, opts.blockPrivate === true);
      s.once("connect", () => (tcpUp = true));
      s.once("secureConnect", () => (tlsUp = true));
    });
    req.on("error", (err: Error & { code?: string }) => {
      // TCP up but no TLS session yet: the server reset or answered in plain text
      const inHandshake = isHttps && tcpUp && !tlsUp && !(err instanceof ProbeFailure) && !certErrorCode(err.code ?? "");
      const failure = inHandshake ? new ProbeFailure("tls_error", `TLS handshake with ${endpoint} failed (${err.code ?? "error"}: ${err.message})`) : toProbeFailure(err, endpoint);
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
    const res = await raceDeadline(exchangeOnce(current, opts), opts.deadline, `waiting for ${displayUrl(current.url)}`);
    const location = res.headers["location"];
    if (opts.followRedirects === false || ![301, 302, 303, 307, 308].includes(res.status) || !location) return { ...res, redirects };
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
