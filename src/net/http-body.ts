/**
 * Reads an answer's body to its end (docs/monitors.md, "HTTP answers"): decoded as it streams
 * (gzip, deflate zlib-wrapped or raw, brotli) and capped in decoded bytes, so a large compressed page
 * is read as the text it is and memory per check stays bounded. Reaching the cap ends the read and is
 * not a failure; a body that ends before its Content-Length or its last chunk is `body_truncated`,
 * whatever the part received holds, as curl and blackbox_exporter judge it.
 */
import zlib from "node:zlib";
import type { Transform } from "node:stream";
import { ProbeFailure } from "../domain/check-failure.ts";
import type { CheckResult } from "../domain/check-result.ts";
import type { Deadline } from "./deadline.ts";
import type { WireAnswer } from "./http-answer.ts";

export interface ReadBody {
  /** decoded body, at most the cap */
  body: Buffer;
  /** the cap was reached: `body` holds its first bytes only */
  capped: boolean;
  /** the body's content-encoding was corrupt; `body` holds what decoded before the error */
  decodeError: string | null;
}

export interface BodyReadOptions {
  cap: number;
  deadline: Deadline;
  /** the failure when the deadline fires mid-body, given the decoded bytes read so far */
  onTimeout: (bytes: number) => ProbeFailure;
  /** the URL without user info, for messages */
  where: string;
  /** kept on a body_truncated failure */
  observed: Partial<CheckResult>;
}

/** RFC 1950's header: compression method 8 and a check value that makes the pair a multiple of 31. */
function isZlibHeader(b: Buffer): boolean {
  return b.length >= 2 && (b[0]! & 0x0f) === 8 && ((b[0]! << 8) | b[1]!) % 31 === 0;
}

/**
 * The decoder for `encoding`, chosen from the body's first bytes: "deflate" is zlib-wrapped by the
 * standard, but servers send raw deflate as often, and browsers and curl read both.
 */
function decoderFor(encoding: string, head: Buffer): Transform | null {
  switch (encoding) {
    case "gzip": case "x-gzip": return zlib.createGunzip();
    case "deflate": return isZlibHeader(head) ? zlib.createInflate() : zlib.createInflateRaw();
    case "br": return zlib.createBrotliDecompress();
    default: return null;
  }
}

function cutShort(a: WireAnswer, received: number, where: string): string {
  const error = a.lastError();
  const how = error ? ` (${error})` : "";
  if (a.declaredLength !== null && received < a.declaredLength) return `the body of ${where} ended after ${received} of the ${a.declaredLength} bytes its Content-Length announced${how}`;
  if (a.framing === "chunked") return `the body of ${where} ended before its last chunk, after ${received} bytes${how}`;
  if (a.framing === "http2") return `the HTTP/2 stream of ${where} was cut after ${received} bytes of body${how}`;
  return `the body of ${where} was cut after ${received} bytes${how}`;
}

export function readBody(a: WireAnswer, encoding: string | undefined, o: BodyReadOptions): Promise<ReadBody> {
  const coding = (encoding ?? "").trim().toLowerCase();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0; // decoded bytes kept
    let received = 0; // bytes as sent
    let ended = false;
    let settled = false;
    let decoder: Transform | null | undefined; // undefined until the first bytes choose it
    let head: Buffer = Buffer.alloc(0);

    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      o.deadline.signal.removeEventListener("abort", onAbort);
      fn();
    };
    const done = (how: { capped?: boolean; decodeError?: string } = {}) =>
      finish(() => resolve({ body: Buffer.concat(chunks), capped: how.capped === true, decodeError: how.decodeError ?? null }));
    const onAbort = () => finish(() => reject(o.onTimeout(size)));
    const cut = () => finish(() => reject(new ProbeFailure("body_truncated", cutShort(a, received, o.where), o.observed)));

    const keep = (c: Buffer) => {
      if (settled) return;
      if (size + c.length >= o.cap) {
        chunks.push(c.subarray(0, o.cap - size));
        size = o.cap;
        return done({ capped: true });
      }
      chunks.push(c);
      size += c.length;
    };
    const choose = (bytes: Buffer) => {
      decoder = decoderFor(coding, bytes);
      if (!decoder) return;
      decoder.on("data", keep);
      decoder.on("end", () => done());
      decoder.on("error", (err: Error & { code?: string }) => done({ decodeError: `${encoding} decoding failed after ${size} bytes (${err.code ?? err.message})` }));
    };
    const feed = (c: Buffer) => {
      if (decoder === undefined) {
        head = Buffer.concat([head, c]);
        // deflate's two kinds are told apart by the first two bytes
        if (coding === "deflate" && head.length < 2) return;
        choose(head);
        c = head;
      }
      if (decoder) decoder.write(c);
      else keep(c);
    };

    a.stream.on("data", (c: Buffer) => {
      if (settled) return;
      received += c.length;
      feed(c);
    });
    a.stream.on("end", () => (ended = true));
    a.stream.on("error", () => cut());
    a.stream.on("close", () => {
      if (settled) return;
      if (!ended || !a.complete() || (a.declaredLength !== null && received < a.declaredLength)) return cut();
      if (decoder === undefined && head.length > 0) {
        choose(head);
        if (decoder) (decoder as Transform).write(head);
        else keep(head);
      }
      if (decoder) decoder.end();
      else done();
    });
    if (o.deadline.signal.aborted) onAbort();
    else o.deadline.signal.addEventListener("abort", onAbort, { once: true });
  });
}
