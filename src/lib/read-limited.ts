/**
 * Reads a request body up to `limit` bytes. Returns its bytes, or null when it goes past the limit:
 * the count is kept while streaming, so a chunked body or a lying Content-Length cannot make the
 * server buffer more than `limit`.
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array | null> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}
