/**
 * One request over HTTP/1.1 on a connection already open (http-connection.ts), on node:http rather
 * than fetch() so the socket is ours: connected to the judged address, its certificate readable.
 */
import http from "node:http";
import { ProbeFailure } from "../domain/check-failure.ts";
import type { Deadline } from "./deadline.ts";
import { declaredLength, flattenHeaders, MAX_HEADER_BYTES, type WireAnswer, type WireRequest } from "./http-answer.ts";
import type { HttpConnection } from "./http-connection.ts";
import { toProbeFailure } from "./net-errors.ts";

/** The failure of a request that got no answer: headers over the limit are said as such. */
function requestFailure(err: Error & { code?: string }, req: WireRequest): ProbeFailure {
  if (err.code === "HPE_HEADER_OVERFLOW") {
    return new ProbeFailure("http_error", `the response headers of ${req.where} are over ${MAX_HEADER_BYTES / 1024} KiB, more than a check reads (HPE_HEADER_OVERFLOW)`);
  }
  return toProbeFailure(err, req.url.host);
}

/**
 * Sends `req`; `answer` resolves with the status and headers once they are in, or rejects with a
 * ProbeFailure. `close` ends the request, its body read or not.
 */
export function sendOverHttp1(conn: HttpConnection, req: WireRequest, deadline: Deadline): { answer: Promise<WireAnswer>; close: () => void } {
  let close = () => {};
  const answer = new Promise<WireAnswer>((resolve, reject) => {
    let answered = false;
    let lastError: string | null = null;
    const onAbort = () => {
      request.destroy();
      reject(deadline.failure(`waiting for ${req.where}`));
    };
    const request = http.request(
      {
        createConnection: () => conn.socket,
        host: conn.socket.remoteAddress,
        port: conn.socket.remotePort,
        method: req.method,
        path: req.url.pathname + req.url.search,
        headers: req.headers,
        maxHeaderSize: MAX_HEADER_BYTES,
      },
      (res) => {
        answered = true;
        deadline.signal.removeEventListener("abort", onAbort);
        const status = res.statusCode ?? 0;
        const chunked = /\bchunked\b/i.test(String(res.headers["transfer-encoding"] ?? ""));
        const length = declaredLength(res.headers["content-length"], req.method, status);
        resolve({
          status,
          headers: flattenHeaders(res.headers),
          stream: res,
          declaredLength: length,
          complete: () => res.complete,
          framing: length !== null ? "length" : chunked ? "chunked" : "close",
          lastError: () => lastError,
        });
      },
    );
    close = () => request.destroy();
    request.on("error", (err: Error & { code?: string }) => {
      // after the answer began, an error only says how its body ended (the body reader judges it)
      if (answered) return void (lastError = err.code ?? err.message);
      deadline.signal.removeEventListener("abort", onAbort);
      reject(requestFailure(err, req));
    });
    if (deadline.signal.aborted) return onAbort();
    deadline.signal.addEventListener("abort", onAbort, { once: true });
    request.end(req.body ?? undefined);
  });
  return { answer, close };
}
