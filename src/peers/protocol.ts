/**
 * The peer protocol between a leader and its probes (docs/regions.md "Peer protocol"): paths,
 * limits and message shapes, shared by both sides so they cannot drift apart.
 *
 *   GET  /peer/v1/hello?probe_time=MS      → the peer's region, the leader's region and clock
 *   GET  /peer/v1/monitors?cursor=C&wait=S → definitions feed (full snapshot or changes since C)
 *   POST /peer/v1/results                  → a batch of results; one outcome per result
 *
 * GET /peer/v1/peers, the peers serving an account, is read with an API token (api/peers.ts).
 */
import { Type, type Static } from "@sinclair/typebox";
import { CHECK_ERROR_CODES, CHECK_STATUSES, MAX_ISSUER_LENGTH, TIMING_NAMES, type CheckResult } from "../domain/check-result.ts";
import type { ProbeMonitor } from "../domain/monitor.ts";
import { boundTrace } from "../domain/trace-bounds.ts";

export const PEER_PREFIX = "/peer/v1";

/** Results per POST; the probe also keeps a batch under MAX_BATCH_BYTES. */
export const MAX_BATCH_RESULTS = 500;
/** What the probe aims for per batch; the leader refuses bodies over MAX_RESULTS_BODY_BYTES. */
export const MAX_BATCH_BYTES = 1024 * 1024;
// below the server's own 2 MiB cap, so an oversized batch gets the API's JSON 413, not a bare one
export const MAX_RESULTS_BODY_BYTES = 1536 * 1024;
/**
 * Results stamped further ahead of the leader's clock than this are refused (clock sanity); so are
 * results stamped more than this before their monitor was created.
 */
export const MAX_FUTURE_MS = 60_000;
/** Longest error_message and degraded_reason, in characters. */
const MAX_RESULT_TEXT = 4000;
/** dns_answer: at most this many records of at most MAX_DNS_RECORD characters. */
const MAX_DNS_RECORDS = 100;
const MAX_DNS_RECORD = 1000;
const MAX_RESOLVED_IP = 100;
/** Longest a feed request waits for a change before answering "nothing new". */
export const MAX_LONG_POLL_SEC = 25;

export interface HelloResponse {
  /** the region this peer token was created for: the region the probe's results are recorded in */
  region: string;
  leader_region: string;
  /** the leader's clock, epoch ms */
  server_time: number;
  /** probe_time − server_time, when the probe sent probe_time (includes one-way network delay) */
  skew_ms: number | null;
  version: string;
}

/** One monitor as a probe receives it: the probe's view, secrets in plaintext (only on this channel). */
export interface FeedMonitor {
  id: number;
  interval_sec: number;
  monitor: ProbeMonitor | null;
  /** set when the stored definition cannot be run (bad JSON, unreadable secret); checks then fail */
  definition_error: string | null;
}

export interface FeedResponse {
  /** opaque; send it back as ?cursor= to get only what changed since */
  cursor: string;
  /** true: `monitors` is everything this region runs now, and anything else is to be dropped */
  full: boolean;
  monitors: FeedMonitor[];
  /** ids no longer run in this region (deleted, paused, moved to other regions, turned heartbeat) */
  removed: number[];
}

const nullable = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer> | ReturnType<typeof Type.Number>>(s: T) => Type.Union([s, Type.Null()]);

/**
 * Ids, times and counts from a peer: integers a double holds exactly. Larger ones name nothing and
 * would not fit the store's 64-bit columns (PostgreSQL refuses them with an error).
 */
const safeInteger = (minimum: number) => Type.Integer({ minimum, maximum: Number.MAX_SAFE_INTEGER });

/** The longest a result's latency or one of its timings can be: timeouts are at most a minute. */
const MAX_RESULT_MS = 3_600_000;

/** One result as the probe sends it: its id, the monitor, and the CheckResult (probe clock). */
export const ResultItemSchema = Type.Object(
  {
    result_uid: Type.String({ pattern: "^[A-Za-z0-9_-]{8,100}$" }),
    monitor_id: safeInteger(1),
    status: Type.Union(CHECK_STATUSES.map((s) => Type.Literal(s))),
    checked_at: safeInteger(0),
    latency_ms: nullable(Type.Number({ minimum: 0, maximum: MAX_RESULT_MS })),
    http_code: nullable(Type.Integer({ minimum: 0, maximum: 999 })),
    error_code: Type.Union([...CHECK_ERROR_CODES.map((s) => Type.Literal(s)), Type.Null()]),
    error_message: nullable(Type.String({ maxLength: MAX_RESULT_TEXT })),
    degraded_reason: nullable(Type.String({ maxLength: MAX_RESULT_TEXT })),
    resolved_ip: nullable(Type.String({ maxLength: MAX_RESOLVED_IP })),
    ssl_not_after: nullable(safeInteger(-Number.MAX_SAFE_INTEGER)),
    // optional: probes of an earlier version send none
    ssl_issuer: Type.Optional(nullable(Type.String({ maxLength: MAX_ISSUER_LENGTH }))),
    dns_answer: Type.Union([Type.Array(Type.String({ maxLength: MAX_DNS_RECORD }), { maxItems: MAX_DNS_RECORDS }), Type.Null()]),
    // an object (a probe's trace is one) of any size: one over a check's bound is cut, not refused
    synthetic_trace_json: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    // optional: probes of an earlier version send none
    timings: Type.Optional(
      Type.Union([
        Type.Object(Object.fromEntries(TIMING_NAMES.map((n) => [n, nullable(Type.Number({ minimum: 0, maximum: MAX_RESULT_MS }))])), { additionalProperties: false }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);
export type ResultItem = Static<typeof ResultItemSchema>;

export const ResultsBatchSchema = Type.Object({
  /** the probe's clock when it sent the batch: the leader's per-batch skew estimate */
  sent_at: safeInteger(0),
  /** results still spooled on the probe besides this batch */
  queue_length: safeInteger(0),
  results: Type.Array(Type.Unknown(), { maxItems: MAX_BATCH_RESULTS }),
});

/**
 * stored: recorded; duplicate: recorded earlier (a re-delivery); dropped: the leader does not want it
 * (monitor deleted, paused, not run in this region, or of an account the peer does not serve, which
 * reads as deleted) — all three are final, the probe deletes them.
 * rejected: invalid, stamped too far in the future, or too old (before the monitor was created, or
 * older than the leader keeps checks) — final too, the probe deletes and logs it.
 * retry: the leader could not store it now, or the peer's quota for this minute is used up; the
 * probe keeps it and sends it again.
 */
export type ResultOutcome = "stored" | "duplicate" | "dropped" | "rejected" | "retry";

export interface ResultAck {
  result_uid: string;
  outcome: ResultOutcome;
  reason?: string;
}

export interface ResultsResponse {
  results: ResultAck[];
  server_time: number;
}

/**
 * A probe's result cut to what the leader accepts: free text to MAX_RESULT_TEXT, dns_answer to
 * MAX_DNS_RECORDS records, the trace to the bound of one check. The leader refuses a result over
 * these limits (except the trace, which it cuts as it cuts its own), so a probe sends none.
 */
export function boundResult(r: CheckResult): CheckResult {
  const cut = (v: string | null, max: number) => (v !== null && v.length > max ? v.slice(0, max) : v);
  return {
    ...r,
    error_message: cut(r.error_message, MAX_RESULT_TEXT),
    degraded_reason: cut(r.degraded_reason, MAX_RESULT_TEXT),
    resolved_ip: cut(r.resolved_ip, MAX_RESOLVED_IP),
    dns_answer: r.dns_answer === null ? null : r.dns_answer.slice(0, MAX_DNS_RECORDS).map((a) => a.slice(0, MAX_DNS_RECORD)),
    synthetic_trace_json: boundTrace(r.synthetic_trace_json).trace,
  };
}

export function toResultItem(uid: string, monitorId: number, r: CheckResult): ResultItem {
  return { result_uid: uid, monitor_id: monitorId, ...r } as ResultItem;
}

export function fromResultItem(i: ResultItem): CheckResult {
  const { result_uid: _u, monitor_id: _m, ...r } = i;
  return { ...r, ssl_issuer: r.ssl_issuer ?? null, synthetic_trace_json: r.synthetic_trace_json ?? null, timings: (r.timings as CheckResult["timings"] | undefined) ?? null } as CheckResult;
}
