/**
 * `{heartbeat_url}/h/<token>` and its extensions (docs/heartbeats.md "Ping URLs", "Answers"):
 *   /h/<token>            a ping (GET, POST or HEAD; the token in the path is the only credential)
 *   /h/<token>/start      the job started; the next ping records how long it ran
 *   /h/<token>/fail       the job failed: the monitor goes down at once
 *   /h/<token>/<0-255>    an exit code: 0 is a ping, anything else a failure
 * The app's error handler only serves /api/v1, so this plugin answers its own errors, with the
 * API's error body.
 */
import { Elysia } from "elysia";
import { ApiError, methodNotAllowed, notFound, payloadTooLarge, rateLimited } from "../http/errors.ts";
import { freshState, stateFor, type RequestState } from "../http/request-state.ts";
import { errorResponse, standardHeaders } from "../http/respond.ts";
import type { AppContext } from "../context.ts";
import { addressBlock } from "../lib/address-block.ts";
import { FixedWindowLimiter, retryAfterSeconds } from "../lib/fixed-window.ts";
import type { PingKind, PingOutcome, PingRequest } from "../domain/heartbeat-ping.ts";
import { clientAddress, normalizeIp, trustedSet } from "../http/client-address.ts";
import { bodyDrain, readHead } from "../http/read-limited.ts";
import { PING_BODY_KEEP, PING_BODY_LIMIT } from "../domain/ping-body.ts";
import type { NativeRoute } from "../lib/service.ts";
import { replaceNul } from "../domain/text-rules.ts";


const METHODS = ["GET", "HEAD", "POST"];
/** generated tokens are base64url; anything else cannot be one, and is refused before any lookup */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{8,128}$/;
const FAIL_REASON_MAX = 200;

export interface PingIntake {
  /** a cached answer comes back synchronously: an await per ping is measurable at the rates pings come in */
  resolveToken(token: string): number | null | Promise<number | null>;
  submit(ping: PingRequest): Promise<PingOutcome>;
}

type Action = { kind: PingKind; exitCode: number | null };

function parseAction(action: string | null): Action | null {
  if (action === null) return { kind: "ping", exitCode: null };
  if (action === "start") return { kind: "start", exitCode: null };
  if (action === "fail") return { kind: "fail", exitCode: null };
  if (/^\d{1,3}$/.test(action)) {
    const code = Number(action);
    if (code > 255) return null;
    return { kind: code === 0 ? "ping" : "fail", exitCode: code };
  }
  return null;
}

const tokenNotFound = () => new ApiError(404, "not_found", "no heartbeat monitor has this token (a rotated token stops working at once)");


/**
 * The ping endpoint twice over: as native Bun.serve routes (what the server listens with) and as an
 * Elysia plugin (the same handler, for app.handle and for a server built without the native routes).
 *
 * Why native routes: through Elysia (its router, the context it builds and the app's global
 * onRequest hooks) a trivial /h/:token handler answered far fewer requests a second than through
 * Bun.serve's router; on the ping path Elysia was the largest cost after SQLite (BENCHMARKS.md,
 * heartbeat: "Figures behind the ping path's code").
 */
export function heartbeatEndpoint(ctx: AppContext, intake: PingIntake): { plugin: ReturnType<typeof pluginFor>; routes: Record<string, NativeRoute> } {
  const handle = pingHandler(ctx, intake);
  // native routes skip the app's hooks, so the rest of a body is drained here (bodyDrain); a GET or
  // HEAD has none we could read, and the hot path stays one promise
  const drain = bodyDrain(ctx.config.idleTimeoutSec);
  const native = (withAction: boolean): NativeRoute => (request, server) => {
    const answer = handle(request, freshState(request), server.requestIP(request)?.address ?? null, request.params.token!, withAction ? request.params.action! : null);
    return request.method === "GET" || request.method === "HEAD" ? answer : answer.then(async (res) => {
      await drain(request);
      return res;
    });
  };
  return { plugin: pluginFor(handle), routes: { "/h/:token": native(false), "/h/:token/:action": native(true) } };
}

type Handle = (request: Request, state: RequestState, socketIp: string | null, token: string, action: string | null) => Promise<Response>;

function pluginFor(handle: Handle) {
  type RouteCtx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null; params: Record<string, string> };
  const route = (withAction: boolean) => ({ request, server, params }: RouteCtx) =>
    handle(request, stateFor(request), server?.requestIP(request)?.address ?? null, params.token!, withAction ? params.action! : null);
  // parse "none": the body is read here, capped at 64 KiB, not by Elysia
  return new Elysia({ name: "heartbeat" })
    .all("/h/:token", route(false) as never, { parse: "none" } as never)
    .all("/h/:token/:action", route(true) as never, { parse: "none" } as never);
}

function pingHandler(ctx: AppContext, intake: PingIntake): Handle {
  const log = ctx.log.child("heartbeat");
  const ipLimiter = new FixedWindowLimiter<string>(60_000);
  const tokenLimiter = new FixedWindowLimiter<string>(60_000);
  const trusted = trustedSet(ctx.config.trustedProxies);
  const peers = new PeerAddresses();
  const debug = log.level === "debug";

  // The hot path allocates only what the answer needs: a ping costs a few times the CPU of Bun.serve
  // alone (BENCHMARKS.md, heartbeat), and every object per ping is also garbage to collect.
  async function handle(request: Request, state: RequestState, socketIp: string | null, token: string, action: string | null): Promise<Response> {
    try {
      const method = request.method;
      if (method !== "GET" && method !== "POST" && method !== "HEAD") throw methodNotAllowed(METHODS);
      const parsed = action === null ? PLAIN_PING : parseAction(action);
      if (!parsed) throw notFound("endpoint");
      const peer = peers.normalize(socketIp);
      // X-Forwarded-For is read only from a trusted proxy
      const sourceIp = peer !== null && trusted.has(peer) ? clientAddress(peer, request.headers.get("x-forwarded-for"), trusted) : peer;
      const now = ctx.clock.now();
      // Per address first (an IPv6 one's /64), and for every request, so guessing tokens is as
      // limited as using them.
      const block = sourceIp === null ? "unknown" : addressBlock(sourceIp);
      if (!ipLimiter.take(block, ctx.config.pingLimitIp, now)) throw rateLimited(retryAfterSeconds(ipLimiter.hit(block, ctx.config.pingLimitIp, now), now));
      const body = request.body;
      if (body !== null && Number(request.headers.get("content-length") ?? "0") > PING_BODY_LIMIT) throw payloadTooLarge(PING_BODY_LIMIT);
      if (!TOKEN_SHAPE.test(token)) throw tokenNotFound();
      const resolved = intake.resolveToken(token);
      const monitorId = resolved instanceof Promise ? await resolved : resolved;
      if (monitorId === null) throw tokenNotFound();
      if (!tokenLimiter.take(token, ctx.config.pingLimitToken, now)) throw rateLimited(retryAfterSeconds(tokenLimiter.hit(token, ctx.config.pingLimitToken, now), now));
      let text: string | null = null;
      let bodyBytes = 0;
      if (body !== null) {
        // a log sent whole (`curl --data-binary @log URL/$?`) is a ping all the same: its first
        // PING_BODY_KEEP bytes are read, the rest is read and dropped
        const read = await readHead(request, PING_BODY_KEEP, PING_BODY_LIMIT);
        if (read === null) throw payloadTooLarge(PING_BODY_LIMIT);
        bodyBytes = read.bytes;
        // no stored text holds a NUL (docs/api-rules.md "Text"): a job's output may, and is kept with U+FFFD
        if (read.head.byteLength > 0) text = replaceNul(new TextDecoder().decode(read.head));
      }
      const failReason = parsed.kind !== "fail" ? null : parsed.exitCode !== null ? `exit code ${parsed.exitCode}` : failText(text);
      const outcome = await intake.submit({ monitorId, token, kind: parsed.kind, sourceIp, body: text, bodyBytes, failReason, exitCode: parsed.exitCode });
      if (outcome.result === "not_found") throw tokenNotFound();
      if (debug) log.debug("ping", { monitor_id: monitorId, kind: parsed.kind, result: outcome.result, source_ip: sourceIp, request_id: state.requestId });
      return ok(state, method, outcome.result === "rejected" ? JSON.stringify({ result: "rejected", reason: outcome.reason }) : PLAIN_ANSWERS[outcome.result]);
    } catch (err) {
      if (err instanceof ApiError && (err.status === 404 || err.status === 429)) ctx.metrics.pings.inc({ result: err.status === 404 ? "not_found" : "rate_limited" });
      const path = redactToken(new URL(request.url).pathname);
      // 404 and 429 are counted in the metrics; a wrong method or an oversized body is a sender to fix
      if (err instanceof ApiError && (err.status === 405 || err.status === 413)) log.info("ping refused", { request_id: state.requestId, method: request.method, path, status: err.status, code: err.code });
      return errorResponse(state, err, log, request.method, path);
    }
  }

  return handle;
}

const PLAIN_PING: Action = { kind: "ping", exitCode: null };

/**
 * The socket's address as normalizeIp gives it, remembered: a ping sender keeps its address, and
 * normalizing (regular expressions, isIP) was measurable per ping. Bounded: the map is dropped
 * whole when it fills, as a flood of new addresses would only make it a cost.
 */
class PeerAddresses {
  private known = new Map<string, string | null>();
  normalize(raw: string | null): string | null {
    if (raw === null) return null;
    let ip = this.known.get(raw);
    if (ip === undefined) {
      if (this.known.size >= 10_000) this.known.clear();
      this.known.set(raw, (ip = normalizeIp(raw)));
    }
    return ip;
  }
}

const PLAIN_ANSWERS = { accepted: JSON.stringify({ result: "accepted" }), ignored: JSON.stringify({ result: "ignored" }) };

function ok(state: RequestState, method: string, body: string): Response {
  return new Response(method === "HEAD" ? null : body, { headers: standardHeaders(state) });
}

/** The first line of a /fail body, if any, says why; otherwise a generic reason. */
function failText(body: string | null): string {
  const line = body?.trim().split(/\r?\n/, 1)[0]?.trim();
  if (!line) return "the job reported a failure";
  return line.length > FAIL_REASON_MAX ? line.slice(0, FAIL_REASON_MAX - 3) + "..." : line;
}

/** The token is a credential: it is never written to a log line. */
function redactToken(path: string): string {
  return path.replace(/^\/h\/[^/]+/, "/h/<token>");
}
