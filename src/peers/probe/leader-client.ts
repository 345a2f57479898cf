import { VERSION } from "../../version.ts";
import { PEER_PREFIX, type FeedResponse, type HelloResponse, type ResultItem, type ResultsResponse } from "../protocol.ts";

/**
 * A failed exchange with the leader. `status` null: the leader could not be reached (connection
 * refused, timeout, reset); otherwise the leader answered with this status and error code.
 */
export class LeaderError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly code: string | null,
    /** how long the leader asked us to wait (Retry-After), when it said */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }

  /** The leader refused us for a reason retrying will not fix by itself (token, region). */
  get refused(): boolean {
    return this.status === 401 || this.status === 403 || this.status === 409;
  }
}

/** Requests that can wait longer than this are the feed's long-polls, which add their own wait. */
const REQUEST_TIMEOUT_MS = 10_000;

/** The probe's side of the peer protocol: JSON over HTTP with the peer token; never logs the token. */
export class LeaderClient {
  private readonly base: string;
  constructor(leaderUrl: string, private readonly token: string) {
    this.base = leaderUrl.replace(/\/+$/, "") + PEER_PREFIX;
  }

  hello(probeTime: number): Promise<HelloResponse> {
    return this.request<HelloResponse>("GET", `/hello?probe_time=${probeTime}`, undefined, REQUEST_TIMEOUT_MS);
  }

  monitors(cursor: string | null, waitSec: number, signal?: AbortSignal): Promise<FeedResponse> {
    const q = new URLSearchParams({ wait: String(waitSec) });
    if (cursor) q.set("cursor", cursor);
    return this.request<FeedResponse>("GET", `/monitors?${q}`, undefined, REQUEST_TIMEOUT_MS + waitSec * 1000, signal);
  }

  results(batch: { sent_at: number; queue_length: number; results: ResultItem[] }, signal?: AbortSignal): Promise<ResultsResponse> {
    return this.request<ResultsResponse>("POST", "/results", JSON.stringify(batch), REQUEST_TIMEOUT_MS * 3, signal);
  }

  private async request<T>(method: string, path: string, body: string | undefined, timeoutMs: number, signal?: AbortSignal): Promise<T> {
    const signals = [AbortSignal.timeout(timeoutMs), ...(signal ? [signal] : [])];
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        body,
        headers: { authorization: `Bearer ${this.token}`, "x-vigil-version": VERSION, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
        signal: AbortSignal.any(signals),
      });
    } catch (err) {
      const e = err as Error;
      throw new LeaderError(e.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : `cannot reach the leader: ${e.message}`, null, null);
    }
    let json: { data?: T; error?: { code?: string; message?: string } } | undefined;
    try {
      json = (await res.json()) as typeof json;
    } catch {
      throw new LeaderError(`the leader answered ${res.status} without a JSON body (is --leader the leader's base URL?)`, res.status, null);
    }
    if (!res.ok || json?.data === undefined) {
      const retryAfter = Number(res.headers.get("retry-after") ?? NaN);
      const retryAfterMs = Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1000 : null;
      throw new LeaderError(`the leader answered ${res.status}: ${json?.error?.message ?? "no data"}`, res.status, json?.error?.code ?? null, retryAfterMs);
    }
    return json.data;
  }
}
