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
 * or null when the body goes past `limit`. Throws IncompleteBodyError like readLimited.
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
      await reader.cancel().catch(() => {});
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
