/**
 * What the HTTP/1.1 and HTTP/2 transports share: the request they send, the answer they hand back
 * (its body still to be read, see http-body.ts), and the size of answer headers they accept.
 */
import type { Readable } from "node:stream";

/**
 * Response headers read at most, in all: as much as curl and blackbox_exporter take, so a page that
 * sets a large cookie is judged like any other (docs/monitors.md, "HTTP answers").
 */
export const MAX_HEADER_BYTES = 256 * 1024;
/** Header fields of an answer read at most (HTTP/2 counts them apart from their size). */
export const MAX_HEADER_FIELDS = 2000;

export interface WireRequest {
  method: string;
  url: URL;
  /** lower-case names, `host` included */
  headers: Record<string, string>;
  body: string | null;
  /** the URL without user info, for messages */
  where: string;
}

export interface WireAnswer {
  status: number;
  /** lower-case names; repeated fields joined with ", " */
  headers: Record<string, string>;
  /** the body as sent (still encoded) */
  stream: Readable;
  /** the length the answer announced for its body, or null (none, or an answer without a body) */
  declaredLength: number | null;
  /** the transport saw the message end where its framing said; asked once the stream has closed */
  complete(): boolean;
  /** how the body was framed, for the message of a body cut short */
  framing: "length" | "chunked" | "close" | "http2";
  /** a transport error seen after the answer began ("ECONNRESET"), or null */
  lastError(): string | null;
}

/** Answers that never have a body, whatever their headers say (RFC 9110 §6.4.1). */
export function hasNoBody(method: string, status: number): boolean {
  return method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200);
}

/** Content-Length as a number, or null when absent, unreadable or meaningless for this answer. */
export function declaredLength(value: string | string[] | undefined, method: string, status: number): number | null {
  if (hasNoBody(method, status) || typeof value !== "string" || !/^\d{1,15}$/.test(value.trim())) return null;
  return Number(value.trim());
}

export function flattenHeaders(h: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined || k.startsWith(":")) continue;
    out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
  }
  return out;
}
