/**
 * One request over HTTP/2 on a TLS connection already open (http-connection.ts) whose server chose
 * h2, on node:http2 so the socket stays ours, as for the grpc probe.
 */
import http2, { type ClientHttp2Session, type IncomingHttpHeaders } from "node:http2";
import { ProbeFailure } from "../domain/check-failure.ts";
import type { Deadline } from "./deadline.ts";
import { declaredLength, flattenHeaders, MAX_HEADER_BYTES, MAX_HEADER_FIELDS, type WireAnswer, type WireRequest } from "./http-answer.ts";
import type { HttpConnection } from "./http-connection.ts";
import { toProbeFailure } from "./net-errors.ts";

/** Fields HTTP/2 forbids in a request (RFC 9113 §8.2.2); `host` becomes `:authority`. */
const CONNECTION_FIELDS = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"]);

function h2Failure(err: unknown, req: WireRequest): ProbeFailure {
  const e = err as { code?: string; message?: string };
  if (err instanceof ProbeFailure || typeof e?.code !== "string" || !e.code.startsWith("ERR_HTTP2")) return toProbeFailure(err, req.url.host);
  // Bun says no more than this when an answer's headers are over the limit
  const hint = e.code === "ERR_HTTP2_ERROR" ? `; answer headers over ${MAX_HEADER_BYTES / 1024} KiB end this way too` : "";
  return new ProbeFailure("connection_error", `the HTTP/2 exchange with ${req.url.host} failed (${e.code}: ${e.message})${hint}`);
}

/**
 * Sends `req` and resolves with the answer's status and headers once they are in; throws
 * ProbeFailure. The session is the caller's to close, through the connection's socket and `close`.
 */
export function sendOverHttp2(conn: HttpConnection, req: WireRequest, deadline: Deadline): { answer: Promise<WireAnswer>; close: () => void } {
  let session: ClientHttp2Session | null = null;
  const close = () => session?.destroy();
  const answer = new Promise<WireAnswer>((resolve, reject) => {
    let answered = false;
    let lastError: string | null = null;
    const fail = (err: unknown) => {
      if (answered) return void (lastError = (err as { code?: string }).code ?? String(err));
      deadline.signal.removeEventListener("abort", onAbort);
      reject(h2Failure(err, req));
    };
    const onAbort = () => {
      close();
      reject(deadline.failure(`waiting for ${req.where}`));
    };
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    const socket = conn.socket;
    session = http2.connect(`https://${req.url.host}`, {
      createConnection: () => socket,
      settings: { enablePush: false, maxHeaderListSize: MAX_HEADER_BYTES },
      maxHeaderListPairs: MAX_HEADER_FIELDS,
    });
    session.on("error", fail);
    const headers: Record<string, string> = { ":method": req.method, ":path": req.url.pathname + req.url.search, ":authority": req.url.host };
    for (const [k, v] of Object.entries(req.headers)) if (!CONNECTION_FIELDS.has(k) && !(k === "te" && v.toLowerCase() !== "trailers")) headers[k] = v;
    const stream = session.request(headers);
    stream.on("error", fail);
    // under Bun a stream also ends, without a reset code, when the server tears the session down
    // mid-body (GOAWAY and close): an end that finds the session already closed is not END_STREAM
    let endedWithSession = false;
    stream.once("end", () => (endedWithSession = session!.closed || session!.destroyed));
    stream.on("response", (h: IncomingHttpHeaders) => {
      answered = true;
      deadline.signal.removeEventListener("abort", onAbort);
      const status = Number(h[":status"] ?? 0);
      resolve({
        status,
        headers: flattenHeaders(h),
        stream,
        declaredLength: declaredLength(h["content-length"], req.method, status),
        // a reset stream closes with a code other than NO_ERROR
        complete: () => !endedWithSession && (stream.rstCode ?? 0) === http2.constants.NGHTTP2_NO_ERROR,
        framing: "http2",
        lastError: () => lastError ?? (stream.rstCode ? `stream closed with code ${stream.rstCode}` : endedWithSession ? "the server closed the connection" : null),
      });
    });
    stream.on("close", () => {
      if (!answered) fail(new ProbeFailure("connection_error", `${req.url.host} closed the HTTP/2 stream without an answer${stream.rstCode ? ` (code ${stream.rstCode})` : ""}`));
    });
    stream.end(req.body ?? undefined);
  });
  return { answer, close };
}
