/**
 * The body stopped before its end: the client closed the connection (or broke the framing) while
 * sending it. Nobody is left to read an answer; what matters is that the log says so.
 */
export class IncompleteBodyError extends Error {
  constructor(cause: unknown) {
    super("the connection closed before the whole body arrived", { cause });
    this.name = "IncompleteBodyError";
  }
}

/**
 * Reads a request body up to `limit` bytes. Returns its bytes, or null when it goes past the limit:
 * the count is kept while streaming, so a chunked body or a lying Content-Length cannot make the
 * server buffer more than `limit`. Throws IncompleteBodyError when the body cannot be read to its end.
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array | null> {
  const read = await readHead(request, limit, limit);
  return read ? read.head : null;
}

/**
 * Reads a request body of up to `limit` bytes keeping only its first `keep`: the rest is read and
 * dropped as it streams, so a large body costs no memory. Returns the kept bytes and the whole size,
 * or null when the body goes past `limit` (what is left of it is then bodyDrain's). Throws
 * IncompleteBodyError like readLimited.
 */
export async function readHead(request: Request, keep: number, limit: number): Promise<{ head: Uint8Array; bytes: number } | null> {
  if (!request.body) return { head: new Uint8Array(0), bytes: 0 };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((err: unknown) => {
      throw new IncompleteBodyError(err);
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // the rest is left to bodyDrain, which reads and drops it before the 413 goes out
      reader.releaseLock();
      return null;
    }
    if (kept < keep) {
      const part = value.byteLength <= keep - kept ? value : value.subarray(0, keep - kept);
      chunks.push(part);
      kept += part.byteLength;
    }
  }
  return { head: Buffer.concat(chunks), bytes: size };
}

/** Body bytes read and dropped at most before an answer; past them the answer goes out anyway. */
export const DRAIN_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * The step before every answer: reads and drops what is left of the request's body, up to
 * DRAIN_LIMIT_BYTES and half the idle timeout (README "Security", Limits).
 *
 * Bun closes the connection as soon as the answer is written when the client asked for that
 * (Connection: close) or speaks HTTP/1.0, which a Request does not tell; closing while the client is
 * still sending resets the connection, and the client reads EPIPE or a reset instead of the answer.
 * A busy server answers a body it refuses (or never reads) before the body is all in. On a
 * kept-alive connection Bun would drop the rest itself after the answer; reading it first costs that
 * client only the wait for its own body. GET and HEAD bodies Bun drops itself, out of our reach.
 *
 * @example const drain = bodyDrain(ctx.config.idleTimeoutSec); ... await drain(request); return answer;
 */
export function bodyDrain(idleTimeoutSec: number): (request: Request) => Promise<void> {
  const waitMs = (idleTimeoutSec * 1000) / 2;
  return async (request) => {
    if (request.method === "GET" || request.method === "HEAD") return;
    let reader: ReadableStreamDefaultReader<Uint8Array>;
    try {
      const body = request.body;
      // no body, or one its handler is still reading (a stream answered from it)
      if (body === null || body.locked) return;
      reader = body.getReader();
    } catch {
      return;
    }
    await dropRest(reader, DRAIN_LIMIT_BYTES, waitMs);
  };
}

async function dropRest(reader: ReadableStreamDefaultReader<Uint8Array>, bytes: number, waitMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(resolve, waitMs, null)));
  try {
    for (let left = bytes; left >= 0; ) {
      const next = await Promise.race([reader.read(), late]);
      if (next === null) break;
      if (next.done) return;
      left -= next.value.byteLength;
    }
  } catch {
    // the client went away mid-body: nobody is left to read the answer
    return;
  } finally {
    clearTimeout(timer);
  }
  await reader.cancel().catch(() => {});
}
