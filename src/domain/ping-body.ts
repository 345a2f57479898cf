/**
 * How much of a ping's body is read and kept (docs/heartbeats.md "Ping bodies"): a body up to
 * PING_BODY_LIMIT is accepted, its first PING_BODY_KEEP bytes read for the payload policy; a failure
 * keeps its first FAIL_BODY_KEEP bytes on its timeline event, a log's first lines rather than
 * megabytes of it.
 */
export const PING_BODY_LIMIT = 10 * 1024 * 1024;
export const PING_BODY_KEEP = 64 * 1024;
export const FAIL_BODY_KEEP = 10 * 1024;

/** The body's size when longer than the `kept` bytes of it that were kept, else null: the event's `body_bytes`. */
export function cutAt(ping: { bodyBytes: number }, kept: number): number | null {
  return ping.bodyBytes > kept ? ping.bodyBytes : null;
}

/** What a failure's event keeps of the body the job sent. */
export function failBody(body: string | null): string | null {
  if (body === null) return null;
  const bytes = Buffer.from(body);
  return bytes.byteLength <= FAIL_BODY_KEEP ? body : new TextDecoder().decode(bytes.subarray(0, FAIL_BODY_KEEP));
}
