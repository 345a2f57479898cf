/**
 * The leader's side of the peer protocol under /peer/v1 (see ../protocol.ts). Errors use the API's
 * JSON error body; authentication is by peer token. GET /peer/v1/peers, for operators with an API
 * token, is the API's (api/peers.ts).
 */
import { Value } from "@sinclair/typebox/value";
import { Elysia } from "elysia";
import { readJsonObject } from "../../http/json-body.ts";
import { ApiError, methodNotAllowed, rateLimited, validationError } from "../../http/errors.ts";
import { stateFor } from "../../http/request-state.ts";
import { errorResponse, jsonResponse } from "../../http/respond.ts";
import type { AppContext } from "../../context.ts";
import { retryAfterSeconds } from "../../lib/fixed-window.ts";
import { recordPeerContact } from "../../store/peers.ts";
import type { PeerRow } from "../../store/tables.ts";
import { VERSION } from "../../version.ts";
import { MAX_LONG_POLL_SEC, MAX_RESULTS_BODY_BYTES, PEER_PREFIX, ResultsBatchSchema, type HelloResponse } from "../protocol.ts";
import { authenticatePeer } from "./auth.ts";
import type { MonitorChangeLog } from "./change-log.ts";
import { readFeed } from "./feed.ts";
import type { IngestBatch, ResultIngest } from "./ingest.ts";
import type { PeerResultQuota } from "./quota.ts";
import { newDetails } from "../../domain/details.ts";

/** last_seen_at from hello and feed polls is written at most this often per peer */
const TOUCH_EVERY_MS = 5000;

export interface PeerLeaderParts {
  changes: MonitorChangeLog;
  ingest: ResultIngest;
  quota: PeerResultQuota;
  /** true once the server is stopping: long-polls answer at once */
  draining: () => boolean;
}

export function peerLeaderPlugin(ctx: AppContext, parts: PeerLeaderParts) {
  const log = ctx.log.child("peers");
  const touched = new Map<number, number>();

  const touch = (peer: PeerRow, now: number, skewMs?: number) => {
    if (skewMs === undefined && now - (touched.get(peer.id) ?? 0) < TOUCH_EVERY_MS) return;
    touched.set(peer.id, now);
    ctx.writes.run((trx) => recordPeerContact(trx, peer.id, { lastSeenAt: now, skewMs })).catch((err) => log.error("recording peer contact failed", { peer_id: peer.id, error: String(err) }));
  };

  /** Bun's server: `timeout` gives one request its own idle limit */
  type Server = { timeout?(request: Request, seconds: number): void } | null;
  type Handler = (request: Request, url: URL, server: Server) => Promise<unknown>;
  const endpoint = (method: "GET" | "POST", fn: Handler) => async ({ request, server }: { request: Request; server?: Server }) => {
    const state = stateFor(request);
    const url = new URL(request.url);
    try {
      if (request.method !== method && !(method === "GET" && request.method === "HEAD")) throw methodNotAllowed(method === "GET" ? ["GET", "HEAD"] : [method]);
      const data = await fn(request, url, server ?? null);
      return jsonResponse(state, 200, { data });
    } catch (err) {
      const res = errorResponse(state, err, log, request.method, url.pathname);
      if (res.status >= 400 && res.status !== 500) log.info("peer request refused", { request_id: state.requestId, path: url.pathname, status: res.status, code: err instanceof ApiError ? err.code : undefined });
      return res;
    }
  };

  const hello: Handler = async (request, url) => {
    const peer = await authenticatePeer(ctx, request);
    const now = ctx.clock.now();
    const probeTime = Number(url.searchParams.get("probe_time"));
    const skew = url.searchParams.has("probe_time") && Number.isFinite(probeTime) ? Math.round(probeTime - now) : null;
    touch(peer, now, skew ?? undefined);
    log.info("peer hello", { peer_id: peer.id, region: peer.region, skew_ms: skew, probe_version: request.headers.get("x-vigil-version") });
    if (skew !== null) parts.ingest.warnSkew(peer, skew, now);
    const body: HelloResponse = { region: peer.region, leader_region: ctx.config.region, server_time: now, skew_ms: skew, version: VERSION };
    return body;
  };

  const monitors: Handler = async (request, url, server) => {
    const peer = await authenticatePeer(ctx, request);
    touch(peer, ctx.clock.now());
    const cursor = url.searchParams.get("cursor");
    const waitText = url.searchParams.get("wait");
    const wait = waitText === null ? 0 : Number(waitText);
    if (!Number.isInteger(wait) || wait < 0 || wait > MAX_LONG_POLL_SEC) throw validationError({ wait: [`must be an integer from 0 to ${MAX_LONG_POLL_SEC} (seconds)`] });
    let feed = await readFeed(ctx, parts.changes, peer, cursor);
    if (!feed.full && feed.monitors.length === 0 && feed.removed.length === 0 && wait > 0 && !parts.draining()) {
      // long-poll: answer on the first change (a probe follows edits within moments), or after `wait`;
      // an authenticated peer's wait may outlast --idle-timeout, which would cut the connection
      server?.timeout?.(request, Math.min(255, wait + 10));
      await parts.changes.waitForChange(wait * 1000, request.signal);
      feed = await readFeed(ctx, parts.changes, peer, cursor);
    }
    if (feed.full || feed.monitors.length || feed.removed.length) {
      log.debug("peer feed", { peer_id: peer.id, region: peer.region, full: feed.full, monitors: feed.monitors.length, removed: feed.removed.length });
    }
    return feed;
  };

  const results: Handler = async (request) => {
    const peer = await authenticatePeer(ctx, request);
    const state = stateFor(request);
    // a peer over its quota is refused before its body is read
    state.rateLimit = await parts.quota.check(peer, ctx.clock.now());
    if (!state.rateLimit.allowed) throw rateLimited(retryAfterSeconds(state.rateLimit, ctx.clock.now()));
    const body = await readJsonObject(request, MAX_RESULTS_BODY_BYTES);
    if (!Value.Check(ResultsBatchSchema, body)) {
      const details: Record<string, string[]> = newDetails();
      for (const e of Value.Errors(ResultsBatchSchema, body)) (details[e.path.replace(/^\//, "") || "body"] ??= []).push(e.message);
      throw validationError(details);
    }
    const batch = body as IngestBatch;
    const now = ctx.clock.now();
    const { granted, verdict } = await parts.quota.take(peer, batch.results.length, now);
    state.rateLimit = verdict;
    // another batch of this peer used the rest meanwhile: this one is refused whole
    if (granted === 0 && batch.results.length > 0) throw rateLimited(retryAfterSeconds(verdict, now));
    const acks = await parts.ingest.ingest(peer, batch, granted);
    return { results: acks, server_time: ctx.clock.now() };
  };

  return new Elysia({ name: "peers" })
    .all(`${PEER_PREFIX}/hello`, endpoint("GET", hello), { parse: "none" } as never)
    .all(`${PEER_PREFIX}/monitors`, endpoint("GET", monitors), { parse: "none" } as never)
    .all(`${PEER_PREFIX}/results`, endpoint("POST", results), { parse: "none" } as never);
}
